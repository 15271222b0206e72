import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection } from './runtime/projection.ts';
import { snakeKeys } from '../infra/store/snake-keys.ts';

/** Refused records, so operators can query what was refused, where and why. */
export const deadLettersProjection = defineProjection({
  name: 'dead_letters',
  topics: [TOPICS.deadLetters.name],
  tables: ['dead_letters'],
  toRows: (letter) => [
    {
      table: 'dead_letters',
      row: {
        // JSON keeps the parts apart whatever characters a file name or stage holds.
        id: JSON.stringify([letter.source, letter.partition, letter.offset, letter.line, letter.stage]),
        ...snakeKeys(letter),
        payload: letter.payload === null ? null : letter.payload.toString('base64'),
      },
    },
  ],
});

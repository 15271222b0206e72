import { jsonText } from '../infra/store/json-text.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection } from './runtime/projection.ts';

/** API keys by id; every event carries the whole key, so the latest one is the row. */
export const apiKeysProjection = defineProjection({
  name: 'api-keys',
  topics: [TOPICS.keys.name],
  tables: ['api_keys'],
  toRows: (event) => [
    {
      table: 'api_keys',
      row: {
        key_id: event.keyId,
        ts: event.ts,
        hash: event.keyHash,
        name: event.name,
        plan: event.plan,
        scopes: jsonText(event.scopes),
        created_at: event.createdAt,
        revoked_at: event.action === 'revoke' ? event.ts : null,
        team_id: event.teamId,
      },
    },
  ],
});

/** Teams by id, from their creation events. */
export const teamsProjection = defineProjection({
  name: 'teams',
  topics: [TOPICS.teams.name],
  tables: ['teams'],
  toRows: (event) => [{ table: 'teams', row: { team_id: event.teamId, ts: event.ts, name: event.name } }],
});

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestCommand } from '../../cli/commands/ingest.ts';
import { loadConfig } from '../../infra/config.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { DeadLetter } from '../../schemas/records.ts';
import { fuzzRuns, hostileJson, hostileText } from '../helpers/fuzz.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { sink } from '../helpers/sink.ts';

/**
 * Fuzzed ingest files: rows of the shipped samples with fields replaced by hostile values,
 * removed or added, and lines that are not JSON, then one good row. `tqa ingest` never
 * throws; every row is accepted or dead-lettered with its line, payload and a reason; and
 * the good row after them all is in its topic.
 */

const SAMPLES = join(import.meta.dirname, '../fixtures/samples');
const KINDS = [
  { kind: 'posts', topic: TOPICS.posts.name, sample: 'posts.ndjson', idField: 'postId' },
  { kind: 'tokens', topic: TOPICS.tokens.name, sample: 'tokens.ndjson', idField: 'tokenId' },
  { kind: 'market', topic: TOPICS.market.name, sample: null, idField: 'tokenId' },
] as const;

/** A good market tick; the market sample is CSV. */
const TICK = { tokenId: 'tk_Z60ijKLe8Gr8', ts: '2025-01-01T00:01:00Z', priceUsd: 0.00412, volumeUsd: 1830.5, liquidityUsd: 152000, marketCapUsd: 4120000, trades: 4 };

let dir: string;
let samples: Record<string, Record<string, unknown>>;
let run = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-ingest-fuzz-'));
  samples = { market: TICK };
  for (const k of KINDS) {
    if (k.sample) samples[k.kind] = JSON.parse((await readFile(join(SAMPLES, k.sample), 'utf8')).split('\n')[0]) as Record<string, unknown>;
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A line of a file of this kind: the sample with one field replaced, removed or added, or a line that is not a row. */
function lineOf(sample: Record<string, unknown>): fc.Arbitrary<string> {
  const fields = Object.keys(sample);
  return fc.oneof(
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...fields), hostileJson).map(([f, v]) => JSON.stringify({ ...sample, [f]: v })) },
    { weight: 1, arbitrary: fc.constantFrom(...fields).map((f) => JSON.stringify({ ...sample, [f]: undefined })) },
    { weight: 1, arbitrary: fc.tuple(hostileText, hostileJson).map(([f, v]) => JSON.stringify({ ...sample, [f]: v })) },
    { weight: 1, arbitrary: hostileJson.map((v) => JSON.stringify(v) ?? 'undefined') },
    // One line: a newline inside would make two rows of it.
    { weight: 1, arbitrary: hostileText.map((t) => t.replace(/[\r\n]/g, ' ')) },
  );
}

describe('fuzzed ingest files', () => {
  it.each(KINDS)('dead-letters each bad $kind row with its reason and loses no row after them', async ({ kind, topic, idField }) => {
    const dataDir = join(dir, kind);
    const config = loadConfig({ TQA_DATA_DIR: dataDir });
    await fc.assert(
      fc.asyncProperty(fc.array(lineOf(samples[kind]), { minLength: 1, maxLength: 8 }), async (lines) => {
        const name = `fuzz-${++run}.ndjson`;
        const last = JSON.stringify({ ...samples[kind], [idField]: `${idField === 'postId' ? 'po' : 'tk'}_last${run}` });
        const all = [...lines, last];
        await writeFile(join(dir, name), all.join('\n') + '\n');
        const out = sink();
        const err = sink();
        const code = await ingestCommand.run([join(dir, name), '--kind', kind], { config, logger: silentLogger, stdout: out.stream, stderr: err.stream });

        const { log, codec } = await openEmbedded(dataDir);
        try {
          const letters = await Promise.all(
            (await readTopic(log, TOPICS.deadLetters.name)).filter((r) => r.key === name).map(async (r) => (await codec.decode(TOPICS.deadLetters.name, r.value!)) as DeadLetter),
          );
          const rows = all.filter((l) => l.trim() !== '').length;
          const accepted = rows - letters.length;
          expect(out.text()).toContain(`${rows} rows, ${accepted} accepted, ${letters.length} rejected`);
          expect(code).toBe(letters.length === 0 ? 0 : 1);
          for (const letter of letters) {
            expect(letter.reason, JSON.stringify(letter)).toMatch(/\S/);
            expect(letter.payload?.toString('utf8')).toBe(all[(letter.line ?? 0) - 1]);
          }
          expect(letters.map((l) => l.line)).not.toContain(all.length);
          const keys = (await readTopic(log, topic)).map((r) => r.key);
          expect(keys).toContain(JSON.parse(last)[idField]);
        } finally {
          await log.close();
        }
      }),
      fuzzRuns(25),
    );
  });
});

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deserialize } from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import { waitFor } from '../../infra/wait.ts';
import { eventStudyResult, refreshEventStudies, refreshTime } from '../../research/event-studies/compute.ts';
import { EVENT_STUDIES } from '../../research/event-studies/studies.ts';
import type { HistorySource } from '../../research/history/source.ts';
import { storeHistory } from '../../research/history/store.ts';
import { embeddedStore, HOUR, T0 } from '../../research/history/testing/given.ts';
import { smallWorld, WORLD_END } from '../../research/history/testing/world.ts';
import { EventStudyRefresher } from '../../research/runner/event-study-refresher.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { EventStudyRecord } from '../../schemas/records.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';

/**
 * The event-study refresher's checkpoint: a restart continues from the saved state, reading
 * only the history since, to the figures a computation from the start gives; a checkpoint that
 * cannot be read only makes the start slower.
 */

let dir: string;
let log: FileEventLog;
let codec: Codec;
let history: HistorySource;
let closeStore: () => Promise<void>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-event-studies-'));
  ({ log, codec } = await openEmbedded(dir));
  const world = smallWorld(11);
  const store = await embeddedStore(world.snapshots, world.tokens);
  history = storeHistory(store);
  closeStore = () => store.close();
});

afterAll(async () => {
  await closeStore?.();
  await log?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The history as if it ended at `until`, noting where each candidates scan starts. */
function endingAt(until: number, scansFrom: number[]): HistorySource {
  return {
    ...history,
    bounds: async () => {
      const bounds = await history.bounds();
      return bounds && { first: bounds.first, last: Math.min(bounds.last, until) };
    },
    candidates(query, options) {
      scansFrom.push(query.from);
      return history.candidates(query, options);
    },
  };
}

async function recorded(asOf: number): Promise<EventStudyRecord[]> {
  const all = await Promise.all((await readTopic(log, TOPICS.eventStudies.name)).map((r) => codec.decode(r.topic, r.value!) as Promise<EventStudyRecord>));
  return all.filter((r) => r.asOf === asOf);
}

/** Runs a refresher over the history ending at `until` until its checkpoint is of that hour (saved after the hour's results are in the log). */
async function refreshTo(until: number, checkpointFile: string): Promise<number[]> {
  const scansFrom: number[] = [];
  const refresher = new EventStudyRefresher({ log, codec, history: endingAt(until, scansFrom), logger: silentLogger, pollMs: 20, checkpointFile });
  await refresher.start();
  const asOf = refreshTime(until);
  // Null while there is none, or it is not (yet) a checkpoint.
  const savedAsOf = async () => {
    try {
      return (deserialize(await readFile(checkpointFile)) as { state: { asOf: number } }).state.asOf;
    } catch {
      return null;
    }
  };
  await waitFor(async () => (await savedAsOf()) === asOf, `the studies as of ${asOf}`);
  await refresher.stop();
  return scansFrom;
}

describe('the event-study refresher', () => {
  it('continues after a restart from its checkpoint, to the figures a computation from the start gives', async () => {
    const file = join(dir, 'state', 'event-studies.v8');
    const halfway = T0 + 24 * HOUR + 1;
    const firstScans = await refreshTo(halfway, file);
    expect(Math.min(...firstScans)).toBe(T0);

    const end = WORLD_END - 1;
    const resumedScans = await refreshTo(end, file);
    // Every scan starts past what the first run covered: none from the history's start.
    expect(Math.min(...resumedScans)).toBeGreaterThan(refreshTime(halfway));
    const whole = await refreshEventStudies(null, endingAt(end, []), refreshTime(end));
    expect(await recorded(refreshTime(halfway))).toHaveLength(EVENT_STUDIES.length);
    const results = new Map((await recorded(refreshTime(end))).map((r) => [r.slug, JSON.parse(r.result)]));
    expect(results.size).toBe(EVENT_STUDIES.length);
    for (const study of EVENT_STUDIES) expect(results.get(study.slug)).toEqual(JSON.parse(JSON.stringify(eventStudyResult(whole, study))));
  });

  it('rebuilds from the start of history when its checkpoint cannot be read, and saves a good one', async () => {
    const file = join(dir, 'state', 'corrupt.v8');
    await refreshTo(T0 + 12 * HOUR + 1, file);
    await writeFile(file, 'not a checkpoint');
    const scans = await refreshTo(T0 + 14 * HOUR + 1, file);
    expect(Math.min(...scans)).toBe(T0);
    expect((deserialize(await readFile(file)) as { version: number }).version).toBe(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { SNAPSHOT_GRID_MS } from '../../processors/quant-engine/features/features.ts';
import { cohortsProjection } from '../../projections/cohorts.ts';
import { latestSnapshotsProjection, snapshotHistoryProjection } from '../../projections/latest-snapshots.ts';
import { settledSnapshotTime, snapshotHistoryRange } from '../../projections/read-models/as-of.ts';
import { getCohort, latestCohortChange, latestMention, listCohorts } from '../../projections/read-models/cohorts.ts';
import { getNarrative, heatmap, settledBucketClose, narrativeMap, rotation } from '../../projections/read-models/narratives.ts';
import { scan, type ScanQuery } from '../../projections/read-models/scan.ts';
import { activeSignalsOn, getSignal } from '../../projections/read-models/signals.ts';
import { listTokens, snapshotAsOf, latestSnapshot } from '../../projections/read-models/tokens.ts';
import type { AnyProjection, RecordMeta } from '../../projections/runtime/projection.ts';
import { signalsProjection } from '../../projections/signals.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import type { CohortVersion } from '../../schemas/records/quant-social.ts';
import { signal, snapshot, type MigratedStoreFactory } from './read-models-quant.contract.ts';
import { bucketRow, metricsRow } from './read-models-social.contract.ts';
import { storeReads, type ServedReads } from './served-reads.ts';

/**
 * Reads as of a past time against a real store: a run writes through the projections' own
 * row mappers step by step, the live answers are recorded after each step, and once the run
 * has moved on every read asked again with the `as_of` its live answer reported must give the
 * same answer. Times sit on whole hours so narrative buckets close on steps.
 */

const H = 3_600_000;
const STEP = 30 * 60_000;
const T0 = 1_700_006_400_000;
const STEPS = 8;
const TOKENS = ['tk_a', 'tk_b', 'tk_c', 'tk_d', 'tk_e', 'tk_f'];

const meta = (topic: string, timestamp: number): RecordMeta => ({ topic, partition: 0, offset: 0, key: null, timestamp });

async function project(store: AnalyticalStore<ProjectionTables>, projection: AnyProjection, values: unknown[], topic: string, ts: number) {
  for (const value of values) {
    for (const r of projection.toRows(value as never, meta(topic, ts))) await store.upsert(r.table, [r.row]);
  }
}

/** The snapshot of a token at step `i`: scores move every step, so a sort by momentum reorders. */
function snapshotAt(tokenId: string, i: number): QuantSnapshot {
  const k = TOKENS.indexOf(tokenId);
  const ts = T0 + i * STEP;
  const value = snapshot(tokenId, {
    ts,
    scores: { momentum: (i * 37 + k * 53) % 100, crowding: k === 2 ? null : (i * 11 + k * 7) % 100 },
    features: { unique_authors_1h: i + k },
    chain: k % 2 === 0 ? 'solana' : 'base',
  });
  return { ...value, snapshotId: `snap_${Buffer.from(`${tokenId}@${ts}`).toString('hex')}` };
}

function cohortVersion(version: number, ts: number, over: Partial<CohortVersion> = {}): CohortVersion {
  return {
    cohortId: 'cohort_mine',
    kind: 'manual',
    name: 'mine',
    ownerKeyId: 'key_a',
    teamId: null,
    members: [{ authorId: 'a1', handle: 'Alice' }],
    version,
    ts,
    rule: 'manual',
    deleted: false,
    commandId: null,
    ...over,
  };
}

/** Everything the engine would have written up to and including step `i`. */
async function writeStep(store: AnalyticalStore<ProjectionTables>, i: number): Promise<void> {
  const ts = T0 + i * STEP;
  // tk_f only every other step (an hour apart, the engine's longest gap); tk_e is listed at step 2.
  const present = TOKENS.filter((t) => (t !== 'tk_f' || i % 2 === 0) && (t !== 'tk_e' || i >= 2));
  const snaps = present.map((t) => snapshotAt(t, i));
  await project(store, latestSnapshotsProjection, snaps, 'quant.snapshots-latest', ts);
  await project(store, snapshotHistoryProjection, snaps, 'quant.snapshots', ts);

  // A signal fires each step on a token in turn and ends two steps later: the end record replaces the fire record.
  const fired = signal(i + 1, { tokenId: TOKENS[i % 3], firedAt: ts, scores: { momentum: 40 + i } });
  const ending: Signal[] = [];
  if (i >= 2) {
    const before = signal(i - 1, { tokenId: TOKENS[(i - 2) % 3], firedAt: ts - 2 * STEP, scores: { momentum: 38 + i } });
    ending.push({ ...before, status: 'ended', endedAt: ts, endReason: 'conditions_lapsed', version: 2, ts });
  }
  await project(store, signalsProjection, [fired, ...ending], 'quant.signals', ts);

  await store.upsert('author_metrics', [metricsRow(i + 1, ts, (i % 5) / 10)]);
  if (i === 1) await project(store, cohortsProjection, [cohortVersion(1, ts)], 'quant.cohorts', ts);
  if (i === 3) await project(store, cohortsProjection, [cohortVersion(2, ts, { members: [{ authorId: 'a2', handle: 'Bob' }] })], 'quant.cohorts', ts);
  if (i === 6) await project(store, cohortsProjection, [cohortVersion(3, ts, { deleted: true })], 'quant.cohorts', ts);
  await store.upsert('mentions', [
    {
      mention_id: `mn_${i}`,
      post_id: `p${i}`,
      author_id: i < 3 ? 'a1' : 'a2',
      author_handle: i < 3 ? 'Alice' : 'Bob',
      token_id: TOKENS[i % 3],
      ref: TOKENS[i % 3],
      ref_kind: 'id',
      post_kind: 'post',
      engagement: 0,
      ts,
    },
  ]);
  // An hourly narrative bucket closes on every whole hour.
  if (i > 0 && (ts - T0) % H === 0) {
    const hour = (ts - T0) / H - 1;
    await store.upsert('narrative_buckets', [
      { ...bucketRow('ai-agents', hour, { mentions: 1 + hour, total: 4 + hour, theses: hour, authorIds: ['a1'] }), bucket_start: T0 + hour * H, ts },
      { ...bucketRow('memes', hour, { mentions: 3, total: 4 + hour, theses: 2, authorIds: ['a2', 'a3'] }), bucket_start: T0 + hour * H, ts },
    ]);
  }
}

type Read = (asOf: number | undefined) => Promise<unknown>;

export function describeAsOfReadModelContract(name: string, factory: MigratedStoreFactory): void {
  describe(`reads as of a past time: ${name}`, () => {
    let store: AnalyticalStore<ProjectionTables>;
    let cleanup: (() => Promise<void>) | undefined;
    let served: ServedReads;
    /** Per read: what it answered live after each step, with the time that answer reported. */
    const recorded = new Map<string, { asOf: number; answer: unknown }[]>();

    const scanQuery: ScanQuery = { rules: [{ field: 'momentum', op: '>=', value: 20 }], sort: 'crowding', sortDir: 'asc', limit: 50 };
    const viewer = { viewerKeyId: 'key_a', viewerTeamId: null };

    /**
     * Each read twice: live (asOf undefined), reporting its as_of, and as of a time. A read
     * whose live answer has no as_of of its own is given the time it reports by `liveAsOf`.
     */
    const reads: Record<string, { read: Read; liveAsOf: (answer: unknown) => Promise<number | null> | number | null }> = {
      tokens: {
        read: async (asOf) => listTokens(store, { sort: 'momentum', dir: 'desc', limit: 100, asOf }),
        liveAsOf: (a) => (a as { asOf: number | null }).asOf,
      },
      'tokens by crowding on base': {
        read: async (asOf) => listTokens(store, { sort: 'crowding', dir: 'asc', limit: 100, chain: 'base', asOf }),
        liveAsOf: (a) => (a as { asOf: number | null }).asOf,
      },
      scan: {
        read: async (asOf) => scan(store, scanQuery, asOf ?? (await settledSnapshotTime(store))),
        liveAsOf: () => settledSnapshotTime(store),
      },
      'signal feed': {
        read: async (asOf) => served.signalFeed({ status: 'all', limit: 100, asOf }),
        liveAsOf: (a) => (a as { asOf: number | null }).asOf,
      },
      'active signals': {
        read: async (asOf) => served.signalFeed({ status: 'active', limit: 100, asOf }),
        liveAsOf: (a) => (a as { asOf: number | null }).asOf,
      },
      'one signal': { read: async (asOf) => getSignal(store, 'sig_000002', asOf), liveAsOf: (a) => (a as { asOf: number } | null)?.asOf ?? null },
      'token snapshot': {
        read: async (asOf) => (asOf === undefined ? latestSnapshot(store, 'tk_f') : snapshotAsOf(store, 'tk_f', asOf)),
        liveAsOf: (a) => (a as QuantSnapshot | null)?.ts ?? null,
      },
      'author metrics': { read: async (asOf) => served.authorMetrics('@alice', asOf), liveAsOf: (a) => (a as { ts: number } | null)?.ts ?? null },
      cohorts: { read: async (asOf) => listCohorts(store, { ...viewer, kind: 'all' }, asOf), liveAsOf: () => latestCohortChange(store) },
      'active signals of a cohort': {
        read: async (asOf) => activeSignalsOn(store, ['tk_a', 'tk_b'], 100, asOf ?? (await latestMention(store)) ?? undefined),
        liveAsOf: () => latestMention(store),
      },
      // Live, as the API reads them: as of the settled close of the buckets.
      narratives: { read: async (asOf) => narrativeMap(store, asOf ?? (await settledBucketClose(store)) ?? undefined), liveAsOf: () => settledBucketClose(store) },
      narrative: {
        read: async (asOf) => getNarrative(store, 'memes', asOf ?? (await settledBucketClose(store)) ?? undefined),
        liveAsOf: () => settledBucketClose(store),
      },
      rotation: { read: async (asOf) => rotation(store, '24h', asOf ?? (await settledBucketClose(store)) ?? undefined), liveAsOf: () => settledBucketClose(store) },
      heatmap: {
        read: async (asOf) =>
          heatmap(store, { metric: 'author_growth', bucket: '1h', range: '48h' }, asOf ?? (await settledBucketClose(store)) ?? undefined),
        liveAsOf: () => settledBucketClose(store),
      },
    };

    beforeAll(async () => {
      const opened = await factory();
      ({ store, cleanup } = opened);
      served = opened.served ?? storeReads(store);
      for (let i = 0; i < STEPS; i++) {
        await writeStep(store, i);
        for (const [label, { read, liveAsOf }] of Object.entries(reads)) {
          const answer = await read(undefined);
          const asOf = await liveAsOf(answer);
          if (asOf === null) continue;
          recorded.set(label, [...(recorded.get(label) ?? []), { asOf, answer }]);
        }
      }
    });

    afterAll(async () => {
      await cleanup?.();
    });

    it('records live answers at every step of the run', () => {
      expect([...recorded.keys()].sort()).toEqual(Object.keys(reads).sort());
      expect(recorded.get('tokens')).toHaveLength(STEPS);
      // The run changed the answers: otherwise asking as of a past time would prove nothing.
      const tokens = recorded.get('tokens')!.map((r) => JSON.stringify(r.answer));
      expect(new Set(tokens).size).toBe(STEPS);
    });

    for (const label of Object.keys(reads)) {
      it(`${label}: as of the time a live answer reported, the same answer once the run moved on`, async () => {
        for (const { asOf, answer } of recorded.get(label)!) {
          expect(await reads[label].read(asOf), `${label} as of ${new Date(asOf).toISOString()}`).toEqual(answer);
        }
      });
    }

    it('shows a signal that ended later as active then, and the snapshot in effect between two of a token', async () => {
      // sig_000002 fired at step 1 and ended at step 3.
      const second = await getSignal(store, 'sig_000002', T0 + 3 * STEP);
      expect(second?.signal).toMatchObject({ status: 'ended', endedAt: T0 + 3 * STEP, version: 2 });
      expect((await getSignal(store, 'sig_000002', T0 + 3 * STEP - 1))?.signal).toMatchObject({ status: 'active', endedAt: null, endReason: null, version: 1 });
      expect(await getSignal(store, 'sig_000002', T0 + STEP - 1)).toBeNull();
      expect((await snapshotAsOf(store, 'tk_f', T0 + 3 * STEP))?.ts).toBe(T0 + 2 * STEP);
      expect(await snapshotAsOf(store, 'tk_e', T0 + STEP)).toBeNull();
    });

    it('knows the range of the history, and the time up to which every snapshot is stored', async () => {
      expect(await snapshotHistoryRange(store)).toEqual({ first: T0, latest: T0 + (STEPS - 1) * STEP });
      // The newest step may still be partly on its way: the step of the grid before it is complete.
      expect(await settledSnapshotTime(store)).toBe(T0 + (STEPS - 1) * STEP - SNAPSHOT_GRID_MS);
    });

    it('gives a cohort as of a time: its version then, none before it existed or after its deletion', async () => {
      expect((await getCohort(store, 'cohort_mine', viewer, 10, T0 + 4 * STEP))?.members).toEqual([{ authorId: 'a2', handle: 'Bob' }]);
      expect((await getCohort(store, 'cohort_mine', viewer, 10, T0 + 2 * STEP))?.members).toEqual([{ authorId: 'a1', handle: 'Alice' }]);
      expect(await getCohort(store, 'cohort_mine', viewer, 10, T0)).toBeNull();
      expect(await getCohort(store, 'cohort_mine', viewer, 10, T0 + 6 * STEP)).toBeNull();
    });

    // Last: it moves the run on.
    it('pages a live listing as of its first page while new steps move every sort value, visiting each token exactly once', async () => {
      let next = STEPS;
      for (const dir of ['desc', 'asc'] as const) {
        const first = await listTokens(store, { sort: 'momentum', dir, limit: 2 });
        const asOf = first.asOf;
        expect(asOf).toBe(T0 + (next - 1) * STEP - SNAPSHOT_GRID_MS);
        const seen = first.rows.map((r) => r.tokenId);
        let cursor = first.nextCursor;
        while (cursor !== null) {
          await writeStep(store, next++);
          const page = await listTokens(store, { sort: 'momentum', dir, limit: 2, cursor });
          expect(page.asOf).toBe(asOf);
          seen.push(...page.rows.map((r) => r.tokenId));
          cursor = page.nextCursor;
        }
        const whole = await listTokens(store, { sort: 'momentum', dir, limit: 100, asOf: asOf ?? undefined });
        expect(seen).toEqual(whole.rows.map((r) => r.tokenId));
        expect(new Set(seen).size).toBe(TOKENS.length);
        // The values have moved meanwhile: the pages read the first page's time, not the live one.
        const now = await listTokens(store, { sort: 'momentum', dir, limit: 100 });
        expect(now.asOf).toBeGreaterThan(asOf ?? Infinity);
        const momentum = (rows: typeof now.rows) => new Map(rows.map((r) => [r.tokenId, r.values.momentum]));
        expect(momentum(now.rows)).not.toEqual(momentum(whole.rows));
      }
    });
  });
}

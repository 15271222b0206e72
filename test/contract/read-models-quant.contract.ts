import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { ANALOG_DIMS, writeRawVector } from '../../processors/quant-engine/analogs/vector.ts';
import { latestSnapshotRow, snapshotHistoryRow, snapshotRecordRow } from '../../projections/latest-snapshots.ts';
import { analogCandidates } from '../../projections/read-models/analog-candidates.ts';
import { ReadModelError } from '../../projections/read-models/cursor.ts';
import { datasetFreshness } from '../../projections/read-models/freshness.ts';
import { partitionForKey } from '../../infra/log/partitioner.ts';
import { SNAPSHOT_GRID_MS } from '../../processors/quant-engine/features/features.ts';
import { settledSnapshotTime } from '../../projections/read-models/as-of.ts';
import { MAX_SCAN_CONDITIONS, scan, type ScanQuery } from '../../projections/read-models/scan.ts';
import { activeSignalsOn, getSignal, type SignalFeedQuery } from '../../projections/read-models/signals.ts';
import { resolveTokenRef } from '../../projections/read-models/token-ref.ts';
import { tokenRowsByIds } from '../../projections/read-models/token-rows.ts';
import { latestSnapshot, listTokens, type ListTokensQuery } from '../../projections/read-models/tokens.ts';
import { signalRow } from '../../projections/signals.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import type { TokenRow } from '../../presenters/tokens-table.ts';
import { RULE_FIELDS, type SnapshotHistoryRow } from '../../projections/tables/quant.ts';
import type { OutcomeRow } from '../../projections/tables/social.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { SCORE_NAMES, type Chain, type ScoreName } from '../../schemas/records/primitives.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { UNKNOWN_MARKET, UNKNOWN_ACTIVITY } from '../helpers/quant-snapshot.ts';
import { storeReads, type ServedReads } from './served-reads.ts';

/**
 * The quant read models (token list, scanner, signal feed) against a real store: a runner per
 * adapter calls describeQuantReadModelContract with a factory giving a fresh, migrated store
 * over the shipped migrations. Rows go in through the projections' own row mappers.
 */
export type MigratedStoreFactory = () => Promise<{
  store: AnalyticalStore<ProjectionTables>;
  cleanup(): Promise<void>;
  /** How the reads of served-reads.ts are served; straight from the store when absent. */
  served?: ServedReads;
}>;

const T0 = 1_750_000_000_000;

export interface SnapshotSpec {
  scores?: Partial<Record<ScoreName, number | null>>;
  features?: Record<string, number | null>;
  chain?: Chain;
  narrative?: string;
  symbol?: string;
  ts?: number;
}

export function snapshot(tokenId: string, spec: SnapshotSpec = {}): QuantSnapshot {
  const scores = Object.fromEntries(SCORE_NAMES.map((n) => [n, spec.scores?.[n] ?? null])) as QuantSnapshot['scores'];
  return {
    snapshotId: `snap_${Buffer.from(tokenId).toString('hex')}`,
    tokenId,
    ts: spec.ts ?? T0,
    symbol: spec.symbol ?? tokenId.slice(3).toUpperCase(),
    chain: spec.chain ?? 'solana',
    narrative: spec.narrative ?? 'ai-agents',
    scores,
    scoreDetails: [],
    activeSignals: [],
    market: { ...UNKNOWN_MARKET },
    activity: { ...UNKNOWN_ACTIVITY },
    divergenceState: 'none',
    features: spec.features ?? {},
    analogs: null,
    modelVersions: { momentum: 'momentum@1' },
    freshness: {
      updatedAt: spec.ts ?? T0,
      sourceLastEventAt: null,
      marketLastAt: null,
      sourceLagMs: null,
      marketLagMs: null,
      stale: false,
      staleReasons: [],
    },
  };
}

export function tokenMeta(tokenId: string, name: string, chain: Chain = 'solana'): TokenRow {
  return {
    token_id: tokenId,
    ts: T0,
    symbol: tokenId.slice(3).toUpperCase(),
    name,
    chain,
    address: `addr_${tokenId}`,
    logo_url: null,
    status: 'active',
    narrative: 'ai-agents',
    source_url: null,
  };
}

export interface SignalSpec {
  tokenId: string;
  firedAt: number;
  type?: string;
  ruleVersion?: string;
  ended?: boolean;
  scores?: Partial<Record<ScoreName, number | null>>;
  marketCap?: number | null;
  liquidity?: number | null;
}

export function signal(n: number, spec: SignalSpec): Signal {
  const ended = spec.ended ?? false;
  return {
    signalId: `sig_${n.toString(16).padStart(6, '0')}`,
    type: spec.type ?? 'EARLY_ACCELERATION',
    label: 'Early acceleration',
    ruleVersion: spec.ruleVersion ?? 'early_acceleration@1',
    status: ended ? 'ended' : 'active',
    firedAt: spec.firedAt,
    endedAt: ended ? spec.firedAt + 60_000 : null,
    endReason: ended ? 'conditions_lapsed' : null,
    strength: 50,
    scores: Object.fromEntries(SCORE_NAMES.map((s) => [s, spec.scores?.[s] ?? null])),
    why: ['mentions accelerate'],
    conditions: [{ field: 'mention_velocity_1h', op: '>', measure: 'value', threshold: 3, actual: 4 }],
    features: { market_cap_usd: spec.marketCap ?? null, liquidity_usd: spec.liquidity ?? null },
    analogs: null,
    tokenId: spec.tokenId,
    priorFirings: 0,
    priorSignalIds: [],
    version: ended ? 2 : 1,
    ts: ended ? spec.firedAt + 60_000 : spec.firedAt,
  };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const err: unknown = await promise.then(
    () => 'resolved',
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ReadModelError);
  return (err as ReadModelError).code;
}

export function describeQuantReadModelContract(name: string, factory: MigratedStoreFactory): void {
  describe(`quant read models: ${name}`, () => {
    let store: AnalyticalStore<ProjectionTables>;
    let cleanup: () => Promise<void>;
    let served: ServedReads;

    beforeEach(async () => {
      const opened = await factory();
      ({ store, cleanup } = opened);
      served = opened.served ?? storeReads(store);
    });

    afterEach(async () => {
      await cleanup();
    });

    /** As the projections store snapshots: the latest per token, and each one in the history. */
    const putSnapshots = async (values: QuantSnapshot[]) => {
      await store.upsert('latest_snapshots', values.map(latestSnapshotRow));
      await store.upsert('snapshot_history', values.map(snapshotHistoryRow));
      await store.upsert('snapshot_records', values.map(snapshotRecordRow));
    };
    const putSignals = (values: Signal[]) => store.upsert('signals', values.map(signalRow));
    const ids = (rows: { tokenId: string }[]) => rows.map((r) => r.tokenId);
    const tokensBy = async (query: Omit<ListTokensQuery, 'limit'>) => ids((await listTokens(store, { limit: 100, asOf: T0, ...query })).rows);

    // As of T0, the time of these snapshots: live, a listing reads as of the step before the newest (as-of.ts).
    describe('listTokens', () => {
      beforeEach(async () => {
        await putSnapshots([
          snapshot('tk_a', { scores: { momentum: 50 }, features: { unique_authors_1h: 3 } }),
          snapshot('tk_b', { scores: { momentum: 10 }, features: { unique_authors_1h: null } }),
          snapshot('tk_c', { scores: { momentum: null }, features: { unique_authors_1h: 9 } }),
          snapshot('tk_d', { scores: { momentum: 30.5 }, features: {} }),
          snapshot('tk_e', { scores: { momentum: 50 }, features: { unique_authors_1h: 1 } }),
        ]);
      });

      it('sorts by a score in both directions, ties by token id, NULLs last', async () => {
        expect(await tokensBy({ sort: 'momentum', dir: 'desc' })).toEqual(['tk_a', 'tk_e', 'tk_d', 'tk_b', 'tk_c']);
        expect(await tokensBy({ sort: 'momentum', dir: 'asc' })).toEqual(['tk_b', 'tk_d', 'tk_a', 'tk_e', 'tk_c']);
      });

      it('sorts by a feature in both directions, NULLs and missing features last', async () => {
        expect(await tokensBy({ sort: 'unique_authors_1h', dir: 'desc' })).toEqual(['tk_c', 'tk_a', 'tk_e', 'tk_b', 'tk_d']);
        expect(await tokensBy({ sort: 'unique_authors_1h', dir: 'asc' })).toEqual(['tk_e', 'tk_a', 'tk_c', 'tk_b', 'tk_d']);
      });

      it('returns every rule field of the snapshot as stored, null where it has none', async () => {
        const { rows, hasMore, nextCursor } = await listTokens(store, { asOf: T0, sort: 'momentum', dir: 'desc', limit: 1 });
        const stored = snapshot('tk_a', { scores: { momentum: 50 }, features: { unique_authors_1h: 3 } });
        const values: Record<string, number | null> = { ...stored.features, ...stored.scores };
        expect(rows).toEqual([
          {
            tokenId: 'tk_a',
            ts: T0,
            chain: 'solana',
            narrative: 'ai-agents',
            divergenceState: 'none',
            values: Object.fromEntries(RULE_FIELDS.map((field) => [field, values[field] ?? null])),
          },
        ]);
        expect(hasMore).toBe(true);
        expect(typeof nextCursor).toBe('string');
      });

      it('filters by narrative, chain and a case-insensitive symbol or name search', async () => {
        await putSnapshots([
          snapshot('tk_f', { scores: { momentum: 1 }, chain: 'base', narrative: 'memes', symbol: 'PEPE' }),
          snapshot('tk_g', { scores: { momentum: 2 }, chain: 'base', narrative: 'ai-agents', symbol: 'ZZZ' }),
        ]);
        await store.upsert('tokens', [tokenMeta('tk_g', "Frog's 100% Coin_X", 'base')]);
        expect(await tokensBy({ sort: 'momentum', dir: 'desc', narrative: 'memes' })).toEqual(['tk_f']);
        expect(await tokensBy({ sort: 'momentum', dir: 'desc', chain: 'base' })).toEqual(['tk_g', 'tk_f']);
        expect(await tokensBy({ sort: 'momentum', dir: 'desc', chain: 'base', narrative: 'ai-agents' })).toEqual(['tk_g']);
        expect(await tokensBy({ sort: 'momentum', dir: 'desc', q: 'pEp' })).toEqual(['tk_f']);
        expect(await tokensBy({ sort: 'momentum', dir: 'desc', q: "FROG'S 100%" })).toEqual(['tk_g']);
        // LIKE wildcards are plain characters in a search.
        expect(await tokensBy({ sort: 'momentum', dir: 'desc', q: '%' })).toEqual(['tk_g']);
        expect(await tokensBy({ sort: 'momentum', dir: 'desc', q: 'nothing like it' })).toEqual([]);
        expect(await refusal(listTokens(store, { asOf: T0, sort: 'momentum', dir: 'desc', limit: 5, q: 'x'.repeat(65) }))).toBe('INVALID_ARGUMENT');
      });

      for (const dir of ['desc', 'asc'] as const) {
        it(`pages ${dir} visit every token exactly once while new tokens arrive between pages`, async () => {
          const original = Array.from({ length: 18 }, (_, i) =>
            snapshot(`tk_p${String(i).padStart(2, '0')}`, { scores: { momentum: i % 4 === 0 ? null : (i * 7) % 11 } }),
          );
          await putSnapshots(original);
          const expected = await tokensBy({ sort: 'momentum', dir });
          const seen: string[] = [];
          let cursor: string | undefined;
          for (let page = 0; ; page++) {
            const result = await listTokens(store, { asOf: T0, sort: 'momentum', dir, limit: 4, cursor });
            seen.push(...ids(result.rows));
            // Newcomers on both sides of the cursor, and one tying its value, and with a null.
            await putSnapshots([
              snapshot(`tk_n${page}a`, { scores: { momentum: 0 } }),
              snapshot(`tk_n${page}b`, { scores: { momentum: 100 } }),
              snapshot(`tk_n${page}c`, { scores: { momentum: 5 } }),
              snapshot(`tk_n${page}d`, { scores: { momentum: null } }),
            ]);
            if (!result.hasMore) break;
            expect(result.nextCursor).not.toBeNull();
            cursor = result.nextCursor ?? undefined;
          }
          expect(new Set(seen).size).toBe(seen.length);
          // Every token present at the start comes exactly once, in the order of an unpaged read.
          const originals = new Set(expected);
          expect(seen.filter((id) => originals.has(id))).toEqual(expected);
          expect(expected).toHaveLength(23);
        });
      }

      it('refuses a cursor from another sort, direction or filter, and one that is not a cursor', async () => {
        const first = await listTokens(store, { asOf: T0, sort: 'momentum', dir: 'desc', limit: 2 });
        const cursor = first.nextCursor ?? '';
        expect(cursor).not.toBe('');
        expect(await refusal(listTokens(store, { asOf: T0, sort: 'momentum', dir: 'asc', limit: 2, cursor }))).toBe('INVALID_CURSOR');
        expect(await refusal(listTokens(store, { asOf: T0, sort: 'conviction', dir: 'desc', limit: 2, cursor }))).toBe('INVALID_CURSOR');
        expect(await refusal(listTokens(store, { asOf: T0, sort: 'momentum', dir: 'desc', limit: 2, cursor, chain: 'eth' }))).toBe('INVALID_CURSOR');
        expect(await refusal(listTokens(store, { asOf: T0, sort: 'momentum', dir: 'desc', limit: 2, cursor: 'bm90IGEgY3Vyc29y' }))).toBe('INVALID_CURSOR');
        // The cursor reads as of its first page's time; another time with it is refused, the same one is not.
        expect(first.asOf).toBe(T0);
        expect(await refusal(listTokens(store, { sort: 'momentum', dir: 'desc', limit: 2, cursor, asOf: T0 + 1 }))).toBe('INVALID_CURSOR');
        expect((await listTokens(store, { sort: 'momentum', dir: 'desc', limit: 2, cursor, asOf: T0 })).asOf).toBe(T0);
        // A cursor of one listing is no cursor of another.
        expect(await refusal(served.signalFeed({ status: 'all', limit: 2, cursor }))).toBe('INVALID_CURSOR');
        const second = await listTokens(store, { asOf: T0, sort: 'momentum', dir: 'desc', limit: 2, cursor });
        expect(ids(second.rows)).toEqual(['tk_d', 'tk_b']);
      });

      it('refuses sort fields outside the rule fields and bad limits', async () => {
        for (const sort of ['symbol', 'snapshot', 'token_id', 'momentum; DROP TABLE tokens', 'MOMENTUM']) {
          expect(await refusal(listTokens(store, { asOf: T0, sort, dir: 'desc', limit: 5 }))).toBe('INVALID_FIELD');
        }
        expect(await refusal(listTokens(store, { asOf: T0, sort: 'momentum', dir: 'desc', limit: 0 }))).toBe('INVALID_ARGUMENT');
        expect(await refusal(listTokens(store, { asOf: T0, sort: 'momentum', dir: 'desc', limit: 101 }))).toBe('INVALID_ARGUMENT');
      });
    });

    describe('scan', () => {
      beforeEach(async () => {
        await putSnapshots([
          snapshot('tk_a', { scores: { momentum: 80, crowding: 10 }, features: { price_change_1h: 0.05 } }),
          snapshot('tk_b', { scores: { momentum: 90, crowding: 70 }, features: { price_change_1h: 0.2 } }),
          snapshot('tk_c', { scores: { momentum: 60, crowding: null }, features: { price_change_1h: 0.01 } }),
          snapshot('tk_d', { scores: { momentum: null, crowding: 5 }, features: { price_change_1h: null } }),
          snapshot('tk_e', { scores: { momentum: 70, crowding: 20 }, chain: 'base', narrative: 'memes', features: { price_change_1h: -0.1 } }),
        ]);
      });

      const scanIds = async (query: Partial<Parameters<typeof scan>[1]>) =>
        ids(await scan(store, { rules: [], sort: 'momentum', sortDir: 'desc', limit: 200, ...query }, T0));

      it('passes only rows meeting every rule, sorted', async () => {
        const rules = [
          { field: 'momentum', op: '>=', value: 60 },
          { field: 'crowding', op: '<', value: 50 },
        ] as const;
        expect(await scanIds({ rules })).toEqual(['tk_a', 'tk_e']);
        expect(await scanIds({ rules, sortDir: 'asc' })).toEqual(['tk_e', 'tk_a']);
        expect(await scanIds({ rules: [...rules, { field: 'price_change_1h', op: '>', value: 0 }] })).toEqual(['tk_a']);
        expect(await scanIds({ rules, limit: 1 })).toEqual(['tk_a']);
      });

      it('never passes a NULL, whatever the operator', async () => {
        for (const op of ['>', '>=', '<', '<='] as const) {
          const passed = await scanIds({ rules: [{ field: 'crowding', op, value: op.startsWith('<') ? 1e9 : -1e9 }] });
          expect(passed).not.toContain('tk_c');
          expect(passed).toHaveLength(4);
        }
        expect(await scanIds({ rules: [{ field: 'price_change_1h', op: '<', value: 0.02 }], sort: 'price_change_1h', sortDir: 'asc' })).toEqual([
          'tk_e',
          'tk_c',
        ]);
      });

      it('restricts chains and narrative, and sorts with NULLs last', async () => {
        expect(await scanIds({ chains: ['base', 'eth'] })).toEqual(['tk_e']);
        expect(await scanIds({ narrative: 'ai-agents' })).toEqual(['tk_b', 'tk_a', 'tk_c', 'tk_d']);
        expect(await scanIds({ sort: 'crowding', sortDir: 'asc' })).toEqual(['tk_d', 'tk_a', 'tk_e', 'tk_b', 'tk_c']);
      });

      it('refuses fields outside the rule fields, unknown operators and too many rules', async () => {
        const base = { sort: 'momentum', sortDir: 'desc', limit: 10 } as const;
        expect(await refusal(scan(store, { ...base, rules: [{ field: 'chain', op: '>', value: 1 }] }, T0))).toBe('INVALID_FIELD');
        expect(await refusal(scan(store, { ...base, sort: 'snapshot', rules: [] }, T0))).toBe('INVALID_FIELD');
        const badOp = { field: 'momentum', op: '= 1 OR 1 =' as '>', value: 1 };
        expect(await refusal(scan(store, { ...base, rules: [badOp] }, T0))).toBe('INVALID_ARGUMENT');
        const many = Array.from({ length: MAX_SCAN_CONDITIONS + 1 }, () => ({ field: 'momentum', op: '>' as const, value: 1 }));
        expect(await refusal(scan(store, { ...base, rules: many }, T0))).toBe('INVALID_ARGUMENT');
        expect(await refusal(scan(store, { ...base, rules: [], limit: 201 }, T0))).toBe('INVALID_ARGUMENT');
        // Refused before any data too.
        expect(await refusal(scan(store, { ...base, rules: [], limit: 0 }, null))).toBe('INVALID_ARGUMENT');
        expect(await scan(store, { ...base, rules: [] }, null)).toEqual([]);
      });
    });

    describe('signals', () => {
      const minute = 60_000;
      beforeEach(async () => {
        await store.upsert('tokens', [tokenMeta('tk_a', 'Alpha'), tokenMeta('tk_b', 'Beta', 'base')]);
        await putSignals([
          signal(1, { tokenId: 'tk_a', firedAt: T0, scores: { momentum: 40 }, marketCap: 1e6, liquidity: 1e5 }),
          signal(2, { tokenId: 'tk_a', firedAt: T0 + minute, scores: { momentum: 80 }, marketCap: 5e6, liquidity: 2e5 }),
          signal(3, { tokenId: 'tk_b', firedAt: T0 + 2 * minute, type: 'BROAD_ATTENTION', ruleVersion: 'broad_attention@1', scores: { momentum: 90 } }),
          signal(4, { tokenId: 'tk_a', firedAt: T0 + 3 * minute, scores: { momentum: 60 }, marketCap: 2e7, liquidity: 5e4 }),
          signal(5, { tokenId: 'tk_a', firedAt: T0 + 3 * minute, ruleVersion: 'early_acceleration@2', scores: { momentum: null } }),
          signal(6, { tokenId: 'tk_b', firedAt: T0 + 4 * minute, scores: { momentum: 70 }, marketCap: 3e6 }),
        ]);
        // Signals 1 and 4 ended: their version 2 replaces the fire record.
        await putSignals([signal(1, { tokenId: 'tk_a', firedAt: T0, scores: { momentum: 40 }, marketCap: 1e6, liquidity: 1e5, ended: true })]);
        await putSignals([signal(4, { tokenId: 'tk_a', firedAt: T0 + 3 * minute, scores: { momentum: 60 }, marketCap: 2e7, liquidity: 5e4, ended: true })]);
      });

      const feed = async (query: Partial<SignalFeedQuery>) =>
        (await served.signalFeed({ status: 'all', limit: 100, ...query })).rows.map((s) => s.signalId);

      it('lists newest first with the id breaking ties, each filter applied', async () => {
        expect(await feed({})).toEqual(['sig_000006', 'sig_000005', 'sig_000004', 'sig_000003', 'sig_000002', 'sig_000001']);
        expect(await feed({ status: 'active' })).toEqual(['sig_000006', 'sig_000005', 'sig_000003', 'sig_000002']);
        expect(await feed({ status: 'ended' })).toEqual(['sig_000004', 'sig_000001']);
        expect(await feed({ minScore: { score: 'momentum', value: 70 } })).toEqual(['sig_000006', 'sig_000003', 'sig_000002']);
        expect(await feed({ types: ['BROAD_ATTENTION'] })).toEqual(['sig_000003']);
        expect(await feed({ chains: ['base'] })).toEqual(['sig_000006', 'sig_000003']);
        expect(await feed({ marketCap: 3e6 })).toEqual(['sig_000006', 'sig_000004', 'sig_000002']);
        expect(await feed({ liquidity: 1e5 })).toEqual(['sig_000002', 'sig_000001']);
        expect(await feed({ createdAfter: T0 + 2 * minute })).toEqual(['sig_000006', 'sig_000005', 'sig_000004']);
        expect(await feed({ tokenId: 'tk_b', status: 'active' })).toEqual(['sig_000006', 'sig_000003']);
      });

      it('returns the records as produced, the end record replacing the fire record', async () => {
        const [ended] = (await served.signalFeed({ status: 'ended', limit: 1 })).rows;
        expect(ended).toEqual(signal(4, { tokenId: 'tk_a', firedAt: T0 + 3 * minute, scores: { momentum: 60 }, marketCap: 2e7, liquidity: 5e4, ended: true }));
      });

      it('pages through the feed with a cursor bound to its filters', async () => {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (;;) {
          const page = await served.signalFeed({ status: 'all', limit: 4, cursor, tokenId: 'tk_a' });
          seen.push(...page.rows.map((s) => s.signalId));
          // A newer signal arriving mid-way does not shift later pages.
          await putSignals([signal(100 + seen.length, { tokenId: 'tk_a', firedAt: T0 + 60 * minute })]);
          if (!page.hasMore) break;
          cursor = page.nextCursor ?? undefined;
        }
        expect(seen).toEqual(['sig_000005', 'sig_000004', 'sig_000002', 'sig_000001']);
        const first = await served.signalFeed({ status: 'all', limit: 1 });
        const other = { status: 'active', limit: 1, cursor: first.nextCursor ?? '' } as const;
        expect(await refusal(served.signalFeed(other))).toBe('INVALID_CURSOR');
      });

      it('gives one signal with earlier firings of its rule version on its token, newest first', async () => {
        const detail = await getSignal(store, 'sig_000004');
        expect(detail?.signal.status).toBe('ended');
        expect(detail?.priorFirings.map((s) => s.signalId)).toEqual(['sig_000002', 'sig_000001']);
        expect((await getSignal(store, 'sig_000001'))?.priorFirings).toEqual([]);
        expect((await getSignal(store, 'sig_000006'))?.priorFirings).toEqual([]);
        expect(await getSignal(store, 'sig_ffffff')).toBeNull();
      });

      it('keeps at most 20 prior firings', async () => {
        await putSignals(Array.from({ length: 25 }, (_, i) => signal(200 + i, { tokenId: 'tk_b', firedAt: T0 - (i + 1) * minute })));
        const detail = await getSignal(store, 'sig_000006');
        expect(detail?.priorFirings).toHaveLength(20);
        expect(detail?.priorFirings[0].signalId).toBe(`sig_${(200).toString(16).padStart(6, '0')}`);
      });

      it('lists the active signals on a set of tokens, newest first, up to a limit', async () => {
        const active = async (tokenIds: string[], limit: number) => (await activeSignalsOn(store, tokenIds, limit)).map((x) => x.signalId);
        expect(await active(['tk_a', 'tk_b'], 100)).toEqual(['sig_000006', 'sig_000005', 'sig_000003', 'sig_000002']);
        expect(await active(['tk_a', 'tk_a'], 100)).toEqual(['sig_000005', 'sig_000002']);
        expect(await active(['tk_a', 'tk_b'], 2)).toEqual(['sig_000006', 'sig_000005']);
        expect(await active(['tk_none'], 100)).toEqual([]);
        expect(await active([], 100)).toEqual([]);
        expect(await refusal(activeSignalsOn(store, ['tk_a'], 0))).toBe('INVALID_ARGUMENT');
      });

      it('gives the metadata rows of tokens by id in one map, leaving out unknown ids', async () => {
        const rows = await tokenRowsByIds(store, ['tk_b', 'tk_a', 'tk_b', 'tk_none']);
        expect([...rows.keys()].sort()).toEqual(['tk_a', 'tk_b']);
        expect(rows.get('tk_b')).toEqual(tokenMeta('tk_b', 'Beta', 'base'));
        expect((await tokenRowsByIds(store, [])).size).toBe(0);
      });

      it('refuses a min_score on a name that is not a score', async () => {
        const minScore = { score: 'price_usd' as ScoreName, value: 1 };
        expect(await refusal(served.signalFeed({ status: 'all', limit: 5, minScore }))).toBe('INVALID_FIELD');
        expect(await refusal(served.signalFeed({ status: 'any' as 'all', limit: 5 }))).toBe('INVALID_ARGUMENT');
      });
    });

    describe('datasetFreshness', () => {
      const minute = 60_000;
      const fresh = (tokenId: string, ts: number, sourceLastEventAt: number | null, marketLastAt: number | null): QuantSnapshot => {
        const value = snapshot(tokenId, { ts });
        return { ...value, freshness: { ...value.freshness, sourceLastEventAt, marketLastAt } };
      };

      it('is all null before any snapshot', async () => {
        expect(await datasetFreshness(store)).toEqual({ latestSnapshotAt: null, sourceLastEventAt: null, marketLastAt: null });
      });

      it('finds the newest times behind any snapshot, reading past the first rows until no older one can be later', async () => {
        // The 71st newest snapshot holds the latest market time; the newer ones saw older ticks.
        await putSnapshots(
          Array.from({ length: 150 }, (_, i) => {
            const ts = T0 - i * minute;
            return fresh(`tk_f${String(i).padStart(3, '0')}`, ts, ts - 10 * minute, i === 70 ? ts : i < 70 ? ts - 200 * minute : null);
          }),
        );
        expect(await datasetFreshness(store)).toEqual({ latestSnapshotAt: T0, sourceLastEventAt: T0 - 10 * minute, marketLastAt: T0 - 70 * minute });
      });

      it('continues across snapshots of the same time, ordered by token id', async () => {
        await putSnapshots(
          Array.from({ length: 100 }, (_, i) => fresh(`tk_t${String(i).padStart(3, '0')}`, T0, T0 - 5 * minute, i === 99 ? T0 - minute : null)),
        );
        expect(await datasetFreshness(store)).toEqual({ latestSnapshotAt: T0, sourceLastEventAt: T0 - 5 * minute, marketLastAt: T0 - minute });
      });
    });

    describe('token references', () => {
      const EVM = '0x65e26f382862bbafffe3c33384e0dc8adf63ea9b';
      const SOL = 'MBTiL5cmvZU7dbtggpwT1b44Tw62dguDsrrjCApump';
      const meta = (tokenId: string, symbol: string, chain: Chain, address: string): TokenRow => ({ ...tokenMeta(tokenId, symbol, chain), symbol, address });
      const resolved = async (ref: string) => (await resolveTokenRef(store, ref))?.token_id ?? null;

      beforeEach(async () => {
        await store.upsert('tokens', [
          // One contract deployed on two chains under one symbol, written in different cases.
          meta('tk_a', 'Pepe', 'base', EVM.replace('0x65e2', '0x65E2')),
          meta('tk_b', 'PEPE', 'eth', EVM),
          meta('tk_c', 'BONK', 'solana', SOL),
          // A shared symbol without snapshots: the smallest id wins.
          meta('tk_e', 'TWIN', 'bnb', `0x${'e'.repeat(40)}`),
          meta('tk_d', 'TWIN', 'arc', `0x${'d'.repeat(40)}`),
        ]);
        await putSnapshots([
          snapshot('tk_a', { features: { mentions_24h: 5 } }),
          snapshot('tk_b', { features: { mentions_24h: 9 } }),
          snapshot('tk_c', { features: { mentions_24h: null } }),
        ]);
      });

      it('resolves every form, symbols and EVM addresses ignoring case', async () => {
        expect(await resolved('tk_a')).toBe('tk_a');
        expect(await resolved('tk_c')).toBe('tk_c');
        expect(await resolved('$bonk')).toBe('tk_c');
        expect(await resolved('BONK')).toBe('tk_c');
        expect(await resolved(`base:${EVM}`)).toBe('tk_a');
        expect(await resolved(`ETH:${EVM.toUpperCase().replace('0X', '0x')}`)).toBe('tk_b');
        expect(await resolved(`solana:${SOL}`)).toBe('tk_c');
        expect(await resolved(SOL)).toBe('tk_c');
        expect(await resolveTokenRef(store, 'tk_c')).toEqual(meta('tk_c', 'BONK', 'solana', SOL));
      });

      it('picks the most active of several tokens: most mentions in 24h, then the smallest id', async () => {
        expect(await resolved('$PEPE')).toBe('tk_b');
        expect(await resolved('pepe')).toBe('tk_b');
        expect(await resolved(EVM)).toBe('tk_b');
        expect(await resolved('TWIN')).toBe('tk_d');
        await putSnapshots([snapshot('tk_a', { features: { mentions_24h: 12 } })]);
        expect(await resolved('$PEPE')).toBe('tk_a');
        // An unknown count ranks below any known one.
        await putSnapshots([snapshot('tk_e', { features: { mentions_24h: 0 } })]);
        expect(await resolved('TWIN')).toBe('tk_e');
      });

      it('finds nothing for unknown tokens, other chains, a Solana address in another case, or what is no reference', async () => {
        for (const ref of ['tk_z', '$DOGE', `arc:${EVM}`, `0x${'f'.repeat(40)}`, SOL.toLowerCase(), `solana:${SOL.toUpperCase()}`, '$$$', "x' OR '1'='1"]) {
          expect(await resolved(ref), ref).toBeNull();
        }
      });
    });

    describe('latestSnapshot', () => {
      it('gives the record as produced, or null before the first', async () => {
        const value = snapshot('tk_a', { scores: { momentum: 12.5 }, features: { price_change_1h: 0.01 } });
        await putSnapshots([value]);
        expect(await latestSnapshot(store, 'tk_a')).toEqual(value);
        expect(await latestSnapshot(store, 'tk_b')).toBeNull();
      });
    });

    describe('scan as of a time', () => {
      const minute = 60_000;
      const at = (tokenId: string, ts: number, spec: SnapshotSpec): QuantSnapshot => ({
        ...snapshot(tokenId, { ...spec, ts }),
        snapshotId: `snap_${Buffer.from(`${tokenId}@${ts}`).toString('hex')}`,
      });
      const putHistory = (values: QuantSnapshot[]) => store.upsert('snapshot_history', values.map(snapshotHistoryRow));

      beforeEach(async () => {
        await putHistory([
          at('tk_a', T0, { scores: { momentum: 10 } }),
          at('tk_a', T0 + 5 * minute, { scores: { momentum: 80, crowding: 20 }, features: { price_change_1h: 0.05 } }),
          at('tk_a', T0 + 10 * minute, { scores: { momentum: 5 } }),
          at('tk_b', T0, { scores: { momentum: 60, crowding: null }, chain: 'base' }),
          at('tk_c', T0 + 5 * minute, { scores: { momentum: null, crowding: 50 }, narrative: 'memes' }),
          // Only after the cutoff: not scanned.
          at('tk_d', T0 + 9 * minute, { scores: { momentum: 99, crowding: 1 } }),
        ]);
      });

      const asOf = async (query: Partial<ScanQuery>, cutoff = T0 + 7 * minute) =>
        (await scan(store, { rules: [], sort: 'momentum', sortDir: 'desc', limit: 200, ...query }, cutoff)).map((r) => [r.tokenId, r.ts]);

      it("scans each token's latest snapshot at or before the cutoff", async () => {
        expect(await asOf({})).toEqual([
          ['tk_a', T0 + 5 * minute],
          ['tk_b', T0],
          ['tk_c', T0 + 5 * minute],
        ]);
        expect(await asOf({}, T0 + 10 * minute)).toEqual([
          ['tk_d', T0 + 9 * minute],
          ['tk_b', T0],
          ['tk_a', T0 + 10 * minute],
          ['tk_c', T0 + 5 * minute],
        ]);
        expect(await asOf({}, T0 - 1)).toEqual([]);
      });

      it('applies rules to that snapshot, never passing a null, with filters, sort and limit', async () => {
        expect(await asOf({ rules: [{ field: 'momentum', op: '>=', value: 50 }] })).toEqual([
          ['tk_a', T0 + 5 * minute],
          ['tk_b', T0],
        ]);
        // tk_a's newest snapshot would fail this; the one at the cutoff passes.
        expect(await asOf({ rules: [{ field: 'price_change_1h', op: '>', value: 0 }] })).toEqual([['tk_a', T0 + 5 * minute]]);
        for (const op of ['>', '<'] as const) {
          expect(await asOf({ rules: [{ field: 'crowding', op, value: op === '>' ? -1e9 : 1e9 }] })).toEqual([
            ['tk_a', T0 + 5 * minute],
            ['tk_c', T0 + 5 * minute],
          ]);
        }
        expect(await asOf({ chains: ['base'] })).toEqual([['tk_b', T0]]);
        expect(await asOf({ narrative: 'memes' })).toEqual([['tk_c', T0 + 5 * minute]]);
        expect(await asOf({ sort: 'crowding', sortDir: 'asc', limit: 2 })).toEqual([
          ['tk_a', T0 + 5 * minute],
          ['tk_c', T0 + 5 * minute],
        ]);
      });

      it('scans live as of the settled time of the history, with the values of each token at it', async () => {
        // The least over the partitions of quant.snapshots of the newest snapshot stored from each.
        const newest = new Map<number, number>();
        for (const [tokenId, ts] of [['tk_a', T0 + 10 * minute], ['tk_b', T0], ['tk_c', T0 + 5 * minute], ['tk_d', T0 + 9 * minute]] as const) {
          const p = partitionForKey(tokenId, TOPICS.snapshots.partitions);
          newest.set(p, Math.max(newest.get(p) ?? 0, ts));
        }
        const settled = await settledSnapshotTime(store);
        expect(settled).toBe(Math.min(...newest.values()) - SNAPSHOT_GRID_MS);
        const query: ScanQuery = { rules: [{ field: 'momentum', op: '>', value: 0 }], sort: 'momentum', sortDir: 'asc', limit: 10, chains: ['solana', 'base'] };
        const live = await scan(store, query, T0 + 10 * minute);
        expect(live.map((r) => r.tokenId)).toEqual(['tk_a', 'tk_b', 'tk_d']);
        expect(live[1].values.momentum).toBe(60);
        expect(live[1].values.price_change_1h).toBeNull();
      });

      it('refuses history columns that are no rule fields', async () => {
        const base = { sort: 'momentum', sortDir: 'desc', limit: 10, rules: [] } as const;
        expect(await refusal(scan(store, { ...base, sort: 'snapshot_id' }, T0))).toBe('INVALID_FIELD');
        expect(await refusal(scan(store, { ...base, rules: [{ field: 'version', op: '>', value: 0 }] }, T0))).toBe('INVALID_FIELD');
      });
    });

    describe('analogCandidates', () => {
      const hour = 3_600_000;
      const outcome = (subjectId: string, tokenId: string, ts: number, over: Partial<OutcomeRow> = {}): OutcomeRow => ({
        outcome_id: `out_${subjectId}_${over.horizon ?? '24h'}_${over.subject_kind ?? 'snapshot'}`,
        subject_kind: 'snapshot',
        subject_id: subjectId,
        token_id: tokenId,
        subject_ts: ts,
        horizon: '24h',
        entry_price: 1,
        forward_return: 0.1,
        max_drawdown: -0.05,
        peak_return: 0.2,
        time_to_peak_ms: hour,
        died: false,
        last_price: 1.1,
        resolved_at: ts + 24 * hour,
        ...over,
      });
      const history = (snapshotId: string, tokenId: string, ts: number, spec: SnapshotSpec): SnapshotHistoryRow =>
        snapshotHistoryRow({ ...snapshot(tokenId, { ...spec, ts }), snapshotId });

      it("joins snapshots with their resolved 24h outcomes, in resolution order, with the engine's vector", async () => {
        const features = { price_change_1h: 0.02, volume_acceleration: 1.5, liquidity_usd: 250_000 };
        await store.upsert('snapshot_history', [
          history('snap_01', 'tk_a', T0 + hour, { scores: { momentum: 40, crowding: 10, early_quality: 70, narrative_velocity: 55 }, features }),
          history('snap_02', 'tk_b', T0, { scores: { momentum: null }, features: { price_change_1h: -0.01 } }),
          history('snap_03', 'tk_a', T0 + 2 * hour, {}),
          history('snap_04', 'tk_c', T0, {}),
        ]);
        await store.upsert('outcomes', [
          outcome('snap_01', 'tk_a', T0 + hour),
          outcome('snap_02', 'tk_b', T0, { forward_return: null, max_drawdown: null, died: true }),
          // Not candidates: another horizon, another kind of subject, and an outcome whose snapshot is not stored.
          outcome('snap_03', 'tk_a', T0 + 2 * hour, { horizon: '1h', resolved_at: T0 + 3 * hour }),
          outcome('snap_04', 'tk_c', T0, { subject_kind: 'call' }),
          outcome('snap_09', 'tk_c', T0),
        ]);
        const c = await analogCandidates(store);
        expect(c.count).toBe(2);
        expect(c.snapshotId).toEqual(['snap_02', 'snap_01']);
        expect(c.tokenId).toEqual(['tk_b', 'tk_a']);
        expect([...c.ts]).toEqual([T0, T0 + hour]);
        expect([...c.resolvedAt]).toEqual([T0 + 24 * hour, T0 + 25 * hour]);
        expect([...c.return24h]).toEqual([NaN, 0.1]);
        expect([...c.maxDrawdown24h]).toEqual([NaN, -0.05]);
        const expected = new Float64Array(2 * ANALOG_DIMS);
        writeRawVector(
          { momentum: null, crowding: null, earlyQuality: null, narrativeVelocity: null, priceChange1h: -0.01, volumeAcceleration: null, liquidityUsd: null },
          expected,
          0,
        );
        writeRawVector(
          { momentum: 40, crowding: 10, earlyQuality: 70, narrativeVelocity: 55, priceChange1h: 0.02, volumeAcceleration: 1.5, liquidityUsd: 250_000 },
          expected,
          ANALOG_DIMS,
        );
        expect([...c.raw]).toEqual([...expected]);
      });

      it('is empty for an empty store', async () => {
        const c = await analogCandidates(store);
        expect(c.count).toBe(0);
        expect(c.raw).toHaveLength(0);
      });
    });
  });
}

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { latestSnapshotRow } from '../../projections/latest-snapshots.ts';
import { ReadModelError } from '../../projections/read-models/cursor.ts';
import { scan } from '../../projections/read-models/scan.ts';
import { getSignal, signalFeed, type SignalFeedQuery } from '../../projections/read-models/signals.ts';
import { listTokens, type ListTokensQuery } from '../../projections/read-models/tokens.ts';
import { signalRow } from '../../projections/signals.ts';
import type { ProjectionTables, TokenRow } from '../../projections/tables.ts';
import { SCORE_NAMES, type Chain, type ScoreName } from '../../schemas/records/primitives.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';

/**
 * The quant read models (token list, scanner, signal feed) against a real store: a runner per
 * adapter calls describeQuantReadModelContract with a factory giving a fresh, migrated store
 * over the shipped migrations. Rows go in through the projections' own row mappers.
 */
export type MigratedStoreFactory = () => Promise<{ store: AnalyticalStore<ProjectionTables>; cleanup(): Promise<void> }>;

const T0 = 1_750_000_000_000;

interface SnapshotSpec {
  scores?: Partial<Record<ScoreName, number | null>>;
  features?: Record<string, number | null>;
  chain?: Chain;
  narrative?: string;
  symbol?: string;
  ts?: number;
}

function snapshot(tokenId: string, spec: SnapshotSpec = {}): QuantSnapshot {
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
    market: {
      priceUsd: null,
      priceChange15m: null,
      priceChange1h: null,
      priceChange24h: null,
      volume1h: null,
      volume24h: null,
      volumeAcceleration: null,
      liquidityUsd: null,
      marketCapUsd: null,
      trades1h: null,
    },
    activity: {
      mentions1h: null,
      mentions24h: null,
      uniqueAuthors1h: null,
      uniqueAuthors24h: null,
      mentionVelocity15m: null,
      mentionVelocity1h: null,
      newAuthorShare1h: null,
      qualityWeightedAttention1h: null,
      engagement1h: null,
      engagement24h: null,
    },
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

function tokenMeta(tokenId: string, name: string, chain: Chain = 'solana'): TokenRow {
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

interface SignalSpec {
  tokenId: string;
  firedAt: number;
  type?: string;
  ruleVersion?: string;
  ended?: boolean;
  scores?: Partial<Record<ScoreName, number | null>>;
  marketCap?: number | null;
  liquidity?: number | null;
}

function signal(n: number, spec: SignalSpec): Signal {
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

    beforeEach(async () => {
      ({ store, cleanup } = await factory());
    });

    afterEach(async () => {
      await cleanup();
    });

    const putSnapshots = (values: QuantSnapshot[]) => store.upsert('latest_snapshots', values.map(latestSnapshotRow));
    const putSignals = (values: Signal[]) => store.upsert('signals', values.map(signalRow));
    const ids = (rows: { tokenId: string }[]) => rows.map((r) => r.tokenId);
    const tokensBy = async (query: Omit<ListTokensQuery, 'limit'>) => ids((await listTokens(store, { limit: 100, ...query })).rows);

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

      it('returns the snapshot as produced', async () => {
        const { rows, hasMore, nextCursor } = await listTokens(store, { sort: 'momentum', dir: 'desc', limit: 1 });
        expect(rows).toEqual([
          { tokenId: 'tk_a', ts: T0, symbol: 'A', chain: 'solana', narrative: 'ai-agents', divergenceState: 'none', snapshot: snapshot('tk_a', { scores: { momentum: 50 }, features: { unique_authors_1h: 3 } }) },
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
        expect(await refusal(listTokens(store, { sort: 'momentum', dir: 'desc', limit: 5, q: 'x'.repeat(65) }))).toBe('INVALID_ARGUMENT');
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
            const result = await listTokens(store, { sort: 'momentum', dir, limit: 4, cursor });
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
        const first = await listTokens(store, { sort: 'momentum', dir: 'desc', limit: 2 });
        const cursor = first.nextCursor ?? '';
        expect(cursor).not.toBe('');
        expect(await refusal(listTokens(store, { sort: 'momentum', dir: 'asc', limit: 2, cursor }))).toBe('INVALID_CURSOR');
        expect(await refusal(listTokens(store, { sort: 'conviction', dir: 'desc', limit: 2, cursor }))).toBe('INVALID_CURSOR');
        expect(await refusal(listTokens(store, { sort: 'momentum', dir: 'desc', limit: 2, cursor, chain: 'eth' }))).toBe('INVALID_CURSOR');
        expect(await refusal(listTokens(store, { sort: 'momentum', dir: 'desc', limit: 2, cursor: 'bm90IGEgY3Vyc29y' }))).toBe('INVALID_CURSOR');
        // A cursor of one listing is no cursor of another.
        expect(await refusal(signalFeed(store, { status: 'all', limit: 2, cursor }))).toBe('INVALID_CURSOR');
        const second = await listTokens(store, { sort: 'momentum', dir: 'desc', limit: 2, cursor });
        expect(ids(second.rows)).toEqual(['tk_d', 'tk_b']);
      });

      it('refuses sort fields outside the rule fields and bad limits', async () => {
        for (const sort of ['symbol', 'snapshot', 'token_id', 'momentum; DROP TABLE tokens', 'MOMENTUM']) {
          expect(await refusal(listTokens(store, { sort, dir: 'desc', limit: 5 }))).toBe('INVALID_FIELD');
        }
        expect(await refusal(listTokens(store, { sort: 'momentum', dir: 'desc', limit: 0 }))).toBe('INVALID_ARGUMENT');
        expect(await refusal(listTokens(store, { sort: 'momentum', dir: 'desc', limit: 101 }))).toBe('INVALID_ARGUMENT');
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
        ids(await scan(store, { rules: [], sort: 'momentum', sortDir: 'desc', limit: 200, ...query }));

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
        expect(await refusal(scan(store, { ...base, rules: [{ field: 'chain', op: '>', value: 1 }] }))).toBe('INVALID_FIELD');
        expect(await refusal(scan(store, { ...base, sort: 'snapshot', rules: [] }))).toBe('INVALID_FIELD');
        const badOp = { field: 'momentum', op: '= 1 OR 1 =' as '>', value: 1 };
        expect(await refusal(scan(store, { ...base, rules: [badOp] }))).toBe('INVALID_ARGUMENT');
        const many = Array.from({ length: 13 }, () => ({ field: 'momentum', op: '>' as const, value: 1 }));
        expect(await refusal(scan(store, { ...base, rules: many }))).toBe('INVALID_ARGUMENT');
        expect(await refusal(scan(store, { ...base, rules: [], limit: 201 }))).toBe('INVALID_ARGUMENT');
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
        (await signalFeed(store, { status: 'all', limit: 100, ...query })).rows.map((s) => s.signalId);

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
        const [ended] = (await signalFeed(store, { status: 'ended', limit: 1 })).rows;
        expect(ended).toEqual(signal(4, { tokenId: 'tk_a', firedAt: T0 + 3 * minute, scores: { momentum: 60 }, marketCap: 2e7, liquidity: 5e4, ended: true }));
      });

      it('pages through the feed with a cursor bound to its filters', async () => {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (;;) {
          const page = await signalFeed(store, { status: 'all', limit: 4, cursor, tokenId: 'tk_a' });
          seen.push(...page.rows.map((s) => s.signalId));
          // A newer signal arriving mid-way does not shift later pages.
          await putSignals([signal(100 + seen.length, { tokenId: 'tk_a', firedAt: T0 + 60 * minute })]);
          if (!page.hasMore) break;
          cursor = page.nextCursor ?? undefined;
        }
        expect(seen).toEqual(['sig_000005', 'sig_000004', 'sig_000002', 'sig_000001']);
        const first = await signalFeed(store, { status: 'all', limit: 1 });
        const other = { status: 'active', limit: 1, cursor: first.nextCursor ?? '' } as const;
        expect(await refusal(signalFeed(store, other))).toBe('INVALID_CURSOR');
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

      it('refuses a min_score on a name that is not a score', async () => {
        const minScore = { score: 'price_usd' as ScoreName, value: 1 };
        expect(await refusal(signalFeed(store, { status: 'all', limit: 5, minScore }))).toBe('INVALID_FIELD');
        expect(await refusal(signalFeed(store, { status: 'any' as 'all', limit: 5 }))).toBe('INVALID_ARGUMENT');
      });
    });
  });
}

import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { ANALOG_K_DEFAULT, ANALOG_MODEL_VERSION } from '../../processors/quant-engine/analogs/analogs.ts';
import type { AnalogSummary } from '../../processors/quant-engine/contracts.ts';
import { FEATURE_NAMES } from '../../processors/quant-engine/features/definitions.ts';
import { SNAPSHOT_GRID_MS } from '../../processors/quant-engine/features/features.ts';
import { formatAge } from '../../processors/quant-engine/snapshots/snapshots.ts';
import { scan, type ScanQuery } from '../../projections/read-models/scan.ts';
import { resolveTokenRef } from '../../projections/read-models/token-ref.ts';
import type { RuleFieldRow } from '../../projections/read-models/snapshot-views.ts';
import { listTokens, snapshotAsOf } from '../../projections/read-models/tokens.ts';
import type { TokenRow } from '../../presenters/tokens-table.ts';
import { SCORE_NAMES, type DivergenceState } from '../../schemas/records/primitives.ts';
import type { QuantFreshness, QuantSnapshot } from '../../schemas/records/quant-scores.ts';
import { ApiError } from '../errors.ts';
import { defineRoute } from '../http/route.ts';
import { renderWire, WireJson, withMembers } from '../http/wire.ts';
import { keyOf } from '../middleware/auth.ts';
import { PLANS } from '../plans.ts';
import { presentActiveSignal } from '../../presenters/signal.ts';
import { presentToken, presentTokenOf } from '../../presenters/token.ts';
import { SCAN_DEFAULT_LIMIT, SCAN_DEFAULT_SORT, SCAN_DEFAULT_SORT_DIR, SCAN_PRESETS } from '../scan-presets.ts';
import { DISCLAIMER, header, iso } from '../schemas/common.ts';
import { HEALTH_STALE_AFTER_MS } from '../schemas/meta.ts';
import {
  AnalogsQuerySchema,
  ScanBodySchema,
  SCAN_PRESET_TABLE,
  ScanResultSchema,
  TokenAnalogsSchema,
  TokenListSchema,
  TokenParamsSchema,
  TokenScoreSchema,
  TokenSnapshotQuerySchema,
  TokensQuerySchema,
  TokenSnapshotSchema,
} from '../schemas/tokens.ts';
import { ANALOG_REFRESH_MS, AnalogIndex } from '../services/analog-index.ts';
import { PointInTime } from '../services/point-in-time.ts';
import { READ_CACHE_TTL_MS, ReadCache } from '../services/read-cache.ts';
import { LIST_HEADER, RenderedRows } from '../services/rendered-rows.ts';
import { SnapshotViews } from '../services/snapshot-views.ts';
import { SNAPSHOT_CACHE_TTL_MS, TokenSnapshots } from '../services/token-snapshots.ts';
import type { RouteDeps } from './deps.ts';
import type { RouteGroup } from './group.ts';

/** Tokens and the scanner (spec 4.1): the quant snapshot, analogs, the token list and the scan. */

type TokenScore = z.input<typeof TokenScoreSchema>;

/** A token's rule fields at one snapshot. */
function presentTokenScore(row: RuleFieldRow, tokens: ReadonlyMap<string, TokenRow>): TokenScore {
  return {
    ...header('token_score'),
    tokenId: row.tokenId,
    token: presentTokenOf(tokens, row.tokenId),
    ts: iso(row.ts),
    scores: Object.fromEntries(SCORE_NAMES.map((name) => [name, row.values[name]])) as TokenScore['scores'],
    // Both snapshot tables are written from validated records, whose state is one of these.
    divergenceState: row.divergenceState as DivergenceState,
    features: Object.fromEntries(FEATURE_NAMES.map((name) => [name, row.values[name]])) as TokenScore['features'],
  };
}

/**
 * The stored freshness block, as of the snapshot time, with the snapshot's age at `now` added
 * (the time of the request, or the `as_of` asked): as a number, and as a stale reason once it
 * is past the threshold the health endpoint judges snapshots by.
 */
function presentFreshness(f: QuantFreshness, now: number) {
  const ageMs = now - f.updatedAt;
  const late = ageMs > HEALTH_STALE_AFTER_MS.snapshots;
  return {
    updatedAt: iso(f.updatedAt),
    sourceLastEventAt: iso(f.sourceLastEventAt),
    marketLastAt: iso(f.marketLastAt),
    sourceLagMs: f.sourceLagMs,
    marketLagMs: f.marketLagMs,
    ageMs,
    stale: f.stale || late,
    staleReasons: late ? [...f.staleReasons, `last update ${formatAge(ageMs)} ago`] : f.staleReasons,
  };
}

/** The token snapshot without its freshness block and `as_of`, which each request adds. */
function presentSnapshot(
  token: TokenRow,
  s: QuantSnapshot,
  analogs: AnalogSummary,
): Omit<z.input<typeof TokenSnapshotSchema>, 'freshness' | 'asOf'> {
  return {
    ...header('token_snapshot'),
    id: s.snapshotId,
    token: presentToken(token),
    ts: iso(s.ts),
    scores: s.scores,
    scoreDetails: s.scoreDetails,
    activeSignals: s.activeSignals.map(presentActiveSignal),
    market: s.market,
    activity: s.activity,
    divergenceState: s.divergenceState,
    features: s.features,
    analogs,
    modelVersions: s.modelVersions,
    disclaimer: DISCLAIMER,
  };
}

export function tokenRoutes({ store, logger, now, tokens: directory }: RouteDeps): RouteGroup {
  const analogIndex = new AnalogIndex({ store, logger });
  const snapshots = new TokenSnapshots({ store, now });
  /**
   * Each snapshot's body rendered once, for as long as the snapshot cache holds the same
   * objects: rendering it (renaming and stringifying about 4 KB) was most of a request's work.
   */
  const rendered = new WeakMap<QuantSnapshot, { token: TokenRow; summary: AnalogSummary; json: string; digest: string }>();
  const listings = new ReadCache<WireJson>({ now });
  const views = new SnapshotViews({ store, now });
  const scoreRows = new RenderedRows({ present: presentTokenScore, tokenIdOf: (row: RuleFieldRow) => row.tokenId, directory });
  const pointInTime = new PointInTime({ store, now });

  /**
   * The token `ref` names and its latest snapshot, or as of `asOf` its latest at or before it
   * (read past the snapshot cache), or 404.
   */
  async function tokenWithSnapshot(ref: string, asOf: number | undefined): Promise<{ token: TokenRow; snapshot: QuantSnapshot }> {
    let found: { token: TokenRow; snapshot: QuantSnapshot | null } | null;
    if (asOf === undefined) {
      found = await snapshots.find(ref);
    } else {
      const token = await resolveTokenRef(store, ref);
      found = token === null ? null : { token, snapshot: await snapshotAsOf(store, token.token_id, asOf) };
    }
    if (!found) throw new ApiError('NOT_FOUND', `no token matches ${JSON.stringify(ref)}`);
    const { token, snapshot } = found;
    if (!snapshot) {
      if (asOf !== undefined) throw new ApiError('NOT_FOUND', `token ${token.token_id} had no quant snapshot yet at ${iso(asOf)}`);
      const step = SNAPSHOT_GRID_MS / 60_000;
      throw new ApiError('NOT_FOUND', `token ${token.token_id} has no quant snapshot yet: the first is built at the ${step}-minute step after its listing`);
    }
    return { token, snapshot };
  }

  const getSnapshot = defineRoute({
    method: 'GET',
    path: '/v1/quant/token/:token',
    operationId: 'getTokenSnapshot',
    tag: 'Tokens',
    summary: 'Latest quant snapshot of a token',
    description:
      'Scores with their drivers, active signals, market, activity, divergence state, the feature vector, an analog summary, ' +
      'model versions and freshness, as of the latest snapshot time. Every value but the analog summary and `freshness.age_ms` ' +
      "is the stored snapshot's. A symbol shared by several tokens names the most active: most mentions in the 24 hours up to " +
      'its latest snapshot, ties to the smallest token id. 404 NOT_FOUND when no token matches, and when the token has no snapshot yet. ' +
      `A new snapshot shows here at most ${(2 * SNAPSHOT_CACHE_TTL_MS) / 1000} s after it reaches the store. ` +
      'With `as_of`, the snapshot of that time: the latest at or before it (404 when the token had none yet), its analog summary over ' +
      'the candidates resolved by its own time, and `freshness.age_ms` counted up to `as_of`; `as_of` without it is the snapshot time.',
    params: TokenParamsSchema,
    query: TokenSnapshotQuerySchema,
    response: { schema: TokenSnapshotSchema, description: 'The latest snapshot, or the one in effect at `as_of`.' },
    errors: ['NOT_FOUND'],
    conditional: true,
    handler: async ({ params, query }) => {
      const asOf = await pointInTime.check(query.as_of, 'query.as_of');
      const { token, snapshot } = await tokenWithSnapshot(params.token, asOf);
      const summary = await analogIndex.summary(snapshot, ANALOG_K_DEFAULT);
      let cached = rendered.get(snapshot);
      if (cached?.token !== token || cached.summary !== summary) {
        const json = renderWire(presentSnapshot(token, snapshot, summary));
        cached = { token, summary, json, digest: createHash('sha256').update(json).digest('base64url').slice(0, 22) };
        rendered.set(snapshot, cached);
      }
      // Weak: the same rendered snapshot at the same as_of, whatever age freshness.age_ms counts.
      const asOfMs = asOf ?? snapshot.ts;
      return withMembers(cached.json, { freshness: presentFreshness(snapshot.freshness, asOf ?? now()), asOf: iso(asOfMs) }, `W/"${cached.digest}.${asOfMs.toString(36)}"`);
    },
  });

  const getAnalogs = defineRoute({
    method: 'GET',
    path: '/v1/quant/token/:token/analogs',
    operationId: 'getTokenAnalogs',
    tag: 'Tokens',
    summary: 'Historical setups most similar to the current snapshot',
    description:
      `Model ${ANALOG_MODEL_VERSION}: the k historical snapshots nearest to the token's latest snapshot over momentum, crowding, ` +
      'early quality, narrative velocity, price momentum, volume acceleration and liquidity, with their 24 h outcomes. Point in ' +
      'time: only snapshots whose 24 h outcome resolved at or before the query snapshot are candidates, and none of the same ' +
      `token within ±24 h of it. The candidate index is reloaded from the store every ${ANALOG_REFRESH_MS / 1000} s. With \`as_of\`, the ` +
      "query is the token's snapshot in effect then, so only candidates resolved by that time are used.",
    params: TokenParamsSchema,
    query: AnalogsQuerySchema,
    response: { schema: TokenAnalogsSchema, description: 'The nearest analogs and their summary.' },
    errors: ['NOT_FOUND'],
    handler: async ({ params, query }): Promise<z.input<typeof TokenAnalogsSchema>> => {
      const asOf = await pointInTime.check(query.as_of, 'query.as_of');
      const { token, snapshot } = await tokenWithSnapshot(params.token, asOf);
      const { neighbours, summary } = await analogIndex.analogs(snapshot, query.k);
      const tokens = await directory.rows(neighbours.map((n) => n.tokenId));
      return {
        ...header('analogs'),
        modelVersion: ANALOG_MODEL_VERSION,
        token: presentToken(token),
        snapshotId: snapshot.snapshotId,
        snapshotTs: iso(snapshot.ts),
        k: query.k,
        summary,
        data: neighbours.map((n) => ({
          snapshotId: n.snapshotId,
          tokenId: n.tokenId,
          token: presentTokenOf(tokens, n.tokenId),
          ts: iso(n.ts),
          distance: n.distance,
          return24h: n.return24h,
          maxDrawdown24h: n.maxDrawdown24h,
        })),
        asOf: iso(asOf ?? snapshot.ts),
        disclaimer: DISCLAIMER,
      };
    },
  });

  const list = defineRoute({
    method: 'GET',
    path: '/v1/quant/tokens',
    operationId: 'listTokens',
    tag: 'Tokens',
    summary: 'Tokens with their current scores',
    description:
      "Every token with a snapshot, with the rule fields of its latest snapshot as of one time, sorted by a rule field (nulls last, " +
      'then by token id) and paginated with a keyset cursor. The time is `as_of` when given; otherwise the newest time up to which ' +
      'every snapshot is stored (the history may still be storing the newest step). `next_cursor` carries the first page\'s `as_of`, ' +
      'so every page reads the same snapshots and following it visits each token exactly once while new snapshots arrive. ' +
      `The settled time is read at most once in ${READ_CACHE_TTL_MS / 1000} s and identical requests within ${READ_CACHE_TTL_MS / 1000} s ` +
      `share one answer, so a live listing is at most ${(2 * READ_CACHE_TTL_MS) / 1000} s behind the store.`,
    query: TokensQuerySchema,
    response: { schema: TokenListSchema, description: 'One page of tokens.' },
    handler: async ({ query }) => {
      const asOf = await pointInTime.check(query.as_of, 'query.as_of');
      return listings.get(`tokens ${JSON.stringify(query)}`, async () => {
        const { as_of: _, ...listing } = query;
        const page = await listTokens(views, { ...listing, asOf });
        return withMembers(LIST_HEADER, {
          data: await scoreRows.render(page.rows),
          hasMore: page.hasMore,
          nextCursor: page.nextCursor,
          asOf: iso(page.asOf),
        });
      });
    },
  });

  const runScan = defineRoute({
    method: 'POST',
    path: '/v1/quant/scan',
    operationId: 'scanTokens',
    tag: 'Tokens',
    summary: 'Filter every token by rules',
    description:
      "Runs the rules against each token's latest snapshot at or before `as_of`; a token passes when every rule does, and a null value " +
      'never passes. A preset adds its rules (and default sort) to those of the body. Without `as_of` in the body, the scan is as of the ' +
      'newest time up to which every snapshot is stored; Free keys scan the snapshots as they were ' +
      `${PLANS.free.features.scannerDelayMinutes} minutes ago (\`delayed_minutes\`), and an \`as_of\` later than that answers 400 VALIDATION. ` +
      `Defaults: \`limit\` ${SCAN_DEFAULT_LIMIT}; without a preset, sort by \`${SCAN_DEFAULT_SORT}\` ${SCAN_DEFAULT_SORT_DIR}. ` +
      `Identical scans of the same plan within ${READ_CACHE_TTL_MS / 1000} s share one answer; with the settled time, read at most ` +
      `once in ${READ_CACHE_TTL_MS / 1000} s, a live scan is at most ${(2 * READ_CACHE_TTL_MS) / 1000} s behind the store.\n\n${SCAN_PRESET_TABLE}`,
    body: ScanBodySchema,
    response: { schema: ScanResultSchema, description: 'The passing tokens.' },
    handler: async ({ body, ctx }) => {
      const preset = body.preset === undefined ? undefined : SCAN_PRESETS[body.preset];
      const rules = [...(preset?.rules ?? []), ...(body.rules ?? [])];
      const sort = body.sort ?? preset?.sort ?? SCAN_DEFAULT_SORT;
      const query: ScanQuery = {
        rules,
        sort,
        sortDir: body.sort_dir ?? preset?.sortDir ?? SCAN_DEFAULT_SORT_DIR,
        limit: body.limit,
        chains: body.chains,
        narrative: body.narrative,
      };
      const delayedMinutes = PLANS[keyOf(ctx).plan].features.scannerDelayMinutes;
      const asked = await pointInTime.check(body.as_of, 'body.as_of', delayedMinutes * 60_000);
      return listings.get(`scan ${delayedMinutes} ${JSON.stringify(body)}`, async () => {
        const settled = asked ?? (await views.settledTime());
        const asOf = asked ?? (delayedMinutes === 0 || settled === null ? settled : Math.min(settled, now() - delayedMinutes * 60_000));
        const rows = await scan(views, query, asOf);
        return withMembers(
          renderWire({
            ...header('scan'),
            preset: body.preset ?? null,
            rules,
            sort,
            sortDir: query.sortDir,
            limit: query.limit,
            chains: body.chains ?? null,
            narrative: body.narrative ?? null,
            asOf: iso(asOf),
            delayedMinutes,
            count: rows.length,
          }),
          { data: await scoreRows.render(rows) },
        );
      });
    },
  });

  return { routes: [getSnapshot, getAnalogs, list, runScan], close: () => analogIndex.close() };
}

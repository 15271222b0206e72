import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config.ts';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import { openStore } from '../../projections/open-store.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { sql } from '../../infra/store/sql-literal.ts';
import { PROJECTIONS } from '../../projections/index.ts';
import { settledSnapshotTime } from '../../projections/read-models/as-of.ts';
import { authorMetrics } from '../../projections/read-models/authors.ts';
import { listCohorts } from '../../projections/read-models/cohorts.ts';
import { heatmap, narrativeMap, rotation } from '../../projections/read-models/narratives.ts';
import { scan } from '../../projections/read-models/scan.ts';
import { getSignal, signalFeed } from '../../projections/read-models/signals.ts';
import { listTokens } from '../../projections/read-models/tokens.ts';
import { replayProjections } from '../../projections/runtime/replay.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import { projectToEnd, runQuantToEnd } from '../helpers/pipeline.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { dumpStore } from '../helpers/store-dump.ts';

/** Every read model the API will serve, asked the same questions. */
async function readModels(store: AnalyticalStore<ProjectionTables>) {
  const tokens = await listTokens(store, { sort: 'momentum', dir: 'desc', limit: 100 });
  const feed = await signalFeed(store, { status: 'all', limit: 100 });
  const firstSignal = feed.rows[0] ? await getSignal(store, feed.rows[0].signalId) : null;
  // The first author with metrics, by id: a stable question for both stores.
  const [{ author }] = await store.query<{ author: string | null }>(sql`SELECT min(author_id) AS author FROM author_metrics`);
  return {
    tokens,
    scan: await scan(
      store,
      { rules: [{ field: 'unique_authors_24h', op: '>=', value: 1 }], sort: 'conviction', sortDir: 'desc', limit: 200 },
      await settledSnapshotTime(store),
    ),
    feed,
    firstSignal,
    author: author ? await authorMetrics(store, author) : null,
    cohorts: await listCohorts(store, { kind: 'all', viewerKeyId: 'key_nobody' }),
    narratives: await narrativeMap(store),
    rotation: await rotation(store, '24h'),
    heatmap: await heatmap(store, { metric: 'theses', bucket: '6h', range: '48h' }),
  };
}

describe('the embedded pipeline: simulated feed → quant engine → projections → read models', () => {
  let dir: string;
  let live: Awaited<ReturnType<typeof readModels>>;
  let liveTables: Awaited<ReturnType<typeof dumpStore>>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-pipeline-'));
    const config = loadConfig({ TQA_DATA_DIR: dir });
    const { log, codec } = await openEmbedded(dir);
    await seedHistory({ log, codec, dataDir: dir, seed: 4242, days: 3, endMs: Date.UTC(2026, 3, 1), tokens: 40, authors: 300 });

    await runQuantToEnd(dir, log, codec);
    const store = await openStore(config, silentLogger);
    await projectToEnd(config, log, codec, store);
    live = await readModels(store);
    liveTables = await dumpStore(store);
    await store.close();
    await log.close();
  }, 480_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('fills every read model from the simulated world', () => {
    // Every token with a snapshot so far (the world launches some of its 40 later).
    expect(live.tokens.rows.length).toBe(liveTables.latest_snapshots.length);
    expect(live.tokens.rows.length).toBeGreaterThan(30);
    expect(live.tokens.rows[0].values).toHaveProperty('momentum');
    expect(live.scan.length).toBeGreaterThan(0);
    expect(live.feed.rows.length).toBeGreaterThan(0);
    expect(live.firstSignal?.signal.signalId).toBe(live.feed.rows[0].signalId);
    // The first author by id has a metrics version: the read model found it by handle-or-id.
    expect(live.author).not.toBeNull();
    expect(live.author!.ts).toBeGreaterThan(0);
    expect(live.cohorts.map((c) => c.cohortId).sort()).toEqual(['cohort_early-movers', 'cohort_top-research']);
    expect(live.narratives.length).toBeGreaterThan(3);
    expect(live.heatmap.rows.length).toBe(live.narratives.length);
    for (const [table, rows] of Object.entries(liveTables)) {
      if (!['dead_letters', 'snapshots', 'api_keys', 'teams', 'webhooks', 'webhook_deliveries', 'backtest_requests', 'backtest_runs', 'backtest_events', 'event_studies'].includes(table)) expect(rows.length, table).toBeGreaterThan(0);
    }
  });

  it('replays the log into an empty store with the same tables and the same read-model answers', async () => {
    const config = loadConfig({ TQA_DATA_DIR: dir });
    const { log, codec } = await openEmbedded(dir);
    const store = await openStore(config, silentLogger, { duckdbPath: join(dir, 'replayed.duckdb') });
    try {
      await replayProjections({ projections: PROJECTIONS, log, codec, store, logger: silentLogger, runId: 'pipeline-test' });
      expect(await dumpStore(store)).toEqual(liveTables);
      expect(await readModels(store)).toEqual(live);
    } finally {
      await store.close();
      await log.close();
    }
  }, 240_000);
});

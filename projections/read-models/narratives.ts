import { z } from 'zod';
import { partitionForKey } from '../../infra/log/partitioner.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { byDialect, column, columns, int64, sql, table, type Sql, type SqlFragment } from '../../infra/store/sql-literal.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { NarrativeContributorSchema, NarrativeTokenCountSchema } from '../../schemas/records/quant-social.ts';
import type { NarrativeSummary } from '../../presenters/narrative.ts';
import type { ProjectionTables } from '../tables.ts';
import { narrativeBuckets as def, type NarrativeBucketRow } from '../tables/social.ts';

/**
 * Narrative read models over the hourly narrative buckets. Each takes `asOf` (epoch ms): only
 * buckets closed by then are read (a bucket's `ts` is the end of its hour, when the engine
 * emits it), so an answer as of a past time is the one given then. Windows end at the end of
 * the latest of those buckets, so answers depend only on the data, not on the clock. Without
 * `asOf`, every stored bucket is read; the API reads as of `settledBucketClose` instead.
 */

const HOUR = 3_600_000;
const DURATION_MS = {
  '1h': HOUR,
  '6h': 6 * HOUR,
  '1d': 24 * HOUR,
  '24h': 24 * HOUR,
  '48h': 48 * HOUR,
  '7d': 7 * 24 * HOUR,
  '30d': 30 * 24 * HOUR,
} as const;

export type RotationWindow = '24h' | '7d';
export type HeatmapMetric = 'theses' | 'author_growth';
export type HeatmapBucket = '1h' | '6h' | '1d';
export type HeatmapRange = '48h' | '7d' | '30d';

/** Coarse author growth compares a bucket with the mean of up to this many buckets of the same size before it. */
const GROWTH_BASELINE_BUCKETS = 4;

const TopTokens = z.array(NarrativeTokenCountSchema);
const TopContributors = z.array(NarrativeContributorSchema);
const AuthorIds = z.array(z.string());

export interface RotationEntry {
  narrative: string;
  /** Mentions of the narrative over all mentions in the window; null when the window had none. */
  share: number | null;
  previousShare: number | null;
  /** share − previousShare; null when either is. */
  change: number | null;
}

export interface Rotation {
  window: RotationWindow;
  /** The window, epoch ms; null when no bucket is stored yet. */
  from: number | null;
  to: number | null;
  /** Largest change first; unknown changes last. */
  narratives: RotationEntry[];
}

export interface HeatmapRow {
  narrative: string;
  /** One value per column; null where the metric is undefined (author growth without a baseline). */
  values: (number | null)[];
  /** value / the row's largest value, in [0, 1]; 0 for null, negative values and rows whose maximum is not positive. */
  intensity: number[];
}

export interface Heatmap {
  metric: HeatmapMetric;
  bucket: HeatmapBucket;
  range: HeatmapRange;
  /** Column starts (epoch ms), aligned to multiples of the bucket size since the epoch (UTC). */
  bucketStarts: number[];
  rows: HeatmapRow[];
}

type Store = AnalyticalStore<ProjectionTables>;

/** Buckets closed by `asOf`; every bucket without it. */
function closedBy(asOf: number | undefined): Sql {
  return asOf === undefined ? sql`${true}` : sql`${column(def, 'ts')} <= ${int64(asOf)}`;
}

/**
 * The time live narrative answers are for (epoch ms): an hour close up to which every bucket
 * is stored; null when there is none. The engine closes every known narrative's bucket each
 * hour (a narrative, once known, stays known) and writes quant.narratives in event-time order
 * within each partition (keyed by slug); the projection stores each partition in order. So
 * once a bucket closing at C is stored from a partition, every bucket of that partition
 * closing before C is too, and those closing at C are all there once each narrative of the
 * partition that closed C − 1 h has closed C as well. The history is complete up to the least
 * of those complete closes over the partitions.
 */
export async function settledBucketClose(store: Store): Promise<number | null> {
  const ts = column(def, 'ts');
  const [latest] = await store.query<{ n: number; latest: number | null }>(sql`SELECT count(*) AS n, max(${ts}) AS latest FROM ${table(def)}`);
  if (latest === undefined || latest.n === 0 || latest.latest === null) return null;
  // Partitions stored far behind the newest close still bound the answer; two days back is plenty for one batch.
  const rows = await store.query<{ narrative: string; ts: number }>(
    sql`SELECT ${columns(def, ['narrative', 'ts'])} FROM ${table(def)} WHERE ${ts} >= ${int64(latest.latest - 48 * HOUR)}`,
  );
  const closes = new Set(rows.map((r) => `${r.narrative}@${r.ts}`));
  const byPartition = new Map<number, { newest: number; narratives: Set<string> }>();
  for (const r of rows) {
    const p = partitionForKey(r.narrative, TOPICS.narratives.partitions);
    const entry = byPartition.get(p) ?? { newest: -Infinity, narratives: new Set<string>() };
    entry.newest = Math.max(entry.newest, r.ts);
    entry.narratives.add(r.narrative);
    byPartition.set(p, entry);
  }
  let settled = Infinity;
  for (const { newest, narratives } of byPartition.values()) {
    const complete = [...narratives].every((n) => !closes.has(`${n}@${newest - HOUR}`) || closes.has(`${n}@${newest}`));
    settled = Math.min(settled, complete ? newest : newest - HOUR);
  }
  return settled;
}

/** Per narrative, its latest hourly bucket (closed by `asOf` when given). */
export async function narrativeMap(store: Store, asOf?: number): Promise<NarrativeSummary[]> {
  const narrative = column(def, 'narrative');
  const start = column(def, 'bucket_start');
  // Latest row per narrative without window functions in ClickHouse 18.16: LIMIT 1 BY.
  const rows = await store.query<NarrativeBucketRow>(
    sql`SELECT ${columns(def)} FROM ${table(def)} WHERE ${closedBy(asOf)}
        ${byDialect({ duckdb: sql`QUALIFY row_number() OVER (PARTITION BY ${narrative} ORDER BY ${start} DESC) = 1`, clickhouse: sql`` })}
        ORDER BY ${narrative}, ${start} DESC
        ${byDialect({ duckdb: sql``, clickhouse: sql`LIMIT 1 BY ${narrative}` })}`,
  );
  return rows.map(toSummary);
}

/** One narrative by slug, from its latest bucket (closed by `asOf` when given); null when unknown then. */
export async function getNarrative(store: Store, slug: string, asOf?: number): Promise<NarrativeSummary | null> {
  const rows = await store.query<NarrativeBucketRow>(
    sql`SELECT ${columns(def)} FROM ${table(def)} WHERE ${column(def, 'narrative')} = ${slug} AND ${closedBy(asOf)}
        ORDER BY ${column(def, 'bucket_start')} DESC LIMIT 1`,
  );
  const row = rows[0];
  return row === undefined ? null : toSummary(row);
}

/**
 * Attention-share change per narrative: over the window ending at `end` and the window of
 * the same length before it, share = Σ the narrative's mentions / Σ all mentions. Each
 * hour's total counts once (every narrative's bucket carries the same hour total), so a
 * narrative missing from some hours is still measured against all mentions.
 */
export async function rotation(store: Store, window: RotationWindow, asOf?: number): Promise<Rotation> {
  const length = DURATION_MS[window];
  const to = await latestEnd(store, asOf);
  if (to === null) return { window, from: null, to: null, narratives: [] };
  const from = to - length;
  const since = from - length;
  const start = column(def, 'bucket_start');
  const mentions = column(def, 'mentions');
  const range = sql`${start} >= ${int64(since)} AND ${start} < ${int64(to)} AND ${closedBy(asOf)}`;

  const perNarrative = await store.query<{ narrative: string; current: number; previous: number }>(
    sql`SELECT ${column(def, 'narrative')} AS narrative,
          sum(CASE WHEN ${start} >= ${int64(from)} THEN ${mentions} ELSE 0 END) AS current,
          sum(CASE WHEN ${start} < ${int64(from)} THEN ${mentions} ELSE 0 END) AS previous
        FROM ${table(def)} WHERE ${range}
        GROUP BY ${column(def, 'narrative')} ORDER BY ${column(def, 'narrative')}`,
  );
  const hours = await store.query<{ bucket_start: number; total: number }>(
    sql`SELECT ${start} AS bucket_start, max(${column(def, 'total_mentions')}) AS total
        FROM ${table(def)} WHERE ${range} GROUP BY ${start}`,
  );
  let currentTotal = 0;
  let previousTotal = 0;
  for (const h of hours) {
    if (h.bucket_start >= from) currentTotal += h.total;
    else previousTotal += h.total;
  }
  const share = (n: number, total: number): number | null => (total === 0 ? null : n / total);
  const narratives = perNarrative.map((r): RotationEntry => {
    const now = share(r.current, currentTotal);
    const before = share(r.previous, previousTotal);
    return { narrative: r.narrative, share: now, previousShare: before, change: now === null || before === null ? null : now - before };
  });
  narratives.sort((a, b) => (b.change ?? -Infinity) - (a.change ?? -Infinity) || a.narrative.localeCompare(b.narrative));
  return { window, from, to, narratives };
}

/**
 * Narratives × time. Columns are `bucket`-sized, aligned to multiples of the size, the last
 * one holding `end`; together they cover `range`.
 * - theses: the hourly theses added up per column; a column without buckets is 0.
 * - author_growth, 1h: the hourly bucket's own author growth (the processor's, against the
 *   mean unique authors of the 24 hours before).
 * - author_growth, 6h and 1d: (u + 1) / (mean of u over the up to 4 previous columns of the
 *   same size that hold buckets of the narrative + 1) − 1, where u is the number of distinct
 *   authors of the column (the union of its hours' author ids); null without such a column
 *   or when the column itself holds no bucket.
 */
export async function heatmap(
  store: Store,
  query: { metric: HeatmapMetric; bucket: HeatmapBucket; range: HeatmapRange },
  asOf?: number,
): Promise<Heatmap> {
  const size = DURATION_MS[query.bucket];
  const span = DURATION_MS[query.range];
  const latest = await latestEnd(store, asOf);
  if (latest === null) return { ...query, bucketStarts: [], rows: [] };
  const gridEnd = Math.ceil(latest / size) * size;
  const gridStart = gridEnd - span;
  const count = span / size;
  const bucketStarts = Array.from({ length: count }, (_, i) => gridStart + i * size);

  const cells =
    query.metric === 'theses'
      ? await thesesCells(store, gridStart, gridEnd, size, asOf)
      : query.bucket === '1h'
        ? await hourlyGrowthCells(store, gridStart, gridEnd, asOf)
        : await coarseGrowthCells(store, gridStart, gridEnd, size, asOf);

  const rows = [...cells.keys()].sort().map((narrative): HeatmapRow => {
    const byIndex = cells.get(narrative)!;
    const empty = query.metric === 'theses' ? 0 : null;
    const values = bucketStarts.map((_, i) => (byIndex.has(i) ? byIndex.get(i)! : empty));
    const max = Math.max(0, ...values.map((v) => v ?? 0));
    const intensity = values.map((v) => (v === null || v <= 0 || max === 0 ? 0 : v / max));
    return { narrative, values, intensity };
  });
  return { ...query, bucketStarts, rows };
}

/** Column index → value, per narrative; narratives with no bucket in the range are absent. */
type Cells = Map<string, Map<number, number | null>>;

function cellIndex(gridStart: number, size: number): SqlFragment {
  // floor of a float division: the same in both stores, unlike their integer division.
  return sql`floor((${column(def, 'bucket_start')} - ${int64(gridStart)}) / ${int64(size)})`;
}

async function thesesCells(store: Store, gridStart: number, gridEnd: number, size: number, asOf: number | undefined): Promise<Cells> {
  const start = column(def, 'bucket_start');
  const rows = await store.query<{ narrative: string; cell: number; value: number }>(
    sql`SELECT ${column(def, 'narrative')} AS narrative, ${cellIndex(gridStart, size)} AS cell, sum(${column(def, 'theses')}) AS value
        FROM ${table(def)} WHERE ${start} >= ${int64(gridStart)} AND ${start} < ${int64(gridEnd)} AND ${closedBy(asOf)}
        GROUP BY narrative, cell`,
  );
  const cells: Cells = new Map();
  for (const r of rows) cellsOf(cells, r.narrative).set(r.cell, r.value);
  return cells;
}

async function hourlyGrowthCells(store: Store, gridStart: number, gridEnd: number, asOf: number | undefined): Promise<Cells> {
  const start = column(def, 'bucket_start');
  const rows = await store.query<{ narrative: string; bucket_start: number; author_growth: number | null }>(
    sql`SELECT ${columns(def, ['narrative', 'bucket_start', 'author_growth'])}
        FROM ${table(def)} WHERE ${start} >= ${int64(gridStart)} AND ${start} < ${int64(gridEnd)} AND ${closedBy(asOf)}`,
  );
  const cells: Cells = new Map();
  for (const r of rows) cellsOf(cells, r.narrative).set((r.bucket_start - gridStart) / HOUR, r.author_growth);
  return cells;
}

async function coarseGrowthCells(
  store: Store,
  gridStart: number,
  gridEnd: number,
  size: number,
  asOf: number | undefined,
): Promise<Cells> {
  const from = gridStart - GROWTH_BASELINE_BUCKETS * size;
  const start = column(def, 'bucket_start');
  const rows = await store.query<{ narrative: string; bucket_start: number; author_ids: string }>(
    sql`SELECT ${columns(def, ['narrative', 'bucket_start', 'author_ids'])}
        FROM ${table(def)} WHERE ${start} >= ${int64(from)} AND ${start} < ${int64(gridEnd)} AND ${closedBy(asOf)}`,
  );
  // Distinct authors per narrative and column; columns before the grid (negative) feed the baseline.
  const authors = new Map<string, Map<number, Set<string>>>();
  for (const r of rows) {
    let perColumn = authors.get(r.narrative);
    if (!perColumn) authors.set(r.narrative, (perColumn = new Map()));
    const index = Math.floor((r.bucket_start - gridStart) / size);
    let set = perColumn.get(index);
    if (!set) perColumn.set(index, (set = new Set()));
    for (const id of AuthorIds.parse(JSON.parse(r.author_ids))) set.add(id);
  }
  const cells: Cells = new Map();
  const count = (gridEnd - gridStart) / size;
  for (const [narrative, perColumn] of authors) {
    for (let i = 0; i < count; i++) {
      const current = perColumn.get(i);
      if (current === undefined) continue;
      const baseline: number[] = [];
      for (let j = i - GROWTH_BASELINE_BUCKETS; j < i; j++) {
        const before = perColumn.get(j);
        if (before !== undefined) baseline.push(before.size);
      }
      const mean = baseline.reduce((s, u) => s + u, 0) / baseline.length;
      cellsOf(cells, narrative).set(i, baseline.length === 0 ? null : (current.size + 1) / (mean + 1) - 1);
    }
  }
  return cells;
}

function cellsOf(cells: Cells, narrative: string): Map<number, number | null> {
  let byIndex = cells.get(narrative);
  if (!byIndex) cells.set(narrative, (byIndex = new Map()));
  return byIndex;
}

/** End of the latest stored bucket (closed by `asOf` when given); null when there is none. */
async function latestEnd(store: Store, asOf: number | undefined): Promise<number | null> {
  const rows = await store.query<{ n: number; latest: number | null }>(
    sql`SELECT count(*) AS n, max(${column(def, 'bucket_start')}) AS latest FROM ${table(def)} WHERE ${closedBy(asOf)}`,
  );
  const row = rows[0];
  // ClickHouse gives 0, not NULL, as the max of no rows: the count tells them apart.
  return row === undefined || row.n === 0 || row.latest === null ? null : row.latest + HOUR;
}

function toSummary(row: NarrativeBucketRow): NarrativeSummary {
  return {
    narrative: row.narrative,
    bucketStart: row.bucket_start,
    attentionShare: row.attention_share,
    attentionShare24h: row.attention_share24h,
    attentionShareChange24h: row.attention_share_change24h,
    theses: row.theses,
    mentions: row.mentions,
    uniqueAuthors: row.unique_authors,
    newAuthors: row.new_authors,
    authorGrowth: row.author_growth,
    topTokens: TopTokens.parse(JSON.parse(row.top_tokens)),
    topContributors: TopContributors.parse(JSON.parse(row.top_contributors)),
  };
}

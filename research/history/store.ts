import { DEAD_STATUSES } from '../../processors/quant-engine/outcomes/outcomes.ts';
import { byDialect, column, float64, int64, list, quoteIdentifier, sql, SqlFragment, table, type Sql } from '../../infra/store/sql-literal.ts';
import { allOf, known, type ReadStore } from '../../projections/read-models/cursor.ts';
import { snapshotHistory } from '../../projections/tables/quant.ts';
import { tokens } from '../../presenters/tokens-table.ts';
import type {
  BaselineQuery,
  CandidatePage,
  CandidateQuery,
  FieldCondition,
  HistoryBounds,
  HistorySource,
  PathEntry,
  PricePath,
  UniverseFilter,
} from './source.ts';

/**
 * HistorySource over a read store (DuckDB or ClickHouse 18.16, which has neither window
 * functions nor range joins). The rule filter runs in SQL, so only snapshots on which the
 * rule held leave the store; price paths are aggregated in SQL too, one row per entry.
 *
 * Paths join entries to snapshots by (token, slot of the horizon's length): the window
 * (t, t + h] lies within t's slot and the next, so each entry meets at most 2h of its
 * token's snapshots, an equality join both stores run in bulk.
 */

/** Event time per candidates page: a week keeps pages few and still lets a run stop between them. */
const PAGE_MS = 7 * 86_400_000;
/** A change is measured against the token's previous snapshot within this long before. */
export const CHANGE_LOOKBACK_MS = 86_400_000;
/**
 * Characters of entry literals per path query. ClickHouse refuses statements over 256 KiB
 * (max_query_size) and writes the entries twice (no table CTEs in 18.16): 100k keeps a
 * statement well inside, at about 1,300 entries.
 */
const PATH_LITERAL_BUDGET = 100_000;
/** Literal characters of one entry besides its token id: a time, two floats, separators. */
const ENTRY_LITERAL_CHARS = 64;

const S = snapshotHistory;
const ts = column(S, 'ts');
const tokenId = column(S, 'token_id');
const price = column(S, 'price_usd');
const liquidity = column(S, 'liquidity_usd');

const OPS: Readonly<Record<FieldCondition['op'], Sql>> = { '>': sql`>`, '>=': sql`>=`, '<': sql`<`, '<=': sql`<=` };

function universeConditions(universe: UniverseFilter): Sql[] {
  const where: Sql[] = [];
  if (universe.chains !== undefined && universe.chains.length > 0) where.push(sql`${column(S, 'chain')} IN ${list(universe.chains)}`);
  if (universe.minLiquidityUsd !== undefined) where.push(known(sql`${liquidity} >= ${float64(universe.minLiquidityUsd)}`));
  return where;
}

/** The column holding a field's value at the token's previous snapshot, in a changes source. */
function previousName(field: string): string {
  return `prev_${field}`;
}

/** The change of a field since the token's previous snapshot, or NULL when there was none within CHANGE_LOOKBACK_MS. */
function changeOf(field: string): Sql {
  return sql`CASE WHEN ${ts} - prev_ts <= ${int64(CHANGE_LOOKBACK_MS)} THEN ${column(S, field)} - ${sqlName(previousName(field))} END`;
}

function conditionSql(c: FieldCondition): Sql {
  const measured = c.measure === 'change' ? changeOf(c.field) : sql`${column(S, c.field)}`;
  return known(sql`${measured} ${OPS[c.op]} ${float64(c.value)}`);
}

/** A column alias built from an allow-listed field name (prev_<field>, chg_<field>, a_<column>). */
class DerivedName extends SqlFragment {
  constructor(private readonly name: string) {
    super();
  }

  render(): string {
    return quoteIdentifier(this.name);
  }
}

function sqlName(name: string): SqlFragment {
  return new DerivedName(name);
}

interface RawCandidate {
  token_id: string;
  ts: number;
  chain: string;
  price_usd: number | null;
  liquidity_usd: number | null;
  [field: string]: string | number | null;
}

type RawPath = {
  token_id: string;
  ets: number;
  eprice: number;
  eliq: number | null;
  ticks: number;
  first_ts: number | null;
  last_ts: number | null;
  last_price: number | null;
  min_price: number | null;
  max_price: number | null;
  peak_ts: number | null;
  min_liq: number | null;
};

export function storeHistory(store: ReadStore): HistorySource {
  async function deadSince(): Promise<Map<string, number>> {
    const rows = await store.query<{ token_id: string; ts: number }>(
      sql`SELECT ${column(tokens, 'token_id')} AS token_id, ${column(tokens, 'ts')} AS ts FROM ${table(tokens)}
          WHERE ${column(tokens, 'status')} IN ${list(DEAD_STATUSES)}`,
    );
    return new Map(rows.map((r) => [r.token_id, r.ts]));
  }

  /**
   * The rows of S a candidates page reads. With change conditions, each row also carries the
   * token's previous snapshot time (prev_ts) and previous values (prev_<field>), read from
   * CHANGE_LOOKBACK_MS before the page so the page's first rows have theirs.
   */
  function candidateSource(changed: readonly string[], from: number, to: number): Sql {
    const window = sql`${ts} >= ${int64(from)} AND ${ts} <= ${int64(to)}`;
    if (changed.length === 0) return sql`SELECT * FROM ${table(S)} WHERE ${window}`;
    const lookback = sql`${ts} >= ${int64(from - CHANGE_LOOKBACK_MS)} AND ${ts} <= ${int64(to)}`;
    const lagged = changed.map((f) => sql`, lag(${column(S, f)}) OVER w AS ${sqlName(previousName(f))}`);
    // ClickHouse 18.16 has no lag(): each token's rows become arrays sorted by time, and the
    // previous values are those arrays shifted by one (0 as the first row's previous time).
    const names = S.columns.map((c) => c.name);
    const byTime = (values: Sql): Sql => sql`arraySort((v, t) -> t, ${values}, groupArray(${ts}))`;
    const arrays = [
      ...names.map((n) => sql`${byTime(sql`groupArray(${column(S, n)})`)} AS ${sqlName(`a_${n}`)}`),
      ...changed.map((f) => sql`arrayPopBack(arrayPushFront(${byTime(sql`groupArray(${column(S, f)})`)}, NULL)) AS ${sqlName(`a_${previousName(f)}`)}`),
      sql`arrayPopBack(arrayPushFront(arraySort(groupArray(${ts})), 0)) AS a_prev_ts`,
    ];
    const output = [...names, ...changed.map(previousName), 'prev_ts'];
    const unnested = output.map((n) => sql`${sqlName(`a_${n}`)} AS ${sqlName(n)}`);
    return sql`${byDialect({
      duckdb: sql`SELECT *${join(lagged)}, lag(${ts}) OVER w AS prev_ts FROM ${table(S)} WHERE ${lookback} WINDOW w AS (PARTITION BY ${tokenId} ORDER BY ${ts})`,
      clickhouse: sql`SELECT ${commaJoin(output.map(sqlName))} FROM (SELECT ${commaJoin(arrays)} FROM (SELECT * FROM ${table(S)} WHERE ${lookback}) GROUP BY ${tokenId})
        ARRAY JOIN ${commaJoin(unnested)}`,
    })}`;
  }

  async function* candidates(query: CandidateQuery, options?: { signal?: AbortSignal }): AsyncIterable<CandidatePage> {
    const fields = [...new Set([...query.fields, ...query.conditions.map((c) => c.field)])];
    const changed = [...new Set(query.conditions.filter((c) => c.measure === 'change').map((c) => c.field))];
    const where = (from: number, to: number): Sql =>
      allOf([sql`${ts} >= ${int64(from)} AND ${ts} <= ${int64(to)}`, ...query.conditions.map(conditionSql), ...universeConditions(query.universe)]);
    for (let from = query.from; from <= query.to; from += PAGE_MS) {
      options?.signal?.throwIfAborted();
      const to = Math.min(query.to, from + PAGE_MS - 1);
      const selectFields = fields.map((f) => sql`, ${column(S, f)} AS ${sqlName(f)}`);
      const selectChanges = changed.map((f) => sql`, ${changeOf(f)} AS ${sqlName(`chg_${f}`)}`);
      const rows = await store.query<RawCandidate>(
        sql`SELECT ${tokenId} AS token_id, ${ts} AS ts, ${column(S, 'chain')} AS chain, ${price} AS price_usd, ${liquidity} AS liquidity_usd
              ${join(selectFields)}${join(selectChanges)}
            FROM (${candidateSource(changed, from, to)}) AS source WHERE ${where(from, to)} ORDER BY ts, token_id`,
      );
      yield {
        until: to,
        candidates: rows.map((r) => {
        const values: Record<string, number | null> = {};
        for (const f of fields) values[f] = r[f] as number | null;
        for (const f of changed) values[`${f}:change`] = r[`chg_${f}`] as number | null;
        return { tokenId: r.token_id, ts: r.ts, chain: r.chain, priceUsd: r.price_usd, liquidityUsd: r.liquidity_usd, values };
        }),
      };
    }
  }

  /** Aggregates each entry's window; `entries` yields token_id, ets, eprice, eliq. */
  async function paths(entries: Sql, lo: number, hi: number, horizonMs: number): Promise<RawPath[]> {
    const h = int64(horizonMs);
    const inWindow = sql`pts > ets AND pts <= ets + ${h}`;
    // DuckDB takes the window into the join condition (a residual predicate of the hash join), so
    // an entry meets only its window's rows; ClickHouse 18.16 joins on equalities only and
    // filters in -If aggregates (an unmatched row there has pts 0, outside every window).
    const agg = (duck: Sql, ch: Sql): SqlFragment => byDialect({ duckdb: duck, clickhouse: ch });
    // Each entry twice, once per slot its window touches. DuckDB reads the entries once (a
    // CTE); ClickHouse 18.16 has no table CTEs, so there they are written twice.
    const both = (source: Sql | SqlFragment): Sql => sql`(
            SELECT token_id, ets, eprice, eliq, ets - ets % ${h} AS bucket FROM ${source} AS e0
            UNION ALL
            SELECT token_id, ets, eprice, eliq, ets - ets % ${h} + ${h} AS bucket FROM ${source} AS e1
          )`;
    const entriesBoth = byDialect({ duckdb: both(sql`entries`), clickhouse: both(sql`(${entries})`) });
    const pathRows = sql`(
            SELECT ${tokenId} AS ptoken, ${ts} - ${ts} % ${h} AS pbucket, ${ts} AS pts,
              ${byDialect({ duckdb: sql`${price}`, clickhouse: sql`assumeNotNull(${price})` })} AS pprice, ${liquidity} AS pliq
            FROM ${table(S)}
            WHERE ${ts} > ${int64(lo)} AND ${ts} <= ${int64(hi)} AND ${price} IS NOT NULL
          )`;
    const joined = byDialect({
      duckdb: sql`${entriesBoth} AS e LEFT JOIN ${pathRows} AS p ON p.ptoken = e.token_id AND p.pbucket = e.bucket AND ${inWindow}`,
      // 18.16 joins USING same-named columns, so the path side renames its keys back; it
      // hashes the right side, so the few entries go there and the rows stream past them.
      clickhouse: sql`(SELECT ptoken AS token_id, pbucket AS bucket, pts, pprice, pliq FROM ${pathRows}) AS p ALL RIGHT JOIN ${entriesBoth} AS e USING (token_id, bucket)`,
    });
    // An entry's price and liquidity are one value per (token_id, ets): min() carries them
    // through without widening the group key with two floats.
    return store.query<RawPath>(
      sql`${byDialect({ duckdb: sql`WITH entries AS (${entries})`, clickhouse: sql`` })}
          SELECT token_id, ets, min(eprice) AS eprice, min(eliq) AS eliq,
            ${agg(sql`count(pts)`, sql`countIf(${inWindow})`)} AS ticks,
            ${agg(sql`min(pts)`, sql`minIf(pts, ${inWindow})`)} AS first_ts,
            ${agg(sql`max(pts)`, sql`maxIf(pts, ${inWindow})`)} AS last_ts,
            ${agg(sql`arg_max(pprice, pts)`, sql`argMaxIf(pprice, pts, ${inWindow})`)} AS last_price,
            ${agg(sql`min(pprice)`, sql`minIf(pprice, ${inWindow})`)} AS min_price,
            ${agg(sql`max(pprice)`, sql`maxIf(pprice, ${inWindow})`)} AS max_price,
            ${agg(sql`-((max({'p': pprice, 't': -pts}) FILTER (WHERE pts IS NOT NULL)).t)`, sql`argMaxIf(pts, tuple(pprice, -pts), ${inWindow})`)} AS peak_ts,
            ${agg(sql`min(pliq)`, sql`minIf(pliq, ${inWindow})`)} AS min_liq
          FROM ${joined}
          GROUP BY token_id, ets`,
    );
  }

  function toPath(r: RawPath, dead: Map<string, number>): PricePath {
    const seen = r.ticks > 0;
    return {
      tokenId: r.token_id,
      ts: r.ets,
      entryPrice: r.eprice,
      entryLiquidity: r.eliq,
      ticks: r.ticks,
      firstTs: seen ? r.first_ts : null,
      lastTs: seen ? r.last_ts : null,
      lastPrice: seen ? r.last_price : null,
      minPrice: seen ? r.min_price : null,
      maxPrice: seen ? r.max_price : null,
      peakTs: seen ? r.peak_ts : null,
      minLiquidity: seen ? r.min_liq : null,
      deadSince: dead.get(r.token_id) ?? null,
    };
  }

  return {
    async bounds(): Promise<HistoryBounds | null> {
      const [row] = await store.query<{ first: number | null; last: number | null; n: number }>(
        sql`SELECT min(${ts}) AS first, max(${ts}) AS last, count(*) AS n FROM ${table(S)}`,
      );
      return row && row.n > 0 && row.first !== null && row.last !== null ? { first: row.first, last: row.last } : null;
    },

    candidates,

    async pricePaths(entries: readonly PathEntry[], horizonMs: number): Promise<PricePath[]> {
      if (entries.length === 0) return [];
      const dead = await deadSince();
      const byKey = new Map<string, PricePath>();
      for (const batch of literalBatches(entries)) {
        const ids = batch.map((e) => e.tokenId);
        const times = batch.map((e) => e.ts);
        const prices = batch.map((e) => e.entryPrice);
        // Entry liquidity goes as NaN-free floats; -1 stands for unknown and is mapped back below.
        const liqs = batch.map((e) => e.entryLiquidity ?? -1);
        const literal = byDialect({
          duckdb: sql`SELECT unnest(${ids}) AS token_id, unnest(${times}) AS ets, unnest(${floats(prices)}) AS eprice, unnest(${floats(liqs)}) AS eliq`,
          clickhouse: sql`SELECT token_id, ets, eprice, eliq FROM system.one ARRAY JOIN ${ids} AS token_id, ${times} AS ets, ${floats(prices)} AS eprice, ${floats(liqs)} AS eliq`,
        });
        const lo = Math.min(...times);
        const hi = Math.max(...times) + horizonMs;
        const rows = await paths(sql`${literal}`, lo, hi, horizonMs);
        for (const r of rows) byKey.set(`${r.token_id}\u001f${r.ets}`, toPath({ ...r, eliq: r.eliq === null || r.eliq < 0 ? null : r.eliq }, dead));
      }
      return entries.map((e) => byKey.get(`${e.tokenId}\u001f${e.ts}`)!);
    },

    async baselinePaths(query: BaselineQuery, horizonMs: number): Promise<PricePath[]> {
      const dead = await deadSince();
      const slot = sql`intDiv(${ts} - ${int64(query.from)}, ${int64(query.spacingMs)})`;
      const slotDuck = sql`(${ts} - ${int64(query.from)}) // ${int64(query.spacingMs)}`;
      const where = allOf([sql`${ts} >= ${int64(query.from)} AND ${ts} <= ${int64(query.to)}`, known(sql`${price} > ${float64(0)}`), ...universeConditions(query.universe)]);
      const sample = byDialect({
        duckdb: sql`SELECT ${tokenId} AS token_id, min(${ts}) AS ets, arg_min(${price}, ${ts}) AS eprice, arg_min(${liquidity}, ${ts}) AS eliq
                    FROM ${table(S)} WHERE ${where} GROUP BY ${tokenId}, ${slotDuck}`,
        clickhouse: sql`SELECT ${tokenId} AS token_id, min(${ts}) AS ets, argMin(${price}, ${ts}) AS eprice, argMin(${liquidity}, ${ts}) AS eliq
                    FROM ${table(S)} WHERE ${where} GROUP BY ${tokenId}, ${slot}`,
      });
      const rows = await paths(sql`${sample}`, query.from, query.to + horizonMs, horizonMs);
      rows.sort((a, b) => a.ets - b.ets || (a.token_id < b.token_id ? -1 : a.token_id > b.token_id ? 1 : 0));
      return rows.map((r) => toPath(r, dead));
    },

    async countSnapshots(from: number, to: number): Promise<number> {
      const [row] = await store.query<{ n: number }>(
        sql`SELECT count(*) AS n FROM ${table(S)} WHERE ${ts} >= ${int64(from)} AND ${ts} <= ${int64(to)}`,
      );
      return row?.n ?? 0;
    },
  };
}

/** Consecutive runs of entries whose literals fit PATH_LITERAL_BUDGET; in time order, so each spans a short time range. */
function literalBatches(entries: readonly PathEntry[]): PathEntry[][] {
  const batches: PathEntry[][] = [];
  let batch: PathEntry[] = [];
  let chars = 0;
  for (const e of entries) {
    const size = e.tokenId.length + ENTRY_LITERAL_CHARS;
    if (batch.length > 0 && chars + size > PATH_LITERAL_BUDGET) {
      batches.push(batch);
      batch = [];
      chars = 0;
    }
    batch.push(e);
    chars += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

function join(parts: readonly Sql[]): Sql {
  return parts.reduce((a, b) => sql`${a}${b}`, sql``);
}

function commaJoin(parts: readonly (Sql | SqlFragment)[]): Sql {
  return parts.reduce<Sql>((a, b, i) => (i === 0 ? sql`${b}` : sql`${a}, ${b}`), sql``);
}

/** An array literal every store reads as floats, even when every value happens to be integral. */
function floats(values: readonly number[]): SqlFragment {
  return byDialect({
    duckdb: sql`CAST(${values} AS DOUBLE[])`,
    clickhouse: sql`arrayMap(x -> toFloat64(x), ${values})`,
  });
}

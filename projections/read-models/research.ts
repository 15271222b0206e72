import { column, columns, int64, list, sql, table } from '../../infra/store/sql-literal.ts';
import { backtestEvents, backtestRequests, backtestRuns, eventStudies, type BacktestEventsRow, type BacktestRequestRow, type BacktestRunRow, type EventStudyRow } from '../tables/research.ts';
import { eventsPartsOf, joinedResult } from './backtest-events.ts';
import { allOf, decodeCursor, encodeCursor, filtersHash, type Page, type ReadStore } from './cursor.ts';

/** A backtest run as the store knows it: the request, and what the research role recorded (null while queued). */
export interface BacktestView {
  request: BacktestRequestRow;
  run: BacktestRunRow | null;
}

const TERMINAL = ['done', 'failed', 'canceled'];

async function runsOf(store: ReadStore, ids: readonly string[]): Promise<Map<string, BacktestRunRow>> {
  if (ids.length === 0) return new Map();
  const rows = await store.query<BacktestRunRow>(
    sql`SELECT ${columns(backtestRuns)} FROM ${table(backtestRuns)} WHERE ${column(backtestRuns, 'run_id')} IN ${list(ids)}`,
  );
  return new Map(rows.map((r) => [r.run_id, r]));
}

/**
 * The runs with their results whole: a done run whose events are in parts (backtest-events.ts)
 * gets them back; one whose parts are not all stored yet (another projection writes them) is
 * shown as it was before done, running, rather than with a result that lacks events.
 */
async function withEventsJoined(store: ReadStore, runs: Map<string, BacktestRunRow>): Promise<Map<string, BacktestRunRow>> {
  const split = [...runs.values()].flatMap((run) => {
    const parts = run.status === 'done' && run.result !== null ? eventsPartsOf(run.result) : null;
    return parts === null ? [] : [{ run, rest: run.result!, parts }];
  });
  if (split.length === 0) return runs;
  const rows = await store.query<BacktestEventsRow>(
    sql`SELECT ${columns(backtestEvents)} FROM ${table(backtestEvents)} WHERE ${column(backtestEvents, 'run_id')} IN ${list(split.map(({ run }) => run.run_id))}`,
  );
  // A store that merges versions late (ClickHouse) may still hold a part twice: the newest counts.
  const stored = new Map<string, BacktestEventsRow>();
  for (const row of rows) {
    const at = `${row.run_id} ${row.part}`;
    if ((stored.get(at)?.ts ?? -Infinity) < row.ts) stored.set(at, row);
  }
  for (const { run, rest, parts } of split) {
    const result = joinedResult(rest, parts, (part) => stored.get(`${run.run_id} ${part}`)?.events);
    runs.set(run.run_id, result !== null ? { ...run, result } : { ...run, status: 'running', finished_at: null, result: null });
  }
  return runs;
}

/** One run by id, any owner; null when no request has that id. */
export async function getBacktest(store: ReadStore, runId: string): Promise<BacktestView | null> {
  const [request] = await store.query<BacktestRequestRow>(
    sql`SELECT ${columns(backtestRequests)} FROM ${table(backtestRequests)} WHERE ${column(backtestRequests, 'run_id')} = ${runId}`,
  );
  if (request === undefined) return null;
  return { request, run: (await withEventsJoined(store, await runsOf(store, [runId]))).get(runId) ?? null };
}

/** A key's runs, newest first, page by page. */
export async function backtestsOfKey(store: ReadStore, keyId: string, limit: number, cursor?: string): Promise<Page<BacktestView>> {
  const r = backtestRequests;
  const ordering = 'backtests:created_at:desc';
  const filters = filtersHash({ keyId });
  // A key's runs change status as they run: the listing is read as it stands, not as of a time.
  const after = cursor === undefined ? null : decodeCursor(cursor, ordering, filters).position;
  const conditions = [sql`${column(r, 'key_id')} = ${keyId}`];
  if (after !== null) {
    const at = int64(after.value ?? 0);
    conditions.push(sql`(${column(r, 'created_at')} < ${at} OR (${column(r, 'created_at')} = ${at} AND ${column(r, 'run_id')} < ${after.id}))`);
  }
  const rows = await store.query<BacktestRequestRow>(
    sql`SELECT ${columns(r)} FROM ${table(r)} WHERE ${allOf(conditions)}
        ORDER BY ${column(r, 'created_at')} DESC, ${column(r, 'run_id')} DESC LIMIT ${int64(limit + 1)}`,
  );
  const page = rows.slice(0, limit);
  const runs = await withEventsJoined(store, await runsOf(store, page.map((p) => p.run_id)));
  const last = page.at(-1);
  const hasMore = rows.length > limit;
  return {
    rows: page.map((request) => ({ request, run: runs.get(request.run_id) ?? null })),
    hasMore,
    nextCursor: hasMore && last ? encodeCursor(ordering, filters, { value: last.created_at, id: last.run_id }, null) : null,
    asOf: null,
  };
}

/** How many of a key's runs are queued or running: what its plan's concurrency limit counts. */
export async function activeBacktestsOfKey(store: ReadStore, keyId: string): Promise<number> {
  const ids = (
    await store.query<{ run_id: string }>(
      sql`SELECT ${column(backtestRequests, 'run_id')} AS run_id FROM ${table(backtestRequests)} WHERE ${column(backtestRequests, 'key_id')} = ${keyId}`,
    )
  ).map((r) => r.run_id);
  const runs = await runsOf(store, ids);
  return ids.filter((id) => !TERMINAL.includes(runs.get(id)?.status ?? 'queued')).length;
}

/** Every event study's latest stored result. */
export async function eventStudyResults(store: ReadStore): Promise<EventStudyRow[]> {
  return store.query<EventStudyRow>(sql`SELECT ${columns(eventStudies)} FROM ${table(eventStudies)} ORDER BY ${column(eventStudies, 'slug')}`);
}

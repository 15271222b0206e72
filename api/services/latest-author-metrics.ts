import { column, columns, sql } from '../../infra/store/sql-literal.ts';
import { authorMetrics, authorName, toMetrics } from '../../projections/read-models/authors.ts';
import type { ReadStore } from '../../projections/read-models/cursor.ts';
import { compareText } from '../../projections/read-models/text-order.ts';
import { authorMetrics as def, type AuthorMetricsRow } from '../../projections/tables/social.ts';
import type { AuthorMetrics } from '../../schemas/records/quant-social.ts';
import { HourlyMirror } from './hourly-mirror.ts';

export interface LatestAuthorMetricsOptions {
  store: ReadStore;
  now: () => number;
}

/** A version with its handle lowered by the store, as authorMetrics' SQL compares it. */
type HeldRow = AuthorMetricsRow & { handle_key: string };

/** Lowering agrees between JavaScript and both stores (ClickHouse's lower() is ASCII-only) for ASCII text. */
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Whether `row` comes before `held` in authorMetrics' order (newest version first, then the
 * lowest author id); a row of the same key (author and time) is the newer write of it.
 */
function isBefore(row: HeldRow, held: HeldRow | undefined): boolean {
  return held === undefined || row.ts > held.ts || (row.ts === held.ts && compareText(row.author_id, held.author_id) <= 0);
}

/**
 * Author metrics (GET /v1/quant/users/{handle}) answered from memory without `as_of`: the
 * latest version of each author id and of each lowered handle, followed from the store by an
 * HourlyMirror (by version time). authorMetrics' SQL reads every version of every author to
 * find one, for a few hundred new versions an hour. A name matches the versions with that id
 * or that handle, so the first of the latest by id and the latest by handle is the answer
 * authorMetrics gives for the store as it stood at most a refresh interval ago. A version is
 * published once per author and hour, so a row is only ever replaced by itself (a
 * redelivery) and the latest ones held never need an older one back.
 *
 * The store answers what memory does not hold: `as_of` (older versions), a name that is not
 * ASCII (whose lowering only the store knows), and a name unknown here, so an author projected
 * since the last refresh is found at once.
 */
export class LatestAuthorMetrics {
  private readonly store: ReadStore;
  private readonly mirror: HourlyMirror<HeldRow>;
  private readonly byId = new Map<string, HeldRow>();
  private readonly byHandle = new Map<string, HeldRow>();

  constructor({ store, now }: LatestAuthorMetricsOptions) {
    this.store = store;
    this.mirror = new HourlyMirror<HeldRow>({
      store,
      now,
      table: def,
      time: 'ts',
      select: sql`${columns(def)}, lower(${column(def, 'handle')}) AS handle_key`,
      apply: (_, rows) => rows.forEach((row) => this.take(row)),
    });
  }

  /** authorMetrics(store, handleOrId, asOf). */
  async find(handleOrId: string, asOf?: number): Promise<AuthorMetrics | null> {
    const name = authorName(handleOrId);
    if (asOf !== undefined || name === null || !ASCII.test(name)) return authorMetrics(this.store, handleOrId, asOf);
    await this.mirror.current();
    const byId = this.byId.get(name);
    const byHandle = this.byHandle.get(name.toLowerCase());
    const row = byHandle !== undefined && isBefore(byHandle, byId) ? byHandle : byId;
    return row === undefined ? authorMetrics(this.store, handleOrId) : toMetrics(row);
  }

  private take(row: HeldRow): void {
    if (isBefore(row, this.byId.get(row.author_id))) this.byId.set(row.author_id, row);
    if (isBefore(row, this.byHandle.get(row.handle_key))) this.byHandle.set(row.handle_key, row);
  }
}

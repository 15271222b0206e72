import type { Row } from '../../infra/store/port.ts';
import { column, int64, list, sql, table, type SqlFragment } from '../../infra/store/sql-literal.ts';
import type { TableDef } from '../../infra/store/table.ts';
import type { ReadStore } from '../../projections/read-models/cursor.ts';

/** How often a mirror reads the store at most: the bound on how much older than the store its answers are. */
export const MIRROR_REFRESH_MS = 1_000;
/** Rows one load reads at most, so that no single result holds the event loop long (an hour is never split). */
const LOAD_ROWS = 1_000;
const HOUR_MS = 3_600_000;

export interface HourlyMirrorOptions<R extends Row> {
  store: ReadStore;
  now: () => number;
  table: TableDef;
  /** The int64 time column, epoch ms, whose hours the rows are grouped by. */
  time: string;
  /** What to read of each row. */
  select: SqlFragment;
  /** Takes every row stored now in `hours` (hour starts, epoch ms), each with the hour it is in. */
  apply(hours: readonly number[], rows: (R & { hour_start: number })[]): void;
  refreshMs?: number;
}

interface HourCount {
  [name: string]: number;
  hour_start: number;
  n: number;
  versions: number;
}

/**
 * A table followed from the API's process, for read models answered in memory: on a call at
 * least `refreshMs` after the last refresh, the rows of every hour (of `time`) that changed
 * are read again and handed to `apply`; the first refresh reads them all. An hour changed
 * when its row count or the sum of its rows' versions did: rows are never deleted and a row
 * changes only by a higher version replacing it, so no change goes unseen, whatever the
 * order the projections write in. Incremental loading by a time watermark would miss rows
 * projected late (partitions progress at their own pace); this costs one small statement per
 * refresh, plus the changed hours' rows (the current hour, mostly).
 */
export class HourlyMirror<R extends Row> {
  private readonly options: HourlyMirrorOptions<R>;
  private readonly refreshMs: number;
  private readonly hourStart: SqlFragment;
  /** Per hour start, `count/version sum` of its rows as last loaded. */
  private readonly loaded = new Map<number, string>();
  private refreshedAt = -Infinity;
  private refreshing: Promise<void> | null = null;

  constructor(options: HourlyMirrorOptions<R>) {
    this.options = options;
    this.refreshMs = options.refreshMs ?? MIRROR_REFRESH_MS;
    const time = column(options.table, options.time);
    // Truncating remainder in both stores: the same hour for a time in each.
    this.hourStart = sql`${time} - ${time} % ${int64(HOUR_MS)}`;
  }

  /**
   * Resolves once the rows applied are those of the store at most `refreshMs` ago. Calls
   * meanwhile share the refresh; a failed one rejects them and the next call tries again.
   */
  current(): Promise<void> {
    if (this.refreshing !== null) return this.refreshing;
    const at = this.options.now();
    if (at - this.refreshedAt < this.refreshMs) return Promise.resolve();
    this.refreshing = this.refresh()
      .then(() => {
        this.refreshedAt = at;
      })
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }

  private async refresh(): Promise<void> {
    const { store, table: def, select, apply } = this.options;
    const counts = await store.query<HourCount>(
      sql`SELECT ${this.hourStart} AS hour_start, count(*) AS n, sum(${column(def, def.version)}) AS versions
          FROM ${table(def)} GROUP BY ${this.hourStart}`,
    );
    const changed = counts.filter((c) => this.loaded.get(c.hour_start) !== fingerprint(c));
    for (const chunk of chunks(changed)) {
      const hours = chunk.map((c) => c.hour_start);
      const rows = await store.query<R & { hour_start: number }>(
        sql`SELECT ${select}, ${this.hourStart} AS hour_start FROM ${table(def)} WHERE ${this.hourStart} IN ${list(hours)}`,
      );
      apply(hours, rows);
      // The counts read before the rows: an hour that changed in between is read again next time.
      for (const c of chunk) this.loaded.set(c.hour_start, fingerprint(c));
    }
  }
}

const fingerprint = (c: HourCount): string => `${c.n}/${c.versions}`;

/** Hours grouped into loads of at most LOAD_ROWS rows, each hour whole. */
function chunks(hours: readonly HourCount[]): HourCount[][] {
  const out: HourCount[][] = [];
  let rows = Infinity;
  for (const hour of hours) {
    if (rows + hour.n > LOAD_ROWS) {
      out.push([]);
      rows = 0;
    }
    out.at(-1)!.push(hour);
    rows += hour.n;
  }
  return out;
}

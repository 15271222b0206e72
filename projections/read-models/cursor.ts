import { createHash } from 'node:crypto';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { sql, type Sql } from '../../infra/store/sql-literal.ts';

/**
 * What the quant read models share: their typed errors, the opaque keyset cursor and the
 * page shape of the list envelope (spec 2.1).
 */

/** Read models only read; any AnalyticalStore will do. */
export type ReadStore = Pick<AnalyticalStore, 'query'>;

export type ReadModelErrorCode = 'INVALID_CURSOR' | 'INVALID_FIELD' | 'INVALID_ARGUMENT';

/** A request the read model refuses before any SQL is built; the API maps `code` to a 400. */
export class ReadModelError extends Error {
  constructor(
    readonly code: ReadModelErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ReadModelError';
  }
}

export type SortDir = 'asc' | 'desc';

export interface Page<T> {
  rows: T[];
  hasMore: boolean;
  /** Null on the last page. */
  nextCursor: string | null;
  /** The time every page of the listing answers for (epoch ms); null when there is no data yet. */
  asOf: number | null;
}

/** Where the previous page stopped: its last row's sort value and id. */
export interface KeysetPosition {
  value: number | null;
  id: string;
}

interface CursorBody {
  /** Which listing and ordering produced it, e.g. `tokens:momentum:desc`. */
  o: string;
  /** Hash of the filters, so a cursor cannot continue a differently filtered listing. */
  f: string;
  v: number | null;
  id: string;
  /** The time the first page answered for: every page of the listing is read as of it. */
  a: number | null;
}

/** A short stable hash of the filters; keys are sorted and absent ones dropped so equal filters agree. */
export function filtersHash(filters: Readonly<Record<string, unknown>>): string {
  const entries = Object.entries(filters)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(entries)).digest('base64url').slice(0, 16);
}

export function encodeCursor(ordering: string, filters: string, position: KeysetPosition, asOf: number | null): string {
  const body: CursorBody = { o: ordering, f: filters, v: position.value, id: position.id, a: asOf };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** What a cursor holds: where the previous page stopped, and the time the listing is read as of. */
export interface CursorState {
  position: KeysetPosition;
  asOf: number | null;
}

/**
 * The state a cursor holds; refused unless it came from the same ordering and filters, and,
 * when the request names an `asOf` too, unless it is the cursor's own.
 */
export function decodeCursor(cursor: string, ordering: string, filters: string, asOf?: number): CursorState {
  const refuse = (why: string): never => {
    throw new ReadModelError('INVALID_CURSOR', `invalid cursor: ${why}`);
  };
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return refuse('not a cursor of this API');
  }
  if (typeof body !== 'object' || body === null) return refuse('not a cursor of this API');
  const { o, f, v, id, a } = body as Partial<Record<keyof CursorBody, unknown>>;
  if (typeof o !== 'string' || typeof f !== 'string' || typeof id !== 'string') return refuse('not a cursor of this API');
  if (v !== null && (typeof v !== 'number' || !Number.isFinite(v))) return refuse('not a cursor of this API');
  if (a !== null && (typeof a !== 'number' || !Number.isSafeInteger(a))) return refuse('not a cursor of this API');
  if (o !== ordering || f !== filters) return refuse('it belongs to a request with another sort, direction or filters');
  if (asOf !== undefined && asOf !== a) return refuse('it reads the listing as of another time than the as_of given; send the cursor alone');
  return { position: { value: v, id }, asOf: a };
}

export function checkLimit(limit: number, max: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new ReadModelError('INVALID_ARGUMENT', `limit must be an integer from 1 to ${max}`);
  }
}

/**
 * A nullable comparison that is false, not NULL, when a side is NULL: ClickHouse 18.16
 * propagates NULL through AND/OR, so every nullable test is made two-valued here.
 */
export function known(condition: Sql): Sql {
  return sql`coalesce(${condition}, ${false})`;
}

/** Refuses a direction other than asc or desc, which may arrive unchecked from a caller. */
export function checkDir(dir: string): asserts dir is SortDir {
  if (dir !== 'asc' && dir !== 'desc') throw new ReadModelError('INVALID_ARGUMENT', 'dir must be asc or desc');
}

/** Joins conditions with AND; TRUE when there are none. */
export function allOf(conditions: readonly Sql[]): Sql {
  return conditions.length === 0 ? sql`${true}` : conditions.reduce((a, b) => sql`${a} AND ${b}`);
}

import { snapshotHistoryRange } from '../../projections/read-models/as-of.ts';
import type { ReadStore } from '../../projections/read-models/cursor.ts';
import { iso } from '../../presenters/resource.ts';
import { ApiError } from '../errors.ts';

/**
 * The range of times `as_of` may name: from the first snapshot of the history (the first
 * thing the engine wrote) to the service clock's now, less a plan's delay where one applies.
 * Before the first data there is nothing to answer; after now would be the future. The
 * store keeps the whole history (no retention), so the first snapshot time, once known,
 * never changes and is kept.
 */
export class PointInTime {
  private readonly store: ReadStore;
  private readonly now: () => number;
  private first: number | null = null;

  constructor({ store, now }: { store: ReadStore; now: () => number }) {
    this.store = store;
    this.now = now;
  }

  /**
   * `asOf` when it is in range, undefined when it is; else 400 VALIDATION at `path` (e.g.
   * `query.as_of`) with the available range in the message and in minimum/maximum.
   */
  async check(asOf: number | undefined, path: string, delayMs = 0): Promise<number | undefined> {
    if (asOf === undefined) return undefined;
    const latest = this.now() - delayMs;
    const first = await this.firstSnapshot();
    // Bounds in unix seconds, the unit `as_of` is documented in.
    const refuse = (message: string, issue: { code: string; minimum?: number; maximum?: number }): never => {
      throw new ApiError('VALIDATION', `${path}: ${message}`, { issues: [{ path, message, ...issue, inclusive: true }] });
    };
    if (first === null) return refuse('no data yet: the history holds no snapshot to answer as of', { code: 'too_big' });
    const delay = delayMs > 0 ? ` (now less the plan's ${delayMs / 60_000}-minute delay)` : '';
    const range = `the available range is ${iso(first)} to ${iso(latest)}${delay}`;
    if (asOf < first) return refuse(`${iso(asOf)} is before the first data; ${range}`, { code: 'too_small', minimum: Math.ceil(first / 1000) });
    if (asOf > latest) {
      const why = delayMs > 0 ? 'later than the plan allows' : 'in the future';
      return refuse(`${iso(asOf)} is ${why}; ${range}`, { code: 'too_big', maximum: Math.floor(latest / 1000) });
    }
    return asOf;
  }

  private async firstSnapshot(): Promise<number | null> {
    this.first ??= (await snapshotHistoryRange(this.store)).first;
    return this.first;
  }
}

import type { ReadStore, Page } from '../../projections/read-models/cursor.ts';
import {
  feedFromRows,
  latestEventOf,
  newestFirst,
  SIGNAL_FEED_ROW_COLUMNS,
  type SignalFeedRow,
} from '../../projections/read-models/signal-feed-rows.ts';
import { checkFeedQuery, feedTime, tokenIdsOnChains, toSignal, type SignalFeedQuery } from '../../projections/read-models/signals.ts';
import { signals } from '../../projections/tables/quant.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { HourlyMirror } from './hourly-mirror.ts';
import { ReadCache } from './read-cache.ts';

export interface SignalFeedOptions {
  store: ReadStore;
  now: () => number;
}

/**
 * The signal feed (GET /v1/quant/signals) answered from memory: every signal's filter columns
 * and record, followed from the store by an HourlyMirror (by fire hour; an end changes its
 * signal's row in place), so a request costs no statement. A store query per request would
 * bound the feed by the per-statement cost (planning, and crossing the port to the store's
 * thread) while signals change a few times a minute. The answers are signalFeed's
 * (read-models/signal-feed-rows.ts), for the store as it stood at most a refresh interval ago;
 * the ids of the tokens on the chains asked are read (and shared for as long) from the store.
 */
export class SignalFeed {
  private readonly store: ReadStore;
  private readonly mirror: HourlyMirror<SignalFeedRow>;
  private readonly onChains: ReadCache<Set<string>>;
  private readonly byHour = new Map<number, SignalFeedRow[]>();
  /** Every row in the feed's order, and the newest event among them; rebuilt after a refresh applied rows. */
  private rows: SignalFeedRow[] = [];
  private newestEvent: number | null = null;
  private stale = false;
  /**
   * Each held row's record, parsed once: the same signal is then the same object from one
   * request to the next, which lets the route keep what it rendered of it.
   */
  private readonly parsed = new WeakMap<SignalFeedRow, Signal>();
  private readonly signalOf = (row: SignalFeedRow): Signal => {
    let signal = this.parsed.get(row);
    if (signal === undefined) this.parsed.set(row, (signal = toSignal(row)));
    return signal;
  };

  constructor({ store, now }: SignalFeedOptions) {
    this.store = store;
    this.onChains = new ReadCache({ now });
    this.mirror = new HourlyMirror<SignalFeedRow>({
      store,
      now,
      table: signals,
      time: 'fired_at',
      select: SIGNAL_FEED_ROW_COLUMNS,
      apply: (hours, rows) => this.replaceHours(hours, rows),
    });
  }

  /** signalFeed(store, query), from memory. */
  async page(query: SignalFeedQuery): Promise<Page<Signal>> {
    const request = checkFeedQuery(query);
    const { chains } = query;
    const onChains =
      chains !== undefined && chains.length > 0
        ? await this.onChains.get(JSON.stringify(chains), () => tokenIdsOnChains(this.store, chains))
        : undefined;
    await this.mirror.current();
    if (this.stale) this.rebuild();
    const asOf = await feedTime(request, async () => this.newestEvent);
    return feedFromRows(this.rows, request, asOf, onChains, this.signalOf);
  }

  private replaceHours(hours: readonly number[], rows: (SignalFeedRow & { hour_start: number })[]): void {
    for (const hour of hours) this.byHour.set(hour, []);
    for (const { hour_start, ...row } of rows) this.byHour.get(hour_start)?.push(row);
    for (const hour of hours) this.byHour.get(hour)?.sort(newestFirst);
    this.stale = true;
  }

  /** Hours newest first, each in the feed's order, give every row in that order. */
  private rebuild(): void {
    const hours = [...this.byHour.keys()].sort((a, b) => b - a);
    this.rows = hours.flatMap((hour) => this.byHour.get(hour) ?? []);
    this.newestEvent = latestEventOf(this.rows);
    this.stale = false;
  }
}

import type { ReadStore } from '../../projections/read-models/cursor.ts';
import {
  loadSearchText,
  loadSnapshotView,
  type SearchText,
  type SnapshotReader,
  type SnapshotView,
} from '../../projections/read-models/snapshot-views.ts';
import { settledSnapshotTime } from '../../projections/read-models/as-of.ts';
import { READ_CACHE_TTL_MS, ReadCache } from './read-cache.ts';

/** Views kept; one is a row per token, and a live listing uses one view per settled time. */
const VIEWS_MAX = 16;

export interface SnapshotViewsOptions {
  store: ReadStore;
  now: () => number;
  ttlMs?: number;
}

interface ViewEntry {
  view: Promise<SnapshotView | null>;
  final: boolean;
  loadedAt: number;
}

/**
 * The token list's and the scanner's views of the store, kept in memory: the answers of every
 * sort, filter and page of a listing come from one view, not from a statement each.
 *
 * A view as of a time at or before the settled time is final: the history already held every
 * snapshot up to it, and snapshots never change, so reading it again would give the same rows.
 * Such views are kept (the least recently used dropped past VIEWS_MAX). A view of a later
 * time (an `as_of` the history is still storing) may still grow, so it is read again after
 * the TTL. The settled time and the text `q` searches are at most one TTL old.
 */
export class SnapshotViews implements SnapshotReader {
  private readonly store: ReadStore;
  private readonly now: () => number;
  private readonly ttlMs: number;
  /** The settled time and the search text, each read at most once per TTL. */
  private readonly settled: ReadCache<number | null>;
  private readonly text: ReadCache<SearchText>;
  private readonly views = new Map<number, ViewEntry>();

  constructor({ store, now, ttlMs = READ_CACHE_TTL_MS }: SnapshotViewsOptions) {
    this.store = store;
    this.now = now;
    this.ttlMs = ttlMs;
    this.settled = new ReadCache({ now, ttlMs });
    this.text = new ReadCache({ now, ttlMs });
  }

  settledTime(): Promise<number | null> {
    return this.settled.get('settled', () => settledSnapshotTime(this.store));
  }

  searchText(): Promise<SearchText> {
    return this.text.get('text', () => loadSearchText(this.store));
  }

  async viewAsOf(asOf: number): Promise<SnapshotView | null> {
    const at = this.now();
    const entry = this.views.get(asOf);
    this.views.delete(asOf);
    if (entry !== undefined && (entry.final || at - entry.loadedAt < this.ttlMs)) {
      // Map order is insertion order: put back last, as the most recently used.
      this.views.set(asOf, entry);
      return entry.view;
    }
    const fresh: ViewEntry = { view: Promise.resolve(null), final: false, loadedAt: at };
    fresh.view = (async () => {
      const settled = await this.settledTime();
      const view = await loadSnapshotView(this.store, asOf);
      // Final only if every snapshot up to asOf was stored before the view was read.
      fresh.final = settled !== null && asOf <= settled;
      return view;
    })();
    if (this.views.size >= VIEWS_MAX) this.views.delete(this.views.keys().next().value as number);
    this.views.set(asOf, fresh);
    fresh.view.catch(() => {
      if (this.views.get(asOf) === fresh) this.views.delete(asOf);
    });
    return fresh.view;
  }
}

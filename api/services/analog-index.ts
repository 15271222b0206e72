import type { Logger } from '../../infra/logging.ts';
import type { AnalogQuery, AnalogResult } from '../../processors/quant-engine/analogs/analogs.ts';
import { analogInputs } from '../../processors/quant-engine/analogs/vector.ts';
import { AnalogWorker } from '../../processors/quant-engine/analogs/worker.ts';
import type { AnalogSummary, ScoredSnapshot } from '../../processors/quant-engine/contracts.ts';
import { analogCandidates } from '../../projections/read-models/analog-candidates.ts';
import type { ReadStore } from '../../projections/read-models/cursor.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';

/**
 * The API's analog index (model analog-v1.0): the candidates of the store
 * (read-models/analog-candidates.ts) loaded into an AnalogWorker, so k-nearest searches run
 * off the event loop. Built on the first request, which waits for it; a failed build is
 * retried by the next request.
 *
 * Refresh: a full reload every `refreshMs` in the background, the old index answering
 * meanwhile. Incremental loading by a resolved_at watermark would miss candidates whose
 * snapshot row is projected after their outcome row (two projections, two paces), and the
 * worker rebuilds its whole index on every load anyway; a full reload is exact.
 *
 * Point in time is the query's: candidates resolved after the query snapshot, and the same
 * token within ±24h of it, are never used (queryAnalogs), whatever the index holds.
 */

export const ANALOG_REFRESH_MS = 60_000;

export interface AnalogIndexOptions {
  store: ReadStore;
  logger: Logger;
  refreshMs?: number;
}

/** The analog query of a stored quant snapshot: its own token, time and vector inputs. */
export function analogQueryOf(snapshot: QuantSnapshot): AnalogQuery {
  // A quant snapshot carries every field of the scored snapshot it was built from.
  const scored: ScoredSnapshot = {
    snapshotId: snapshot.snapshotId,
    tokenId: snapshot.tokenId,
    ts: snapshot.ts,
    features: snapshot.features,
    scores: snapshot.scores,
    details: snapshot.scoreDetails,
    divergenceState: snapshot.divergenceState,
  };
  return { tokenId: snapshot.tokenId, ts: snapshot.ts, inputs: analogInputs(scored) };
}

export class AnalogIndex {
  private readonly store: ReadStore;
  private readonly logger: Logger;
  private readonly refreshMs: number;
  private worker: Promise<AnalogWorker> | null = null;
  /** The worker `worker` resolved to; refreshes stop once it is no longer this one. */
  private current: AnalogWorker | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private closed = false;
  /** Bumped by every load, so a summary computed on an older index is not cached. */
  private generation = 0;
  /** Summaries at k = `k` by snapshot id, for the index of the current generation. */
  private readonly summaries = new Map<string, AnalogSummary>();

  constructor(options: AnalogIndexOptions) {
    this.store = options.store;
    this.logger = options.logger;
    this.refreshMs = options.refreshMs ?? ANALOG_REFRESH_MS;
  }

  /** The k nearest candidates to the snapshot, nearest first, and their summary. */
  async analogs(snapshot: QuantSnapshot, k: number): Promise<AnalogResult> {
    const worker = await this.ready();
    try {
      return await worker.queryAnalogs(analogQueryOf(snapshot), k);
    } catch (err) {
      // A thread that died (a crash, out of memory) is replaced by the next request's build.
      if (worker.failed && this.current === worker) this.discard(worker);
      throw err;
    }
  }

  /**
   * The summary alone, as analogs() gives it. A snapshot's answer changes only when the index
   * does, so it is kept until the next load: the token snapshot endpoint asks it every time.
   */
  async summary(snapshot: QuantSnapshot, k: number): Promise<AnalogSummary> {
    const key = `${snapshot.snapshotId}/${k}`;
    const cached = this.summaries.get(key);
    if (cached) return cached;
    const generation = this.generation;
    const { summary } = await this.analogs(snapshot, k);
    if (generation === this.generation) this.summaries.set(key, summary);
    return summary;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.refreshing;
    const worker = await this.worker?.catch(() => null);
    await worker?.close();
  }

  private ready(): Promise<AnalogWorker> {
    if (this.closed) return Promise.reject(new Error('the analog index is closed'));
    this.worker ??= this.build().catch((err: unknown) => {
      this.worker = null;
      throw err;
    });
    return this.worker;
  }

  private async build(): Promise<AnalogWorker> {
    const worker = await AnalogWorker.start(await analogCandidates(this.store));
    if (this.closed) {
      await worker.close();
      throw new Error('the analog index is closed');
    }
    this.current = worker;
    this.scheduleRefresh(worker);
    return worker;
  }

  private discard(worker: AnalogWorker): void {
    this.logger.warn('analog worker failed; the next request builds a new one');
    this.worker = null;
    this.current = null;
    if (this.timer) clearTimeout(this.timer);
    void worker.close();
  }

  private scheduleRefresh(worker: AnalogWorker): void {
    this.timer = setTimeout(() => {
      this.refreshing = this.reload(worker).finally(() => {
        this.refreshing = null;
        if (!this.closed && this.current === worker) this.scheduleRefresh(worker);
      });
    }, this.refreshMs);
    // A pending refresh alone must not keep the process alive.
    this.timer.unref();
  }

  private async reload(worker: AnalogWorker): Promise<void> {
    try {
      const columns = await analogCandidates(this.store);
      if (this.closed || this.current !== worker) return;
      await worker.load(columns);
      this.generation++;
      this.summaries.clear();
    } catch (err) {
      // The previous index keeps answering; the next refresh tries again.
      this.logger.warn({ err }, 'analog index refresh failed');
    }
  }
}

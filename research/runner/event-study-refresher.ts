import type { EventLog } from '../../infra/log/port.ts';
import type { Logger } from '../../infra/logging.ts';
import { readControlEvents } from '../../projections/control-events.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import { EventStudyRecordSchema } from '../../schemas/records.ts';
import { eventStudyResult, refreshEventStudies, refreshTime, type EventStudiesState } from '../event-studies/compute.ts';
import { EVENT_STUDIES } from '../event-studies/studies.ts';
import type { HistorySource } from '../history/source.ts';

/**
 * Refreshes the six event studies each time the data's event time passes an hour boundary,
 * and appends each study's result to research.event-studies (which the event_studies table
 * projects, and a replay rebuilds). A refresh continues from the previous one's state, so it
 * reads only the history since; the state lives in memory, and after a restart the first
 * refresh rebuilds it from the beginning of history (which gives the same figures, by the
 * engine's design). Results already recorded for an hour are not appended again.
 */

export interface EventStudyRefresherOptions {
  log: EventLog;
  codec: Codec;
  history: HistorySource;
  logger: Logger;
  /** How often (wall clock) the data's end time is looked at. */
  pollMs?: number;
}

export class EventStudyRefresher {
  private state: EventStudiesState | null = null;
  /** The newest as-of time already on the topic. */
  private recordedAsOf = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private readonly abort = new AbortController();

  constructor(private readonly options: EventStudyRefresherOptions) {}

  async start(): Promise<void> {
    const { log, codec } = this.options;
    for (const r of await readControlEvents(log, codec, TOPICS.eventStudies.name, EventStudyRecordSchema)) {
      this.recordedAsOf = Math.max(this.recordedAsOf, r.asOf);
    }
    this.tick();
    this.timer = setInterval(() => this.tick(), this.options.pollMs ?? 5_000);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.abort.abort();
    await this.refreshing;
  }

  private tick(): void {
    if (this.refreshing !== null || this.abort.signal.aborted) return;
    this.refreshing = this.refresh()
      .catch((err: unknown) => {
        if (!this.abort.signal.aborted) this.options.logger.error({ err }, 'event-study refresh failed');
      })
      .finally(() => (this.refreshing = null));
  }

  private async refresh(): Promise<void> {
    const { history, log, codec, logger } = this.options;
    const bounds = await history.bounds();
    if (bounds === null) return;
    const asOf = refreshTime(bounds.last);
    if (this.state !== null && asOf <= this.state.asOf) return;
    this.state = await refreshEventStudies(this.state, history, asOf, { signal: this.abort.signal });
    if (asOf <= this.recordedAsOf) return;
    // One append for the six, so readers see one refresh, not a mix of two.
    const topic = TOPICS.eventStudies.name;
    const records = await Promise.all(
      EVENT_STUDIES.map(async (study) => {
        const record = EventStudyRecordSchema.parse({ slug: study.slug, asOf, result: JSON.stringify(eventStudyResult(this.state!, study)), ts: asOf });
        return { key: study.slug, value: await codec.encode(topic, record), timestamp: asOf };
      }),
    );
    await log.append(topic, records);
    this.recordedAsOf = asOf;
    logger.info({ asOf: new Date(asOf).toISOString() }, 'event studies refreshed');
  }
}

import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { writeFileAtomic } from '../../infra/fs/atomic-write.ts';
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
 * reads only the history since. The state is saved to `checkpointFile` after each refresh, so
 * a restart continues from it too; without one (a first start, a checkpoint of another
 * history or version, or one that cannot be read) the first refresh rebuilds it from the
 * beginning of history, which gives the same figures by the engine's design. Results already
 * recorded for an hour are not appended again.
 */

/** Bumped when EventStudiesState changes shape: a checkpoint of another version is not used. */
const CHECKPOINT_VERSION = 1;

interface Checkpoint {
  version: number;
  /** The history's first time when it was saved: the baseline's sampling is aligned on it. */
  first: number;
  state: EventStudiesState;
}

export interface EventStudyRefresherOptions {
  log: EventLog;
  codec: Codec;
  history: HistorySource;
  logger: Logger;
  /** How often (wall clock) the data's end time is looked at. */
  pollMs?: number;
  /** Where the state is saved after each refresh and read at start; absent: kept in memory only. */
  checkpointFile?: string;
}

export class EventStudyRefresher {
  private state: EventStudiesState | null = null;
  /** The checkpoint read at start, until the first refresh has checked it against the history. */
  private saved: Checkpoint | null = null;
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
    this.saved = await this.readCheckpoint();
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
    if (this.saved !== null) {
      const { first, state } = this.saved;
      this.saved = null;
      if (first === bounds.first && state.asOf <= bounds.last) this.state = state;
      else logger.info({ file: this.options.checkpointFile }, 'the event-study checkpoint is of another history; rebuilding the studies from its start');
    }
    const asOf = refreshTime(bounds.last);
    if (this.state !== null && asOf <= this.state.asOf) return;
    const state = await refreshEventStudies(this.state, history, asOf, { signal: this.abort.signal });
    this.state = state;
    if (asOf > this.recordedAsOf) {
      // One append for the six, so readers see one refresh, not a mix of two.
      const topic = TOPICS.eventStudies.name;
      const records = await Promise.all(
        EVENT_STUDIES.map(async (study) => {
          const record = EventStudyRecordSchema.parse({ slug: study.slug, asOf, result: JSON.stringify(eventStudyResult(state, study)), ts: asOf });
          return { key: study.slug, value: await codec.encode(topic, record), timestamp: asOf };
        }),
      );
      await log.append(topic, records);
      this.recordedAsOf = asOf;
      logger.info({ asOf: new Date(asOf).toISOString() }, 'event studies refreshed');
    }
    // Saved after the results are in the log: a checkpoint never gets ahead of what is recorded,
    // or a restart from it would find nothing left to refresh and never record that hour.
    await this.saveCheckpoint(bounds.first, state);
  }

  /** The saved checkpoint of this version; null without one. One that cannot be read is only a slower start. */
  private async readCheckpoint(): Promise<Checkpoint | null> {
    const file = this.options.checkpointFile;
    if (file === undefined) return null;
    try {
      const checkpoint = deserialize(await readFile(file)) as Checkpoint;
      if (checkpoint.version === CHECKPOINT_VERSION) return checkpoint;
      this.options.logger.info({ file, version: checkpoint.version }, 'the event-study checkpoint is of another version; rebuilding the studies from the start of history');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.options.logger.warn({ err, file }, 'the event-study checkpoint cannot be read; rebuilding the studies from the start of history');
    }
    return null;
  }

  private async saveCheckpoint(first: number, state: EventStudiesState): Promise<void> {
    const file = this.options.checkpointFile;
    if (file === undefined) return;
    await mkdir(dirname(file), { recursive: true });
    // v8's format keeps every number as it was (NaN, ±Infinity, -0), which JSON would not.
    await writeFileAtomic(file, serialize({ version: CHECKPOINT_VERSION, first, state } satisfies Checkpoint));
  }
}

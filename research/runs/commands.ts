import { randomBytes } from 'node:crypto';
import { appendEvent } from '../../projections/control-events.ts';
import type { AppendResult, EventLog } from '../../infra/log/port.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import {
  BacktestEventsPartSchema,
  BacktestRequestSchema,
  BacktestRunEventSchema,
  type BacktestEventsPart,
  type BacktestRequest,
  type BacktestRunEvent,
} from '../../schemas/records.ts';

/** Backtest requests and run events as records of the log; the API and the research role append through these. */

export function newRunId(): string {
  return `btr_${randomBytes(12).toString('hex')}`;
}

export async function appendBacktestRequest(log: EventLog, codec: Codec, request: BacktestRequest): Promise<AppendResult> {
  return appendEvent(log, codec, TOPICS.backtests.name, request.runId, BacktestRequestSchema.parse(request));
}

export async function appendRunEvent(log: EventLog, codec: Codec, event: BacktestRunEvent): Promise<AppendResult> {
  return appendEvent(log, codec, TOPICS.backtestRuns.name, event.runId, BacktestRunEventSchema.parse(event));
}

/** One part of a done run's events; each part is appended alone, so no produce request carries more than one. */
export async function appendEventsPart(log: EventLog, codec: Codec, part: BacktestEventsPart): Promise<AppendResult> {
  return appendEvent(log, codec, TOPICS.backtestEvents.name, part.runId, BacktestEventsPartSchema.parse(part));
}

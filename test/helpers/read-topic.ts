import type { EventLog, LogRecord } from '../../infra/log/port.ts';
import { quantEngine } from '../../processors/quant-engine/engine.ts';
import type { Codec } from '../../schemas/codec.ts';

/** Every retained record of a topic, partition by partition, in offset order. */
export async function readTopic(log: EventLog, topic: string): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  for (const { partition, offset } of await log.startOffsets(topic)) {
    for (let from = offset; ; ) {
      const batch = await log.read(topic, partition, from, 10_000);
      if (batch.length === 0) break;
      out.push(...batch);
      from = batch.at(-1)!.offset + 1;
    }
  }
  return out;
}

/** A history to append in two parts, each at most once: the records before the cut, then the rest. */
export interface Halves {
  appendFirst(): Promise<void>;
  appendRest(): Promise<void>;
}

/**
 * The records of `topics` (by default the quant engine's input) in `from`, re-encoded for `to`
 * (another log, with its own registry), to be appended in two parts split at the median event
 * time: whatever reads them can get no further than the first part until the second is appended.
 */
export async function inputInHalves(from: { log: EventLog; codec: Codec }, to: { log: EventLog; codec: Codec }, topics: readonly string[] = quantEngine.inputs): Promise<Halves> {
  const input = await Promise.all(topics.map(async (topic) => ({ topic, records: await readTopic(from.log, topic) })));
  const times = input.flatMap(({ records }) => records.map((r) => r.timestamp)).sort((a, b) => a - b);
  const append = async (keep: (ts: number) => boolean) => {
    for (const { topic, records } of input) {
      const chosen = records.filter((r) => keep(r.timestamp));
      const values = await Promise.all(chosen.map(async (r) => ({ key: r.key, timestamp: r.timestamp, value: await to.codec.encode(topic, await from.codec.decode(topic, r.value!)) })));
      if (values.length > 0) await to.log.append(topic, values);
    }
  };
  const cut = times[Math.floor(times.length / 2)];
  return { appendFirst: () => append((ts) => ts < cut), appendRest: () => append((ts) => ts >= cut) };
}

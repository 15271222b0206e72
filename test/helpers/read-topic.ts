import type { EventLog, LogRecord } from '../../infra/log/port.ts';

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

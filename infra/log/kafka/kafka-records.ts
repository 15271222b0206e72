import type { ICustomPartitioner, IHeaders, KafkaMessage, Message } from 'kafkajs';
import { partitionForKey } from '../partitioner.ts';
import type { Headers, LogRecord, OutgoingRecord } from '../port.ts';

/**
 * The partitioner both modes share: the partition a record names, else murmur2 of the key
 * (infra/log/partitioner.ts) for keyed records, round-robin per topic for keyless ones. It notes the partition it picked for each
 * message object in `placements`, because a produce response only carries one base offset
 * per partition and append must give every record its own partition and offset.
 */
export function sharedPartitioner(placements: WeakMap<Message, number>): ICustomPartitioner {
  return () => {
    const nextKeyless = new Map<string, number>();
    return ({ topic, partitionMetadata, message }) => {
      const count = partitionMetadata.length;
      let partition: number;
      if (message.partition !== undefined) {
        partition = message.partition;
      } else if (message.key === null || message.key === undefined) {
        const turn = nextKeyless.get(topic) ?? 0;
        nextKeyless.set(topic, turn + 1);
        partition = turn % count;
      } else {
        partition = partitionForKey(message.key.toString(), count);
      }
      placements.set(message, partition);
      return partition;
    };
  };
}

export function toMessage(record: OutgoingRecord, now: number): Message {
  return {
    key: record.key,
    value: record.value,
    timestamp: String(record.timestamp ?? now),
    headers: record.headers,
    partition: record.partition,
  };
}

export function toLogRecord(topic: string, partition: number, message: KafkaMessage): LogRecord {
  return {
    topic,
    partition,
    offset: Number(message.offset),
    key: message.key === null ? null : message.key.toString('utf8'),
    value: message.value,
    timestamp: Number(message.timestamp),
    headers: toHeaders(message.headers),
  };
}

/** Kafka allows repeated header keys (kafkajs hands them over as an array); the port keeps the last. */
function toHeaders(headers: IHeaders | undefined): Headers {
  const out: Headers = {};
  if (!headers) return out;
  for (const [name, value] of Object.entries(headers)) {
    const last = Array.isArray(value) ? value.at(-1) : value;
    if (last !== undefined) out[name] = last.toString();
  }
  return out;
}

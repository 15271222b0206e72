import { randomBytes } from 'node:crypto';
import type { EventLog } from '../infra/log/port.ts';
import type { Logger } from '../infra/logging.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import type { Codec } from '../schemas/codec.ts';
import type { StreamPresence } from '../schemas/records.ts';

// In api/, the lowest layer that uses it: the API reads the presence, cli/roles/stream.ts announces it.

const TOPIC = TOPICS.streamPresence.name;

/** How often a running stream instance says it is up. */
export const HEARTBEAT_MS = 2_000;
/** A stream whose last heartbeat is older than this counts as down (a crashed instance writes no tombstone). */
export const PRESENCE_TTL_MS = 10_000;

/**
 * Heartbeats of one stream instance on ops.stream-presence, so an API in another process or
 * on another host can point clients at it. stop() writes a tombstone: the stream is
 * unavailable at once, not only once the last heartbeat ages out.
 */
export async function announcePresence(options: { log: EventLog; codec: Codec; logger: Logger; url: string; intervalMs?: number }): Promise<{ stop(): Promise<void> }> {
  const instanceId = `stream_${randomBytes(8).toString('hex')}`;
  const beat = async () => {
    const presence: StreamPresence = { instanceId, url: options.url, ts: Date.now() };
    await options.log.append(TOPIC, [{ key: instanceId, value: await options.codec.encode(TOPIC, presence), timestamp: presence.ts }]);
  };
  await beat();
  const timer = setInterval(() => void beat().catch((err: unknown) => options.logger.warn({ err }, 'stream heartbeat not written')), options.intervalMs ?? HEARTBEAT_MS);
  return {
    async stop() {
      clearInterval(timer);
      await options.log.append(TOPIC, [{ key: instanceId, value: null }]);
    },
  };
}

/**
 * The stream instances the log knows of, read by the API. It reads the topic from where it
 * left off at each question, so an idle API reads nothing and a question costs the
 * heartbeats written since the last one.
 */
export class StreamDirectory {
  private readonly latest = new Map<string, StreamPresence>();
  private position: number | null = null;

  constructor(private readonly options: { log: EventLog; codec: Codec; now?: () => number }) {}

  /** The URL of the instance heard from most recently, or null when none is up. */
  async currentUrl(): Promise<string | null> {
    await this.catchUp();
    const now = (this.options.now ?? Date.now)();
    let best: StreamPresence | null = null;
    for (const p of this.latest.values()) if (now - p.ts <= PRESENCE_TTL_MS && (best === null || p.ts > best.ts)) best = p;
    return best?.url ?? null;
  }

  private async catchUp(): Promise<void> {
    const { log, codec } = this.options;
    this.position ??= (await log.startOffsets(TOPIC))[0]?.offset ?? 0;
    for (;;) {
      const records = await log.read(TOPIC, 0, this.position, 1_000);
      if (records.length === 0) return;
      for (const record of records) {
        this.position = record.offset + 1;
        if (record.key === null) continue;
        if (record.value === null) this.latest.delete(record.key);
        else this.latest.set(record.key, (await codec.decode(TOPIC, record.value)) as StreamPresence);
      }
    }
  }
}

import type { Admin, Producer } from 'kafkajs';
import { isBrokerAnswer } from './kafka-errors.ts';

/**
 * A kafkajs producer or admin client shared by an event log's calls: connected on first use,
 * and replaced by a new one after a failure that was not the broker's answer. kafkajs does not
 * always recover from such failures by itself: a broker frozen while the client connected
 * (TCP accepted, the API versions request timed out) leaves it holding a connection it counts
 * as ready, and every later request fails with "Broker not connected" for as long as that
 * connection stays open.
 */
export class SharedClient<C extends Producer | Admin> {
  private ready: Promise<C> | undefined;
  private closed = false;

  constructor(private readonly create: () => C) {}

  /**
   * Runs work with the client, connecting one first if none is. After close() it refuses:
   * a client connected then would hold its socket and timers open with nobody left to close
   * them, and keep the process (or the worker thread) it runs on from ending.
   */
  async use<T>(work: (client: C) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('the Kafka client is closed');
    const ready = (this.ready ??= this.connect());
    const client = await ready;
    try {
      return await work(client);
    } catch (err) {
      if (!isBrokerAnswer(err) && this.ready === ready) {
        this.ready = undefined;
        void client.disconnect().catch(() => undefined);
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const ready = this.ready;
    this.ready = undefined;
    const client = await ready?.catch(() => undefined);
    await client?.disconnect();
  }

  private async connect(): Promise<C> {
    const client = this.create();
    try {
      await client.connect();
      return client;
    } catch (err) {
      this.ready = undefined;
      void client.disconnect().catch(() => undefined);
      throw err;
    }
  }
}

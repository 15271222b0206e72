import { Worker } from 'node:worker_threads';
import type { AnalogCandidateColumns, AnalogQuery, AnalogResult } from './analogs.ts';

/**
 * Analog queries off the event loop: a worker thread holds an index built from candidate
 * columns and answers queries asynchronously, so a 10^6-candidate search never blocks the
 * API's event loop. The thread is TypeScript run through tsx, as the rest of the project.
 * Queries are answered in the order sent.
 */

export type WorkerRequest =
  | { type: 'load'; id: number; columns: AnalogCandidateColumns }
  | { type: 'query'; id: number; query: AnalogQuery; k: number };

export type WorkerReply = { id: number; ok: true; result: AnalogResult | null } | { id: number; ok: false; message: string };

/**
 * Node 20 does not apply `--import` loaders given in a worker's execArgv, so the thread
 * registers tsx's ESM hooks itself, then imports its TypeScript body. Both are resolved
 * here, so the thread finds them wherever the process was started from.
 */
const BOOTSTRAP = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
  .then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL('./worker-thread.ts', import.meta.url).href)}); })`;

interface Waiting {
  resolve: (result: AnalogResult | null) => void;
  reject: (err: Error) => void;
}

export class AnalogWorker {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private failure: Error | null = null;

  private constructor() {
    this.worker = new Worker(BOOTSTRAP, { eval: true });
    this.worker.on('message', (reply: WorkerReply) => {
      const w = this.waiting.get(reply.id);
      if (!w) return;
      this.waiting.delete(reply.id);
      if (reply.ok) w.resolve(reply.result);
      else w.reject(new Error(`analogs worker: ${reply.message}`));
    });
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`analogs worker exited with code ${code}`)));
  }

  /**
   * Starts a worker holding an index over `columns`. Their typed arrays' buffers are
   * transferred, not copied (unless shared): the caller must not use them afterwards.
   */
  static async start(columns: AnalogCandidateColumns): Promise<AnalogWorker> {
    const w = new AnalogWorker();
    try {
      await w.load(columns);
    } catch (err) {
      await w.close();
      throw err;
    }
    return w;
  }

  /** Replaces the index with one over `columns` (buffers transferred, as in start). */
  async load(columns: AnalogCandidateColumns): Promise<void> {
    // Shared buffers are shared as they are; only plain ones can (and need to) be transferred.
    const buffers = new Set<ArrayBuffer>();
    for (const a of [columns.ts, columns.resolvedAt, columns.return24h, columns.maxDrawdown24h, columns.raw]) {
      if (a.buffer instanceof ArrayBuffer) buffers.add(a.buffer);
    }
    await this.request({ type: 'load', id: this.nextId++, columns }, [...buffers]);
  }

  async queryAnalogs(query: AnalogQuery, k: number): Promise<AnalogResult> {
    const result = await this.request({ type: 'query', id: this.nextId++, query, k }, []);
    if (!result) throw new Error('analogs worker: empty reply to a query');
    return result;
  }

  /** True once the thread has died or was closed: every later request fails. */
  get failed(): boolean {
    return this.failure !== null;
  }

  async close(): Promise<void> {
    this.failure ??= new Error('analogs worker closed');
    await this.worker.terminate();
  }

  private request(message: WorkerRequest, transfer: ArrayBuffer[]): Promise<AnalogResult | null> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.set(message.id, { resolve, reject });
      this.worker.postMessage(message, transfer);
    });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const w of this.waiting.values()) w.reject(this.failure);
    this.waiting.clear();
  }
}

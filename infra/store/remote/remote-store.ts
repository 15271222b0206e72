import type { MessagePort } from 'node:worker_threads';
import { StoreError, type StoreErrorCode } from '../errors.ts';
import { resultTypesOf, type AnalyticalStore, type AppliedMigration, type MigrationResult, type QueryOptions, type Row } from '../port.ts';
import type { Sql } from '../sql-literal.ts';
import type { TableRegistry } from '../table.ts';
import type { StoreFailure, StoreReply, StoreRequest } from './protocol.ts';

type Pending = { resolve(value: unknown): void; reject(err: Error): void };
/** A request before it gets its id (Omit over each member of the union). */
type RequestBody = StoreRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

/**
 * The store of another thread of this process (served there by serveStore), for the roles
 * that only read: statements are rendered here and run there. The other thread migrated
 * the store and writes it; this side cannot write.
 */
export class RemoteStore<T extends TableRegistry> implements AnalyticalStore<T> {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private closed = false;

  constructor(
    private readonly port: MessagePort,
    readonly tables: T,
  ) {
    port.on('message', (reply: StoreReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (reply.ok) waiting.resolve(reply.value);
      else waiting.reject(toError(reply.error));
    });
    // The serving thread ended: nothing in flight will be answered.
    port.once('close', () => this.fail(new StoreError('STORE_CLOSED', 'the thread that holds the store has ended')));
  }

  async migrate(): Promise<MigrationResult> {
    return { applied: [] };
  }

  appliedMigrations(): Promise<AppliedMigration[]> {
    return this.request({ op: 'appliedMigrations' }) as Promise<AppliedMigration[]>;
  }

  upsert(): Promise<void> {
    return Promise.reject(new StoreError('STORE_QUERY_FAILED', 'a remote store is read-only: the thread that holds the store writes it'));
  }

  async query<R extends Row = Row>(statement: Sql, options?: QueryOptions): Promise<R[]> {
    const text = statement.render('duckdb');
    return this.request({ op: 'query', text, types: resultTypesOf(statement, options) }) as Promise<R[]>;
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    return (await this.request({ op: 'ping' }).catch(() => false)) === true;
  }

  async close(): Promise<void> {
    this.fail(new StoreError('STORE_CLOSED', 'the store is closed'));
    this.port.close();
  }

  private request(body: RequestBody): Promise<unknown> {
    if (this.closed) return Promise.reject(new StoreError('STORE_CLOSED', 'the store is closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.port.postMessage({ ...body, id } as StoreRequest);
    });
  }

  private fail(err: StoreError): void {
    this.closed = true;
    for (const { reject } of this.pending.values()) reject(err);
    this.pending.clear();
  }
}

function toError({ name, message, code, retryable }: StoreFailure): Error {
  if (name === 'StoreError' && code) return new StoreError(code as StoreErrorCode, message, retryable);
  const err = new Error(message);
  err.name = name;
  return err;
}

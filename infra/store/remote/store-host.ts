import type { MessagePort } from 'node:worker_threads';
import { StoreError } from '../errors.ts';
import type { AnalyticalStore, Row } from '../port.ts';
import type { LogicalType } from '../table.ts';
import type { StoreFailure, StoreReply, StoreRequest } from './protocol.ts';

/** A store that runs statements already rendered in its dialect, and writes rows validated already (the DuckDB store). */
export interface TextQueryStore extends AnalyticalStore {
  queryText(text: string, types: Readonly<Record<string, LogicalType>>): Promise<Row[]>;
  upsertValidated(table: string, rows: readonly object[]): Promise<void>;
}

export interface ServeOptions {
  /** Whether the other end may write (the projections' thread); the roles that only read may not. */
  writable?: boolean;
}

/**
 * Answers another thread (a RemoteStore on the port's other end) from this thread's store.
 * Embedded DuckDB allows one instance per file, so one thread holds it and the others reach
 * it through here: the projections' thread to write, the roles of the main thread to read.
 * Turning result rows into JavaScript values costs this thread's time, not theirs.
 */
export function serveStore(store: TextQueryStore, port: MessagePort, { writable = false }: ServeOptions = {}): void {
  port.on('message', (request: StoreRequest) => {
    void answer(store, request, writable).then(
      (value) => port.postMessage({ id: request.id, ok: true, value } satisfies StoreReply),
      (err: unknown) => port.postMessage({ id: request.id, ok: false, error: failure(err) } satisfies StoreReply),
    );
  });
}

async function answer(store: TextQueryStore, request: StoreRequest, writable: boolean): Promise<unknown> {
  switch (request.op) {
    case 'query':
      return store.queryText(request.text, request.types);
    case 'ping':
      return store.ping();
    case 'appliedMigrations':
      return store.appliedMigrations();
    case 'upsert':
      if (!writable) throw new StoreError('STORE_QUERY_FAILED', 'this side of the store is read-only: the projections write it');
      return store.upsertValidated(request.table, request.rows);
  }
}

function failure(err: unknown): StoreFailure {
  if (err instanceof StoreError) return { name: err.name, message: err.message, code: err.code, retryable: err.retryable };
  const { name, message } = err instanceof Error ? err : new Error(String(err));
  return { name, message };
}

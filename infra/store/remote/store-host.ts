import type { MessagePort } from 'node:worker_threads';
import { StoreError } from '../errors.ts';
import type { AnalyticalStore, Row } from '../port.ts';
import type { LogicalType } from '../table.ts';
import type { StoreFailure, StoreReply, StoreRequest } from './protocol.ts';

/** A store that runs statements already rendered in its dialect (the DuckDB store). */
export interface TextQueryStore extends AnalyticalStore {
  queryText(text: string, types: Readonly<Record<string, LogicalType>>): Promise<Row[]>;
}

/**
 * Answers the reads of another thread (a RemoteStore on the port's other end) from this
 * thread's store. Embedded DuckDB allows one instance per file, so the thread that writes
 * the projections holds it, and the threads that only read reach it through here; turning
 * result rows into JavaScript values then costs this thread's time, not theirs.
 */
export function serveStore(store: TextQueryStore, port: MessagePort): void {
  port.on('message', (request: StoreRequest) => {
    void answer(store, request).then(
      (value) => port.postMessage({ id: request.id, ok: true, value } satisfies StoreReply),
      (err: unknown) => port.postMessage({ id: request.id, ok: false, error: failure(err) } satisfies StoreReply),
    );
  });
}

function answer(store: TextQueryStore, request: StoreRequest): Promise<unknown> {
  switch (request.op) {
    case 'query':
      return store.queryText(request.text, request.types);
    case 'ping':
      return store.ping();
    case 'appliedMigrations':
      return store.appliedMigrations();
  }
}

function failure(err: unknown): StoreFailure {
  if (err instanceof StoreError) return { name: err.name, message: err.message, code: err.code, retryable: err.retryable };
  const { name, message } = err instanceof Error ? err : new Error(String(err));
  return { name, message };
}

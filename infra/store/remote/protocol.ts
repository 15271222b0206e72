import type { LogicalType } from '../table.ts';

/** A request from a thread without the store to the thread that has it. */
export type StoreRequest =
  | { id: number; op: 'query'; text: string; types: Record<string, LogicalType> }
  | { id: number; op: 'ping' }
  | { id: number; op: 'appliedMigrations' };

/** A failure as it crosses threads (an Error does not keep its class and fields in a message). */
export interface StoreFailure {
  name: string;
  message: string;
  code?: string;
  retryable?: boolean;
}

export type StoreReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: StoreFailure };

/**
 * Every failure of the analytical store carries a code. `retryable` is true only for
 * failures that a later attempt of the same write can cure (the server was unreachable,
 * timed out or was overloaded); the batched writer retries those and nothing else.
 */
export type StoreErrorCode =
  /** A table or column name that is not in the table definitions. */
  | 'STORE_UNKNOWN_IDENTIFIER'
  /** A value that cannot be written or rendered (NaN, non-integer int64, lone surrogate, ...). */
  | 'STORE_INVALID_VALUE'
  /** The store answered with a number JavaScript cannot hold exactly. */
  | 'STORE_UNREPRESENTABLE_RESULT'
  /** The live schema differs from the table definitions after migrating. */
  | 'STORE_SCHEMA_MISMATCH'
  /** An applied migration file was edited afterwards (its checksum changed). */
  | 'STORE_MIGRATION_CHANGED'
  /** The server could not be reached or did not answer in time; retryable. */
  | 'STORE_UNAVAILABLE'
  /** The statement failed on the server for a reason a retry does not fix. */
  | 'STORE_QUERY_FAILED'
  | 'STORE_CLOSED';

export class StoreError extends Error {
  override readonly name = 'StoreError';

  constructor(
    readonly code: StoreErrorCode,
    message: string,
    readonly retryable = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isRetryable(err: unknown): boolean {
  return err instanceof StoreError && err.retryable;
}

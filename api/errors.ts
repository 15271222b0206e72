/** The error codes of the interface (spec §7) and the HTTP status each one maps to, in one place. */
export const ERROR_STATUS = {
  VALIDATION: 400,
  UNAUTHORIZED: 401,
  PLAN_REQUIRED: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  LIMIT_REACHED: 409,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UPSTREAM_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One problem of a request (details.issues); api/http/validate.ts says what each field holds. */
export interface ValidationIssue {
  path: string;
  code: string;
  message: string;
  expected?: string;
  minimum?: number;
  maximum?: number;
  inclusive?: boolean;
}

/** An error meant for the client: its code picks the status, its message is safe to show. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: { issues: ValidationIssue[] },
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** The spec's error body `{ error: { code, message, request_id, details? } }`, for HTTP and the stream alike. */
export function errorBody(err: ApiError, requestId: string) {
  return {
    error: {
      code: err.code,
      message: err.message,
      request_id: requestId,
      ...(err.details ? { details: err.details } : {}),
    },
  };
}

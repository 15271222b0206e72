import { ApiRequestError, createClient, type ApiClient, type components } from '../client/index.ts';

/** The typed client for the signed-in key, against the origin that served the console. */

export type Schemas = components['schemas'];
export type KeyInfo = Schemas['Key'];

export function apiFor(key: string): ApiClient {
  return createClient({ baseUrl: location.origin, key });
}

/** An error to show: the API's message and request id, or what went wrong on the way. */
export function describeError(err: unknown): { message: string; requestId: string | null } {
  if (err instanceof ApiRequestError) return { message: `${err.code}: ${err.message}`, requestId: err.requestId };
  return { message: err instanceof Error ? err.message : String(err), requestId: null };
}

export function hasScope(key: KeyInfo, scope: string): boolean {
  return key.scopes.includes(scope);
}

import type { IncomingMessage } from 'node:http';
import { ApiError } from '../api/errors.ts';
import { hashApiKey, isWellFormedApiKey, KeysUnavailableError, type ApiKey, type KeyService } from '../api/keys.ts';

/**
 * The key of an upgrade request (spec 5.6): `Authorization: Bearer`, `x-api-key`, or `?key=`
 * for browsers, checked against the keys of the log through the API's KeyService before
 * the upgrade. Throws the ApiError the refusal carries.
 */
export async function authenticateUpgrade(req: IncomingMessage, url: URL, keys: KeyService): Promise<{ key: ApiKey; hash: string }> {
  const presented = presentedKey(req, url);
  if (presented === null) throw new ApiError('UNAUTHORIZED', 'no API key: send Authorization: Bearer <key>, the x-api-key header or ?key=');
  if (!isWellFormedApiKey(presented)) throw new ApiError('UNAUTHORIZED', 'the API key is malformed');
  const hash = hashApiKey(presented);
  let key: ApiKey | null;
  try {
    key = await keys.findByHash(hash);
  } catch (err) {
    if (err instanceof KeysUnavailableError) throw new ApiError('UPSTREAM_UNAVAILABLE', 'the keys cannot be read from the log; retry');
    throw err;
  }
  if (key === null) throw new ApiError('UNAUTHORIZED', 'the API key is unknown');
  if (key.revokedAt !== null) throw new ApiError('UNAUTHORIZED', 'the API key has been revoked');
  if (!key.scopes.includes('stream:read')) throw new ApiError('FORBIDDEN', 'this key lacks the scope stream:read');
  return { key, hash };
}

function presentedKey(req: IncomingMessage, url: URL): string | null {
  const authorization = req.headers.authorization;
  if (authorization !== undefined && authorization !== '') return /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? '';
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.trim() !== '') return header.trim();
  return url.searchParams.get('key');
}

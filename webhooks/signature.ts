import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures (spec 6.3): `Service-Signature: t=<unix>,v1=<hex>`, v1 being
 * HMAC-SHA256 with the signing secret over `<t>.<raw body>`. For a while after a rotation
 * (ROTATION_OVERLAP_MS) the header carries one v1 per valid secret. `verifyWebhook` is the reference verifier that
 * receivers can copy or import (package export `token-quant-analytics/verify-webhook`).
 */

export const SIGNATURE_HEADER = 'service-signature';
/** Signatures older (or newer) than this are refused by the reference verifier. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** A new signing secret: `whsec_` and 32 random bytes, base64url. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

function hmac(secret: string, t: number, body: string | Buffer): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

/** The Service-Signature header for `body` at unix time `t`, one v1 per secret. */
export function signatureHeader(secrets: readonly string[], t: number, body: string | Buffer): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${hmac(s, t, body)}`)].join(',');
}

export class WebhookVerificationError extends Error {}

export interface VerifyOptions {
  /** The raw request body, exactly as received; never re-serialised JSON. */
  payload: string | Buffer;
  /** The Service-Signature header. */
  header: string | undefined;
  secret: string;
  toleranceSeconds?: number;
  /** Unix seconds; the system clock by default. */
  now?: number;
}

/** Checks a delivery's signature in constant time and returns its parsed body; throws WebhookVerificationError otherwise. */
export function verifyWebhook({ payload, header, secret, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now }: VerifyOptions): unknown {
  if (!header) throw new WebhookVerificationError('missing signature header');
  let t = NaN;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === 't') t = /^\d+$/.test(value ?? '') ? Number(value) : NaN;
    else if (name === 'v1' && value) candidates.push(value);
  }
  if (!Number.isSafeInteger(t)) throw new WebhookVerificationError('no timestamp in the signature header');
  if (candidates.length === 0) throw new WebhookVerificationError('no v1 signature in the header');
  const current = now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(current - t) > toleranceSeconds) throw new WebhookVerificationError('timestamp outside the tolerance');
  const expected = Buffer.from(hmac(secret, t, payload), 'hex');
  const matches = candidates.some((c) => {
    const given = Buffer.from(c, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('no signature matches');
  return JSON.parse(Buffer.isBuffer(payload) ? payload.toString('utf8') : payload);
}

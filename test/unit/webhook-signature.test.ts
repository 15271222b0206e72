import { describe, expect, it } from 'vitest';
import { newSigningSecret, signatureHeader, verifyWebhook } from '../../webhooks/signature.ts';

// Vectors computed independently: printf '%s' "$T.$BODY" | openssl dgst -sha256 -hmac "$SECRET"
const T = 1_700_000_000;
const BODY = '{"id":"ev_1","object":"event"}';
const SECRET = 'whsec_c2VjcmV0LXNpZ25pbmcta2V5LW9uZQ';
const OTHER = 'whsec_b3RoZXI';
const V1 = 'f6673e9ef26f31b0426e019cf3a71d0986231acd531137be921f83aceaa6e1f8';
const V1_OTHER = '3bb073d8d6fa0578a96064175a43d1adfef016db7278900081ce6862c0fe6e41';

describe('webhook signature', () => {
  it('signs t.<raw body> with HMAC-SHA256, one v1 per secret', () => {
    expect(signatureHeader([SECRET], T, BODY)).toBe(`t=${T},v1=${V1}`);
    expect(signatureHeader([SECRET, OTHER], T, Buffer.from(BODY))).toBe(`t=${T},v1=${V1},v1=${V1_OTHER}`);
  });

  it('verifies the raw body within the tolerance and returns the event', () => {
    expect(verifyWebhook({ payload: BODY, header: `t=${T},v1=${V1}`, secret: SECRET, now: T + 300 })).toEqual({ id: 'ev_1', object: 'event' });
    // During a rotation the header carries both; either secret verifies.
    const rotating = `t=${T},v1=${V1_OTHER},v1=${V1}`;
    expect(verifyWebhook({ payload: Buffer.from(BODY), header: rotating, secret: SECRET, now: T })).toMatchObject({ id: 'ev_1' });
    expect(verifyWebhook({ payload: BODY, header: rotating, secret: OTHER, now: T })).toMatchObject({ id: 'ev_1' });
  });

  it.each([
    ['a stale timestamp', { header: `t=${T},v1=${V1}`, now: T + 301 }, /tolerance/],
    ['a future timestamp', { header: `t=${T},v1=${V1}`, now: T - 301 }, /tolerance/],
    ['another secret', { header: `t=${T},v1=${V1_OTHER}`, now: T }, /no signature matches/],
    ['a re-serialised body', { header: `t=${T},v1=${V1}`, now: T, payload: JSON.stringify(JSON.parse(BODY), null, 1) }, /no signature matches/],
    ['a truncated signature', { header: `t=${T},v1=${V1.slice(0, 10)}`, now: T }, /no signature matches/],
    ['no timestamp', { header: `v1=${V1}`, now: T }, /timestamp/],
    ['no header', { header: undefined, now: T }, /missing/],
  ])('refuses %s', (_name, over, error) => {
    expect(() => verifyWebhook({ payload: BODY, secret: SECRET, ...over })).toThrow(error);
  });

  it('makes whsec_ secrets of 32 random bytes', () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newSigningSecret()).not.toBe(a);
  });
});

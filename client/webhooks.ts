/** `token-quant-analytics/webhooks`: the reference verifier of webhook signatures (docs/push.md). */
export * from '../webhooks/signature.ts';

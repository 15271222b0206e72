import avro from 'avsc';
import { currentSchema } from '../../../schemas/avro-schemas.ts';
export { seededRandom } from '../../../infra/feeds/sim/prng.ts';
import type { MarketTick, Mention, Post, RecordTypeName, TokenMeta } from '../../../schemas/records.ts';
import type { OutputRecord } from '../../runtime/processor.ts';
import { deterministicId } from '../../runtime/runtime.ts';
import type { Emitter } from '../contracts.ts';

/** Builders and helpers shared by the quant engine modules' tests. */

/** A Monday 00:00 UTC: on every grid. */
export const T0 = Date.UTC(2025, 0, 6);
export const MIN = 60_000;
export const HOUR = 60 * MIN;

export interface RecordingEmitter extends Emitter {
  outputs: OutputRecord[];
  /** Values emitted to `topic`, in order. */
  values<T>(topic: string): T[];
  clear(): void;
}

export function recordingEmitter(): RecordingEmitter {
  const outputs: OutputRecord[] = [];
  return {
    outputs,
    emit: (o) => outputs.push(o),
    id: deterministicId,
    values: <T>(topic: string) => outputs.filter((o) => o.topic === topic).map((o) => o.value as T),
    clear: () => outputs.splice(0),
  };
}

/** A lower-case EVM address made from a number: 0x followed by its hex, zero-padded to 40 digits. */
export function evmAddress(n: number): string {
  return `0x${n.toString(16).padStart(40, '0')}`;
}

export function tokenMeta(tokenId: string, symbol: string, ts: number, over: Partial<TokenMeta> = {}): TokenMeta {
  return {
    tokenId,
    ts,
    symbol,
    name: `${symbol} token`,
    chain: 'base',
    address: evmAddress(Number.parseInt(tokenId.replace(/\D/g, '') || '1', 10)),
    logoUrl: null,
    status: 'active',
    narrative: 'ai-agents',
    sourceUrl: null,
    ...over,
  };
}

export function post(postId: string, authorId: string, ts: number, tokenRefs: string[], over: Partial<Post> = {}): Post {
  return {
    postId,
    authorId,
    authorHandle: authorId.replace(/\W/g, '_'),
    authorFollowers: 1000,
    ts,
    kind: 'post',
    tokenRefs,
    likes: 10,
    replies: 2,
    reposts: 1,
    views: null,
    text: null,
    narrativeHints: [],
    ...over,
  };
}

export function tick(tokenId: string, ts: number, priceUsd: number, over: Partial<MarketTick> = {}): MarketTick {
  return { tokenId, ts, priceUsd, volumeUsd: 1000, liquidityUsd: 50_000, marketCapUsd: priceUsd * 1e9, trades: 5, ...over };
}

export function mention(tokenId: string, authorId: string, ts: number, engagement = 0): Mention {
  const postId = `po_${authorId}_${ts}`;
  return {
    mentionId: deterministicId('mn', postId, tokenId),
    postId,
    authorId,
    authorHandle: authorId,
    tokenId,
    ref: tokenId,
    refKind: 'id',
    postKind: 'post',
    engagement,
    ts,
  };
}

/** Encodes and decodes a value with schemas/avro/<folder>/v1.avsc, as the codec would (plain objects). */
export function avroRoundTrip(folder: string, value: unknown): unknown {
  const type = avro.Type.forSchema(JSON.parse(currentSchema(folder as RecordTypeName)), { omitRecordMethods: true });
  return type.fromBuffer(type.toBuffer(value));
}

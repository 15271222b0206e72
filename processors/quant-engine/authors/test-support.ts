import { deserialize, serialize } from 'node:v8';
import { expect } from 'vitest';
import type { z } from 'zod';
import type { Mention } from '../../../schemas/records.ts';
import { deterministicId } from '../../runtime/runtime.ts';
import type { TokenInfo, TokenLookup } from '../contracts.ts';

/** Test doubles shared by the tests of the authors, cohorts and narratives modules. */

import { avroRoundTrip } from '../tokens/fixtures.ts';

export { recordingEmitter, type RecordingEmitter } from '../tokens/fixtures.ts';

export function tokenLookup(tokens: Record<string, { narrative: string; symbol?: string }>): TokenLookup {
  const infos = new Map<string, TokenInfo>(
    Object.entries(tokens).map(([tokenId, t]) => [
      tokenId,
      {
        tokenId,
        symbol: t.symbol ?? tokenId.slice(3).toUpperCase(),
        name: tokenId,
        chain: 'solana',
        address: 'So11111111111111111111111111111111111111112',
        narrative: t.narrative,
        status: 'active',
        listedAt: 0,
      },
    ]),
  );
  return { get: (id) => infos.get(id), all: () => infos.values() };
}

let mentionSeq = 0;
export function mention(authorId: string, tokenId: string, ts: number, postId = `po_seq${++mentionSeq}`): Mention {
  return {
    mentionId: deterministicId('mn', postId, tokenId),
    postId,
    authorId,
    authorHandle: `h_${authorId}`,
    tokenId,
    ref: tokenId,
    refKind: 'id',
    postKind: 'post',
    engagement: 0,
    ts,
  };
}

/** The value survives its Avro schema unchanged and passes its zod validator. */
export function expectConforms(folder: string, schema: z.ZodType, value: unknown): void {
  expect(avroRoundTrip(folder, value)).toEqual(value);
  expect(schema.safeParse(value).error).toBeUndefined();
}

/** The state after a checkpoint round trip, as the runtime restores it. */
export function checkpointed<S>(state: S): S {
  return deserialize(serialize(state)) as S;
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import avro from 'avsc';
import { expect } from 'vitest';
import type { z } from 'zod';
import type { Mention } from '../../../schemas/records.ts';
import { deterministicId } from '../../runtime/runtime.ts';
import type { OutputRecord } from '../../runtime/processor.ts';
import type { Emitter, TokenInfo, TokenLookup } from '../contracts.ts';

/** Test doubles shared by the tests of the authors, cohorts and narratives modules. */

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

const avroTypes = new Map<string, avro.Type>();
/** The value survives its Avro schema unchanged and passes its zod validator. */
export function expectConforms(folder: string, schema: z.ZodType, value: unknown): void {
  let type = avroTypes.get(folder);
  if (!type) {
    const file = join(import.meta.dirname, '../../../schemas/avro', folder, 'v1.avsc');
    type = avro.Type.forSchema(JSON.parse(readFileSync(file, 'utf8')), { omitRecordMethods: true });
    avroTypes.set(folder, type);
  }
  expect(type.fromBuffer(type.toBuffer(value))).toEqual(value);
  expect(schema.safeParse(value).error).toBeUndefined();
}

/** The state after a checkpoint round trip, as the runtime restores it. */
export function checkpointed<S>(state: S): S {
  return deserialize(serialize(state)) as S;
}

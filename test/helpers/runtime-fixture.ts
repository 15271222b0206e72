import { pino } from 'pino';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import { LocalSchemaRegistry } from '../../infra/registry/local.ts';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import { Codec } from '../../schemas/codec.ts';
import type { MarketTick, Post } from '../../schemas/records.ts';

export const silentLogger = pino({ level: 'silent' });

/** The embedded log and codec of a data dir, as the service's bootstrap opens them. */
export async function openEmbedded(dir: string) {
  const log = await FileEventLog.open({ dir, fsync: 'never', segmentBytes: 256 * 1024, logger: silentLogger, pollIntervalMs: 20 });
  await log.ensureTopics(CATALOGUE);
  const codec = new Codec(new LocalSchemaRegistry(dir));
  await codec.registerTopics(CATALOGUE.map((t) => t.name));
  return { log, codec };
}

/** A deterministic mix of posts and ticks on four tokens, with event times interleaved across topics. */
export async function writeRuntimeInput(dir: string, posts: number): Promise<void> {
  const { log, codec } = await openEmbedded(dir);
  let seed = 42;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const tokens = ['tk_a', 'tk_b', 'tk_c', 'tk_d'];
  const start = 1_700_000_000_000;
  const postValues: { key: string; value: Buffer; timestamp: number }[] = [];
  const tickValues: { key: string; value: Buffer; timestamp: number }[] = [];
  for (let i = 0; i < posts; i++) {
    const ts = start + i * 1000 + Math.floor(random() * 5000); // slightly out of order
    const post: Post = {
      postId: `p${i}`,
      authorId: `a${i % 13}`,
      authorHandle: `author${i % 13}`,
      authorFollowers: null,
      ts,
      kind: 'post',
      tokenRefs: [tokens[i % 4], tokens[(i * 7) % 4]].filter((t, k, all) => all.indexOf(t) === k),
      likes: i % 5,
      replies: 0,
      reposts: 0,
      views: null,
      text: i === 17 ? 'explode' : null,
      narrativeHints: [],
    };
    postValues.push({ key: post.postId, value: await codec.encode('ingest.posts', post), timestamp: ts });
    const tick: MarketTick = {
      tokenId: tokens[Math.floor(random() * 4)],
      ts: ts + 300,
      priceUsd: 1 + random(),
      volumeUsd: 10,
      liquidityUsd: 1000,
      marketCapUsd: 10_000,
      trades: 3,
    };
    tickValues.push({ key: tick.tokenId, value: await codec.encode('ingest.market', tick), timestamp: tick.ts });
  }
  // Bad input: bytes that are not Avro, and a record that decodes but fails validation.
  postValues.splice(5, 0, { key: 'junk', value: Buffer.from('not avro at all'), timestamp: start + 5000 });
  const invalidTick = { ...(await codec.decode('ingest.market', tickValues[0].value) as MarketTick), priceUsd: -1 };
  tickValues.splice(9, 0, { key: 'tk_a', value: await codec.encode('ingest.market', invalidTick), timestamp: start + 9000 });
  for (let i = 0; i < postValues.length; i += 500) {
    await log.append('ingest.posts', postValues.slice(i, i + 500));
    await log.append('ingest.market', tickValues.slice(i, i + 500));
  }
  await log.close();
}

import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestCommand } from '../../cli/commands/ingest.ts';
import { loadConfig } from '../../infra/config.ts';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import { LocalSchemaRegistry } from '../../infra/registry/local.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { Codec } from '../../schemas/codec.ts';
import type { DeadLetter, MarketTick, Post, TokenMeta } from '../../schemas/records.ts';
import { sink } from '../helpers/sink.ts';

const SAMPLES = join(import.meta.dirname, '../fixtures/samples');
const EVM = '0x65e26f382862bbafffe3c33384e0dc8adf63ea9b';

function post(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    postId: id,
    authorId: 'au_1',
    authorHandle: 'alice',
    ts: '2025-01-01T00:00:00Z',
    kind: 'post',
    likes: 1,
    replies: 0,
    reposts: 0,
    ...extra,
  };
}

/** Lines of a posts file: good rows and one of each kind of malformed row. */
const POSTS_LINES = [
  JSON.stringify(post('po_good1', { tokenRefs: ['$PEPE', `base:${EVM}`] })),
  '{"postId":"po_badjson","authorId":',
  JSON.stringify(post('po_missing', { authorHandle: undefined })),
  JSON.stringify(post('po_wrongtype', { likes: '7' })),
  JSON.stringify(post('po_badchain', { tokenRefs: [`polygon:${EVM}`] })),
  JSON.stringify(post('po_badtime', { ts: 'yesterday' })),
  '',
  JSON.stringify(post('po_good2', { ts: 1735689600, text: 'gm', author_followers: 12 })),
];

describe('tqa ingest against the file log', () => {
  let dir: string;
  let dataDir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-ingest-'));
    dataDir = join(dir, 'data');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function ingest(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const stdout = sink();
    const stderr = sink();
    const code = await ingestCommand.run(args, {
      config: loadConfig({ TQA_DATA_DIR: dataDir, TQA_LOG_FSYNC: 'always' }),
      logger: pino({ level: 'silent' }),
      stdout: stdout.stream,
      stderr: stderr.stream,
    });
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  }

  /** Every record of a topic, decoded, across its partitions. */
  async function readTopic<T>(topic: string): Promise<{ key: string | null; timestamp: number; value: T }[]> {
    const log = await FileEventLog.open({ dir: dataDir, fsync: 'always', segmentBytes: 1 << 20, logger: pino({ level: 'silent' }) });
    const codec = new Codec(new LocalSchemaRegistry(dataDir));
    try {
      const out: { key: string | null; timestamp: number; value: T }[] = [];
      for (const { partition, offset } of await log.endOffsets(topic)) {
        for (const r of await log.read(topic, partition, 0, offset)) {
          out.push({ key: r.key, timestamp: r.timestamp, value: (await codec.decode(topic, r.value ?? Buffer.alloc(0))) as T });
        }
      }
      return out;
    } finally {
      await log.close();
    }
  }

  it('accepts exactly the good rows, reports and dead-letters each bad one, and exits 1', async () => {
    const file = join(dir, 'mixed-posts.ndjson');
    await writeFile(file, POSTS_LINES.join('\n') + '\n');
    const { code, stdout, stderr } = await ingest([file, '--kind', 'posts']);

    expect(code).toBe(1);
    expect(stdout).toContain('7 rows, 2 accepted, 5 rejected');
    const reports = stderr.trim().split('\n');
    expect(reports).toHaveLength(5);
    expect(reports[0]).toMatch(/mixed-posts\.ndjson:2: \(row\): invalid JSON/);
    expect(reports[1]).toMatch(/:3: authorHandle: missing$/);
    expect(reports[2]).toMatch(/:4: likes: .*expected number/);
    expect(reports[3]).toMatch(/:5: tokenRefs\[0\]: unknown chain "polygon"/);
    expect(reports[4]).toMatch(/:6: ts: invalid time "yesterday"/);

    const posts = await readTopic<Post>(TOPICS.posts.name);
    expect(posts.map((p) => p.value.postId).sort()).toEqual(['po_good1', 'po_good2']);
    const good2 = posts.find((p) => p.key === 'po_good2');
    expect(good2?.value).toMatchObject({ ts: 1_735_689_600_000, text: 'gm', authorFollowers: 12, tokenRefs: [], views: null });
    expect(good2?.timestamp).toBe(1_735_689_600_000);

    const letters = await readTopic<DeadLetter>(TOPICS.deadLetters.name);
    expect(letters.map((l) => l.value.line)).toEqual([2, 3, 4, 5, 6]);
    for (const l of letters) {
      expect(l.key).toBe('mixed-posts.ndjson');
      expect(l.value).toMatchObject({ source: 'mixed-posts.ndjson', stage: 'ingest', partition: null, offset: null });
      expect(l.value.payload?.toString('utf8')).toBe(POSTS_LINES[(l.value.line ?? 0) - 1]);
    }
    expect(letters[1].value.reason).toBe('authorHandle: missing');
    expect(letters[1].value.key).toBe('po_missing');
    // Event time when the row had one, else the time of rejection.
    expect(letters[1].value.ts).toBe(Date.UTC(2025, 0, 1));
    expect(letters[4].value.ts).toBeGreaterThan(Date.UTC(2025, 0, 2));
  });

  it('reports CSV rows by line and field, with an unknown chain refused', async () => {
    const file = join(dir, 'tokens.csv');
    const lines = [
      'token_id,ts,symbol,name,chain,address,logo_url,narrative',
      `tk_a1,2025-01-01T00:00:00Z,PEPE,Pepe Coin,base,${EVM},,memes`,
      `tk_a2,2025-01-01T00:00:00Z,PEPE,"Pepe, on Polygon",polygon,${EVM},,memes`,
      `tk_a3,1735689600000,WIF,"Dog ""wif"" hat",solana,${EVM},https://cdn.example.com/wif.png,memes`,
      `tk_a4,1735689600,BONK,Bonk,solana,MBTiL5cmvZU7dbtggpwT1b44Tw62dguDsrrjCApump,https://cdn.example.com/bonk.png,memes`,
    ];
    await writeFile(file, lines.join('\r\n') + '\r\n');
    const { code, stderr } = await ingest([file, '--kind', 'tokens']);

    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/tokens\.csv:3: chain: .*"solana"/),
      expect.stringMatching(/tokens\.csv:4: address: not a solana address/),
    ]);
    const tokens = await readTopic<TokenMeta>(TOPICS.tokens.name);
    expect(tokens.map((t) => t.value).sort((a, b) => a.tokenId.localeCompare(b.tokenId))).toEqual([
      expect.objectContaining({ tokenId: 'tk_a1', logoUrl: null, status: 'active', sourceUrl: null }),
      expect.objectContaining({ tokenId: 'tk_a4', ts: 1_735_689_600_000, address: 'MBTiL5cmvZU7dbtggpwT1b44Tw62dguDsrrjCApump' }),
    ]);
    const letters = (await readTopic<DeadLetter>(TOPICS.deadLetters.name)).filter((l) => l.key === 'tokens.csv');
    expect(letters.map((l) => l.value.payload?.toString('utf8'))).toEqual([lines[2], lines[3]]);
  });

  it('reads CSV posts with a byte-order mark, ;-separated lists and quoted fields spanning lines', async () => {
    const file = join(dir, 'posts.csv');
    const header = 'post_id,author_id,author_handle,author_followers,ts,kind,token_refs,likes,replies,reposts,views,text,narrative_hints';
    const rows = [
      `po_csv1,au_1,alice,,2025-01-01T00:00:00.5Z,post,$PEPE; tk_abc ;solana:MBTiL5cmvZU7dbtggpwT1b44Tw62dguDsrrjCApump,3,0,1,,"two lines:\nstill $PEPE, ""quoted""",memes;ai-agents`,
      'po_csv2,au_2,bob,10,1735689600,reply,,0,0,0,5,,',
    ];
    await writeFile(file, '\ufeff' + [header, ...rows].join('\n'));
    const { code, stderr } = await ingest([file, '--kind', 'posts']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const posts = (await readTopic<Post>(TOPICS.posts.name)).filter((p) => p.key?.startsWith('po_csv'));
    expect(posts.map((p) => p.value).sort((a, b) => a.postId.localeCompare(b.postId))).toEqual([
      {
        postId: 'po_csv1',
        authorId: 'au_1',
        authorHandle: 'alice',
        authorFollowers: null,
        ts: Date.UTC(2025, 0, 1, 0, 0, 0, 500),
        kind: 'post',
        tokenRefs: ['$PEPE', 'tk_abc', 'solana:MBTiL5cmvZU7dbtggpwT1b44Tw62dguDsrrjCApump'],
        likes: 3,
        replies: 0,
        reposts: 1,
        views: null,
        text: 'two lines:\nstill $PEPE, "quoted"',
        narrativeHints: ['memes', 'ai-agents'],
      },
      expect.objectContaining({ postId: 'po_csv2', authorFollowers: 10, ts: 1_735_689_600_000, tokenRefs: [], text: null, narrativeHints: [] }),
    ]);
  });

  it('refuses a CSV file whose header names an unknown column, producing nothing', async () => {
    const file = join(dir, 'typo.csv');
    await writeFile(file, 'token_id,ts,price_usd,volume_usd,liquidity_usd,market_cap_usd,trade\ntk_x,1735689600,1,1,1,1,1\n');
    const before = (await readTopic<MarketTick>(TOPICS.market.name)).length;
    const { code, stderr } = await ingest([file, '--kind', 'market']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/line 1: unknown column "trade"/);
    expect((await readTopic<MarketTick>(TOPICS.market.name)).length).toBe(before);
  });

  it('imports the shipped samples with every row accepted and exit code 0', async () => {
    const before = (await readTopic<MarketTick>(TOPICS.market.name)).length;
    for (const [name, kind] of [
      ['tokens.ndjson', 'tokens'],
      ['market.csv', 'market'],
      ['posts.ndjson', 'posts'],
    ]) {
      const file = join(dir, name);
      await copyFile(join(SAMPLES, name), file);
      const { code, stderr } = await ingest([file, '--kind', kind]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
    }
    const ticks = await readTopic<MarketTick>(TOPICS.market.name);
    expect(ticks.length - before).toBe(8);
    expect(ticks.find((t) => t.value.ts === Date.UTC(2025, 0, 1, 0, 10, 0, 250))?.value.tokenId).toBe('tk_9oZkxVgNThyF');
  });
});

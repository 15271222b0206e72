import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Simulator, STEP_MS, type GroundTruth, type SimRecord } from '../../infra/feeds/sim/engine.ts';
import { runLive, seedHistory, type LiveClock } from '../../infra/feeds/sim/runner.ts';
import { groundTruthFile, loadSimState } from '../../infra/feeds/sim/state-store.ts';
import { buildWorld } from '../../infra/feeds/sim/world.ts';
import type { OutgoingRecord } from '../../infra/log/port.ts';
import type { SchemaRegistryClient } from '../../schemas/registry-port.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { Codec } from '../../schemas/codec.ts';
import { MarketTickSchema, PostSchema, TokenMetaSchema, type Post, type TokenMeta } from '../../schemas/records.ts';
import { parseTokenRef } from '../../schemas/token-ref.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const END = Date.UTC(2025, 0, 8);

class MemoryRegistry implements SchemaRegistryClient {
  private readonly schemas: string[] = [];
  async register(_subject: string, schema: string): Promise<number> {
    const known = this.schemas.indexOf(schema);
    return known >= 0 ? known + 1 : this.schemas.push(schema);
  }
  async schemaById(id: number): Promise<string> {
    const schema = this.schemas[id - 1];
    if (!schema) throw new Error(`unknown schema id ${id}`);
    return schema;
  }
}

/** The one EventLog method producers use, keeping what was appended in order. */
class MemoryLog {
  readonly records: { topic: string; key: string | null; value: Buffer | null; timestamp: number }[] = [];
  async append(topic: string, records: OutgoingRecord[]) {
    return records.map((r) => ({
      partition: 0,
      offset: this.records.push({ topic, key: r.key, value: r.value, timestamp: r.timestamp ?? -1 }) - 1,
    }));
  }
}

function digest(records: MemoryLog['records']): string {
  const hash = createHash('sha256');
  for (const r of records) {
    hash.update(`${r.topic}\0${r.key}\0${r.timestamp}\0`);
    hash.update(r.value ?? Buffer.alloc(0));
  }
  return hash.digest('hex');
}

function simulate(seed: number, days: number, tokens: number, authors: number): { records: SimRecord[]; truth: GroundTruth } {
  const sim = Simulator.start({ seed, tokens, authors, startMs: END - days * DAY });
  const records: SimRecord[] = [];
  while (sim.clockMs < END) records.push(...sim.step());
  return { records, truth: sim.groundTruth() };
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-sim-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function history(seed: number, dataDir: string) {
  const log = new MemoryLog();
  const codec = new Codec(new MemoryRegistry());
  const result = await seedHistory({ log, codec, dataDir, seed, days: 1, endMs: END, tokens: 40, authors: 200, batchRecords: 3000 });
  return { log, codec, result };
}

describe('simulator determinism', () => {
  it('produces byte-identical encoded records for the same seed, different ones for another seed', async () => {
    const a = await history(7, await tempDir());
    const b = await history(7, await tempDir());
    const c = await history(8, await tempDir());
    expect(a.log.records.length).toBeGreaterThan(10_000);
    expect(a.result.records).toBe(a.log.records.length);
    expect(digest(a.log.records)).toBe(digest(b.log.records));
    expect(digest(c.log.records)).not.toBe(digest(a.log.records));
    expect(a.result).toMatchObject({ startMs: END - DAY, endMs: END });
  });

  it('continues a restored snapshot with exactly the records of an uninterrupted run', () => {
    const params = { seed: 3, tokens: 30, authors: 100, startMs: END - DAY };
    const straight = Simulator.start(params);
    const resumed = Simulator.start(params);
    for (let i = 0; i < 300; i++) {
      straight.step();
      resumed.step();
    }
    const restored = Simulator.restore(JSON.parse(JSON.stringify(resumed.snapshot())));
    for (let i = 0; i < 300; i++) expect(restored.step()).toEqual(straight.step());
  });
});

describe('simulated records', () => {
  const { records, truth } = simulate(11, 3, 150, 600);

  it('are valid records of their topic in non-decreasing event time, with parseable token references', () => {
    const small = simulate(12, 1, 40, 200).records;
    const schemas = { [TOPICS.posts.name]: PostSchema, [TOPICS.market.name]: MarketTickSchema, [TOPICS.tokens.name]: TokenMetaSchema };
    const problems: string[] = [];
    const forms = new Set<string>();
    let last = 0;
    for (const r of small) {
      if (r.timestamp < last || r.value.ts !== r.timestamp) problems.push(`out of order or mistimed: ${JSON.stringify(r)}`);
      last = r.timestamp;
      const parsed = schemas[r.topic].safeParse(r.value);
      if (!parsed.success) problems.push(`${r.topic} ${JSON.stringify(r.value)}: ${parsed.error.message}`);
      if (r.topic !== TOPICS.posts.name) continue;
      for (const ref of r.value.tokenRefs) {
        const p = parseTokenRef(ref);
        if (!p.ok) problems.push(p.error);
        else forms.add(p.ref.kind === 'symbol' && p.ref.dollar ? '$symbol' : p.ref.kind);
      }
    }
    expect(problems).toEqual([]);
    expect(small.length).toBeGreaterThan(10_000);
    expect([...forms].sort()).toEqual(['$symbol', 'address', 'chain_address', 'id', 'symbol']);
  });

  it('plants the structure the ground truth describes', () => {
    const tokens = records.flatMap((r) => (r.topic === TOPICS.tokens.name ? [r.value as TokenMeta] : []));
    const posts = records.flatMap((r) => (r.topic === TOPICS.posts.name ? [r.value as Post] : []));
    // Resolve references as a consumer would, from token metadata; shared symbols are skipped.
    const bySymbol = new Map<string, string[]>();
    const byAddress = new Map<string, string>();
    for (const t of tokens) {
      bySymbol.set(t.symbol.toUpperCase(), [...(bySymbol.get(t.symbol.toUpperCase()) ?? []), t.tokenId]);
      byAddress.set(t.address.toLowerCase(), t.tokenId);
    }
    expect([...bySymbol.values()].some((ids) => ids.length > 1)).toBe(true);
    const resolve = (s: string): string | undefined => {
      const p = parseTokenRef(s);
      if (!p.ok) return undefined;
      if (p.ref.kind === 'id') return p.ref.id;
      if (p.ref.kind === 'symbol') {
        const ids = bySymbol.get(p.ref.symbol);
        return ids?.length === 1 ? ids[0] : undefined;
      }
      return byAddress.get(p.ref.address.toLowerCase());
    };
    const firstMention = new Map<string, { author: string; token: string; ts: number }>();
    for (const post of posts) {
      for (const s of post.tokenRefs) {
        const token = resolve(s);
        const k = `${post.authorId}|${token}`;
        if (token && !firstMention.has(k)) firstMention.set(k, { author: post.authorId, token, ts: post.ts });
      }
    }
    const typeOf = new Map(truth.authors.map((a) => [a.authorId, a.type]));
    const start = END - 3 * DAY;
    // Breakouts with at least 6 h of observed run-up.
    const breakout = new Map(
      truth.tokens.flatMap((t) => {
        const b = t.breakoutsMs.find((ms) => ms > start + 6 * HOUR);
        return b === undefined ? [] : [[t.tokenId, b] as const];
      }),
    );
    const death = new Map(truth.tokens.map((t) => [t.tokenId, t.deathMs]));
    expect(breakout.size).toBeGreaterThan(20);

    const leadHours = (type: string): number[] =>
      [...firstMention.values()]
        .filter((m) => typeOf.get(m.author) === type && breakout.has(m.token))
        .map((m) => (m.ts - (breakout.get(m.token) ?? 0)) / HOUR);
    const early = leadHours('early_right');
    const followers = leadHours('follower');
    expect(early.length).toBeGreaterThan(100);
    expect(followers.length).toBeGreaterThan(100);
    // Early authors first talk about a future breakout hours before it; followers after it started.
    expect(median(early)).toBeLessThan(-3);
    expect(median(followers)).toBeGreaterThan(1);
    expect(median(followers) - median(early)).toBeGreaterThan(6);

    const diesAfter = (shill: boolean): number => {
      const pairs = [...firstMention.values()].filter((m) => (typeOf.get(m.author) === 'shill') === shill);
      return pairs.filter((m) => (death.get(m.token) ?? Infinity) > m.ts && death.get(m.token) != null).length / pairs.length;
    };
    expect(diesAfter(true)).toBeGreaterThan(2 * diesAfter(false));
  });

  it('gives follower counts that carry no information about the author type', () => {
    const world = buildWorld({ seed: 5, tokens: 10, authors: 3000, startMs: END });
    const all = median(world.authors.flatMap((a) => (a.followers === null ? [] : [a.followers])));
    for (const type of ['early_right', 'follower', 'shill', 'specialist', 'bot']) {
      const m = median(world.authors.flatMap((a) => (a.type === type && a.followers !== null ? [a.followers] : [])));
      expect(m / all).toBeGreaterThan(1 / 1.6);
      expect(m / all).toBeLessThan(1.6);
    }
  });
});

describe('ground truth', () => {
  let dataDir: string;
  let log: MemoryLog;
  let codec: Codec;
  beforeAll(async () => {
    dataDir = await tempDir();
    ({ log, codec } = await history(21, dataDir));
  });

  it('is written beside the log and never into a topic', async () => {
    const truth = JSON.parse(await readFile(groundTruthFile(dataDir), 'utf8')) as GroundTruth;
    expect(truth.authors).toHaveLength(200);
    expect(new Set(truth.authors.map((a) => a.type))).toEqual(new Set(['early_right', 'follower', 'shill', 'specialist', 'bot']));
    expect(truth.tokens).toHaveLength(40);
    const launched = truth.tokens.filter((t) => t.launchMs === null || t.launchMs < END);
    expect(launched.length).toBeGreaterThan(30);
    expect(launched.every((t) => t.regimes.length > 0)).toBe(true);
    expect(truth.throughMs).toBe(END);

    expect(new Set(log.records.map((r) => r.topic))).toEqual(
      new Set([TOPICS.posts.name, TOPICS.market.name, TOPICS.tokens.name]),
    );
    const hidden = /\b(early_right|follower|shill|specialist|bot|accumulation|breakout|distribution|cooling)\b/;
    const leaks: unknown[] = [];
    for (const r of log.records) {
      const value = await codec.decode(r.topic, r.value ?? Buffer.alloc(0));
      if (hidden.test(JSON.stringify(value))) leaks.push(value);
    }
    expect(leaks).toEqual([]);
  });

  it('lets live mode resume exactly where history and a stopped live run left off', async () => {
    const params = { seed: 21, tokens: 40, authors: 200, startMs: END - DAY };
    const straight = Simulator.start(params);
    const expected: SimRecord[] = [];
    while (straight.clockMs < END + 4 * HOUR) expected.push(...straight.step());

    // A wall clock that jumps forward whenever live mode waits.
    let wall = 1_000_000;
    const clock: LiveClock = { now: () => wall, sleep: async (ms) => void (wall += ms) };
    const live = async (untilMs: number) => {
      const stop = new AbortController();
      return runLive({
        log,
        codec,
        dataDir,
        speed: 600,
        signal: stop.signal,
        clock,
        catchUp: false,
        saveEveryMs: Infinity,
        onProgress: (p) => p.simMs >= untilMs && stop.abort(),
      });
    };
    // Stop mid-step (not on a minute boundary) to exercise the skip of already produced records.
    const first = await live(END + 97 * 60_000 + 30_000);
    expect((await loadSimState(dataDir))?.skip).toBeGreaterThan(0);
    const second = await live(END + 3 * HOUR);
    expect(first.records).toBeGreaterThan(0);
    expect(second.startMs).toBeLessThan(first.endMs);

    const produced = log.records.slice(log.records.length - first.records - second.records);
    const wanted = expected.filter((r) => r.timestamp >= END).slice(0, produced.length);
    expect(produced.length).toBeGreaterThan(1000);
    expect(produced.at(-1)?.timestamp).toBeGreaterThanOrEqual(END + 3 * HOUR - 2 * STEP_MS);
    // Appends go out per topic, so order is compared within each topic.
    const byTopic = (rows: { topic: string; key: string | null; timestamp: number; hex: string }[]) => {
      const groups = new Map<string, typeof rows>();
      for (const r of rows) {
        const group = groups.get(r.topic);
        if (group) group.push(r);
        else groups.set(r.topic, [r]);
      }
      return groups;
    };
    const encoded = await Promise.all(
      wanted.map(async (r) => ({ ...r, hex: (await codec.encode(r.topic, r.value)).toString('hex') })),
    );
    expect(byTopic(produced.map((r) => ({ topic: r.topic, key: r.key, timestamp: r.timestamp, hex: r.value?.toString('hex') ?? '' })))).toEqual(
      byTopic(encoded.map((r) => ({ topic: r.topic, key: r.key, timestamp: r.timestamp, hex: r.hex }))),
    );
  });
});

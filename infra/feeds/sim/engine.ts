import { TOPICS } from '../../../schemas/catalogue.ts';
import type { MarketTick, Post, TokenMeta } from '../../../schemas/records.ts';
import { Rng, type RngState } from './prng.ts';
import { chatterText, thesisText, type Tone } from './text.ts';
import {
  buildWorld,
  narrativeAttention,
  NARRATIVE_SLUGS,
  type AuthorType,
  type SimAuthor,
  type SimToken,
  type World,
  type WorldParams,
} from './world.ts';

/**
 * The simulation proper. Time advances in one-minute steps; each step moves every token's
 * latent regime, price and liquidity, draws the posts that mention it and the market ticks
 * that fall due, and returns the step's records sorted by event time. All randomness comes
 * from one seeded generator whose state is part of the snapshot, so a restored simulator
 * continues with exactly the records the original would have produced.
 */

export const STEP_MS = 60_000;
const MIN_MS = 60_000;
const HOUR_MS = 3_600_000;
const NEVER = Number.MAX_SAFE_INTEGER;

export const REGIMES = ['quiet', 'accumulation', 'breakout', 'distribution', 'cooling', 'dead'] as const;
export type Regime = (typeof REGIMES)[number];

export type SimRecord =
  | { topic: typeof TOPICS.posts.name; key: string; value: Post; timestamp: number }
  | { topic: typeof TOPICS.market.name; key: string; value: MarketTick; timestamp: number }
  | { topic: typeof TOPICS.tokens.name; key: string; value: TokenMeta; timestamp: number };

/** The moving part of one token: its regime plan and market state. Plain data, saved as JSON. */
export interface TokenDyn {
  live: boolean;
  regime: Regime;
  regimeStart: number;
  regimeEnd: number;
  /** Planned regime after this one: lets early authors "know" which tokens will break out. */
  next: Regime;
  /** Log-price and log-liquidity drift per minute while in this regime. */
  drift: number;
  liqDrift: number;
  logPrice: number;
  logLiq: number;
  lastPriceMs: number;
  lastTickMs: number;
  nextTickMs: number;
  /** Mentions per minute of a social surge that the market ignores; decays each step. */
  surge: number;
}

export interface SimState {
  version: 1;
  world: WorldParams;
  clockMs: number;
  rng: RngState;
  seq: number;
  tokens: TokenDyn[];
  /** Ground truth: per token, the regimes entered and when, oldest first. */
  regimeLog: [Regime, number][][];
}

export interface GroundTruth {
  version: 1;
  world: WorldParams;
  /** Regimes are known up to this time (epoch ms); a `toMs` of null means still running then. */
  throughMs: number;
  narratives: { slug: string; periodMs: number; phase: number; amplitude: number }[];
  authors: {
    authorId: string;
    handle: string;
    type: AuthorType;
    specialty: string | null;
    followers: number | null;
  }[];
  tokens: {
    tokenId: string;
    symbol: string;
    chain: string;
    address: string;
    narrative: string;
    /** Null for tokens that already existed when the simulation started. */
    launchMs: number | null;
    regimes: { regime: Regime; fromMs: number; toMs: number | null }[];
    breakoutsMs: number[];
    deathMs: number | null;
  }[];
}

interface RegimeParams {
  /** Price noise per square-root minute. */
  vol: number;
  /** Share of liquidity traded per minute. */
  turnover: number;
  /** Tick spacing range in ms. */
  tickMs: [number, number];
  next: [Regime, number][];
}

const REGIME: Record<Regime, RegimeParams> = {
  quiet: { vol: 0.002, turnover: 0.00005, tickMs: [240_000, 360_000], next: [['accumulation', 0.97], ['dead', 0.03]] },
  accumulation: {
    vol: 0.003,
    turnover: 0.0001,
    tickMs: [120_000, 240_000],
    next: [['breakout', 0.45], ['quiet', 0.47], ['dead', 0.08]],
  },
  breakout: { vol: 0.01, turnover: 0.001, tickMs: [60_000, 90_000], next: [['distribution', 0.97], ['dead', 0.03]] },
  distribution: { vol: 0.007, turnover: 0.0006, tickMs: [90_000, 150_000], next: [['cooling', 0.95], ['dead', 0.05]] },
  cooling: { vol: 0.004, turnover: 0.0002, tickMs: [180_000, 300_000], next: [['quiet', 0.94], ['dead', 0.06]] },
  dead: { vol: 0.006, turnover: 0.00001, tickMs: [900_000, 1_800_000], next: [['dead', 1]] },
};

/** Regime a token already existing at the start is found in. */
const INITIAL_REGIMES: [Regime, number][] = [
  ['quiet', 0.5],
  ['accumulation', 0.25],
  ['breakout', 0.05],
  ['distribution', 0.07],
  ['cooling', 0.08],
  ['dead', 0.05],
];

// Mention streams: who talks about a token. Specialists appear twice: calls inside their
// narrative (drawn from that narrative's specialists) and noise about anything.
const EARLY = 0;
const FOLLOWER = 1;
const SHILL = 2;
const SPECIALIST = 3;
const BOT = 4;
const SPECIALIST_NOISE = 5;
const STREAMS = 6;
const STREAM_TYPE: AuthorType[] = ['early_right', 'follower', 'shill', 'specialist', 'bot', 'specialist'];

const CHATTER_PER_MIN = 2.5;
const SURGE_PER_MIN = 1 / (4 * 24 * 60);
const SURGE_DECAY = 0.985;

interface AuthorPool {
  authors: number[];
  cumulative: number[];
  total: number;
}

export class Simulator {
  readonly world: World;
  private readonly rng: Rng;
  private clock: number;
  private seq: number;
  private readonly tokens: TokenDyn[];
  private readonly regimeLog: [Regime, number][][];
  private readonly pools: AuthorPool[];
  private readonly specialistPools: AuthorPool[];
  private readonly allAuthors: AuthorPool;
  private readonly tokensByNarrative: number[][];
  private readonly rates = new Float64Array(STREAMS);
  private readonly attention = new Float64Array(NARRATIVE_SLUGS.length);

  private constructor(world: World, rng: Rng, clock: number, seq: number, tokens: TokenDyn[], log: [Regime, number][][]) {
    this.world = world;
    this.rng = rng;
    this.clock = clock;
    this.seq = seq;
    this.tokens = tokens;
    this.regimeLog = log;
    this.pools = STREAM_TYPE.map((type) => pool(world.authors.filter((a) => a.type === type)));
    this.specialistPools = NARRATIVE_SLUGS.map((_, n) =>
      pool(world.authors.filter((a) => a.type === 'specialist' && a.specialty === n)),
    );
    this.allAuthors = pool(world.authors);
    this.tokensByNarrative = NARRATIVE_SLUGS.map((_, n) => world.tokens.filter((t) => t.narrative === n).map((t) => t.index));
  }

  /** A new world whose first step starts at `params.startMs` (a minute boundary is expected). */
  static start(params: WorldParams): Simulator {
    const world = buildWorld(params);
    const tokens = world.tokens.map(
      (): TokenDyn => ({
        live: false,
        regime: 'quiet',
        regimeStart: 0,
        regimeEnd: NEVER,
        next: 'quiet',
        drift: 0,
        liqDrift: 0,
        logPrice: 0,
        logLiq: 0,
        lastPriceMs: 0,
        lastTickMs: 0,
        nextTickMs: NEVER,
        surge: 0,
      }),
    );
    return new Simulator(world, Rng.seeded(params.seed, 'dynamics'), params.startMs, 0, tokens, world.tokens.map(() => []));
  }

  static restore(state: SimState): Simulator {
    const world = buildWorld(state.world);
    if (state.tokens.length !== world.tokens.length) throw new Error('simulator state does not match its world');
    return new Simulator(
      world,
      Rng.restore(state.rng),
      state.clockMs,
      state.seq,
      state.tokens.map((t) => ({ ...t })),
      state.regimeLog.map((entries) => entries.map(([r, at]): [Regime, number] => [r, at])),
    );
  }

  /** Start of the next step: every record produced so far has an earlier event time. */
  get clockMs(): number {
    return this.clock;
  }

  snapshot(): SimState {
    return {
      version: 1,
      world: { ...this.world.params },
      clockMs: this.clock,
      rng: this.rng.state(),
      seq: this.seq,
      tokens: this.tokens.map((t) => ({ ...t })),
      regimeLog: this.regimeLog.map((entries) => entries.map(([r, at]): [Regime, number] => [r, at])),
    };
  }

  /** Records with event times in [clockMs, clockMs + STEP_MS), sorted by time; advances the clock. */
  step(): SimRecord[] {
    const t = this.clock;
    const end = t + STEP_MS;
    const out: SimRecord[] = [];
    for (let n = 0; n < this.attention.length; n++) {
      this.attention[n] = narrativeAttention(this.world.narratives[n], t);
    }
    for (const token of this.world.tokens) {
      const d = this.tokens[token.index];
      if (!d.live) {
        if (token.launchMs >= end) continue;
        this.launch(token, d, Math.max(token.launchMs, t), out);
      }
      // Ticks and regime changes in time order, so no tick shows a change before it happens.
      for (;;) {
        if (d.nextTickMs < end && d.nextTickMs <= d.regimeEnd) this.tick(token, d, out);
        else if (d.regimeEnd < end) this.enterRegime(token, d, d.next, d.regimeEnd);
        else break;
      }
      this.mentions(token, d, t, out);
    }
    const chatter = this.rng.poisson(CHATTER_PER_MIN);
    for (let i = 0; i < chatter; i++) this.chatter(t, out);
    this.clock = end;
    return out.sort((a, b) => a.timestamp - b.timestamp);
  }

  /** Author types, narratives and every token's regime history up to the current clock. */
  groundTruth(): GroundTruth {
    const { world } = this;
    return {
      version: 1,
      world: { ...world.params },
      throughMs: this.clock,
      narratives: world.narratives.map((n) => ({ ...n })),
      authors: world.authors.map((a) => ({
        authorId: a.authorId,
        handle: a.handle,
        type: a.type,
        specialty: a.specialty >= 0 ? NARRATIVE_SLUGS[a.specialty] : null,
        followers: a.followers,
      })),
      tokens: world.tokens.map((tok) => {
        const log = this.regimeLog[tok.index];
        const regimes = log.map(([regime, fromMs], i) => ({ regime, fromMs, toMs: log[i + 1]?.[1] ?? null }));
        return {
          tokenId: tok.tokenId,
          symbol: tok.symbol,
          chain: tok.chain,
          address: tok.address,
          narrative: NARRATIVE_SLUGS[tok.narrative],
          launchMs: tok.launchMs < world.params.startMs ? null : tok.launchMs,
          regimes,
          breakoutsMs: regimes.filter((r) => r.regime === 'breakout').map((r) => r.fromMs),
          deathMs: regimes.find((r) => r.regime === 'dead')?.fromMs ?? null,
        };
      }),
    };
  }

  private launch(token: SimToken, d: TokenDyn, at: number, out: SimRecord[]): void {
    const rng = this.rng;
    const existing = token.launchMs < this.world.params.startMs;
    const marketCap = existing ? rng.logNormal(2_000_000, 1.5) : rng.logNormal(150_000, 0.8);
    d.live = true;
    d.logPrice = Math.log(marketCap / token.supply);
    d.logLiq = Math.log(marketCap * rng.range(0.03, 0.15));
    d.lastPriceMs = at;
    d.lastTickMs = at;
    if (existing) {
      const regime = INITIAL_REGIMES[rng.weighted(INITIAL_REGIMES.map(([, w]) => w), 1)][0];
      // Found part-way through a regime that began before the simulation did.
      this.enterRegime(token, d, regime, at);
      const elapsed = regime === 'dead' ? rng.range(0, 72 * HOUR_MS) : Math.floor(rng.float() * (d.regimeEnd - at));
      d.regimeStart = at - Math.round(elapsed);
      if (d.regimeEnd !== NEVER) d.regimeEnd -= Math.round(elapsed);
      if (d.regimeEnd <= at) d.regimeEnd = at + MIN_MS;
      this.regimeLog[token.index][this.regimeLog[token.index].length - 1][1] = d.regimeStart;
    } else {
      this.enterRegime(token, d, rng.chance(0.5) ? 'accumulation' : 'quiet', at);
    }
    d.nextTickMs = at + Math.floor(rng.float() * REGIME[d.regime].tickMs[0]);
    const value: TokenMeta = {
      tokenId: token.tokenId,
      ts: at,
      symbol: token.symbol,
      name: token.name,
      chain: token.chain,
      address: token.address,
      logoUrl: token.logoUrl,
      status: 'active',
      narrative: NARRATIVE_SLUGS[token.narrative],
      sourceUrl: token.sourceUrl,
    };
    out.push({ topic: TOPICS.tokens.name, key: token.tokenId, value, timestamp: at });
  }

  private enterRegime(token: SimToken, d: TokenDyn, regime: Regime, at: number): void {
    const rng = this.rng;
    if (d.lastPriceMs < at) this.advanceMarket(d, at);
    const minutes = regimeMinutes(rng, regime, this.attention[token.narrative]);
    d.regime = regime;
    d.regimeStart = at;
    d.regimeEnd = regime === 'dead' ? NEVER : at + Math.round(minutes * MIN_MS);
    const next = REGIME[regime].next;
    d.next = next[rng.weighted(next.map(([, w]) => w), 1)][0];
    d.liqDrift = 0;
    switch (regime) {
      case 'quiet':
        d.drift = Math.log(rng.range(0.9, 1.08)) / minutes;
        break;
      case 'accumulation':
        d.drift = Math.log(rng.range(1.0, 1.35)) / minutes;
        d.liqDrift = Math.log(1.1) / minutes;
        break;
      case 'breakout': {
        // Some breakouts barely move the price even though attention explodes.
        const gain = Math.log(Math.max(1.15, rng.logNormal(3, 0.6)));
        d.drift = gain / minutes;
        d.liqDrift = (0.5 * gain) / minutes;
        break;
      }
      case 'distribution':
        d.drift = Math.log(rng.range(0.7, 1.05)) / minutes;
        break;
      case 'cooling':
        d.drift = Math.log(rng.range(0.3, 0.8)) / minutes;
        d.liqDrift = Math.log(0.7) / minutes;
        break;
      case 'dead':
        d.drift = 0;
        // Liquidity pulled or collapsed: price and depth gone at once (skipped for tokens found dead).
        if (this.regimeLog[token.index].length > 0) {
          d.logPrice += Math.log(rng.range(0.01, 0.1));
          d.logLiq += Math.log(rng.range(0.005, 0.05));
        }
        d.surge = 0;
        break;
    }
    this.regimeLog[token.index].push([regime, at]);
  }

  private advanceMarket(d: TokenDyn, to: number): void {
    const minutes = (to - d.lastPriceMs) / MIN_MS;
    if (minutes <= 0) return;
    const noise = REGIME[d.regime].vol * Math.sqrt(minutes);
    d.logPrice = clamp(d.logPrice + d.drift * minutes + noise * this.rng.normal(), -40, 30);
    d.logLiq = clamp(d.logLiq + d.liqDrift * minutes + 0.2 * noise * this.rng.normal(), 0, 30);
    d.lastPriceMs = to;
  }

  private tick(token: SimToken, d: TokenDyn, out: SimRecord[]): void {
    const rng = this.rng;
    const ts = d.nextTickMs;
    this.advanceMarket(d, ts);
    const params = REGIME[d.regime];
    const liquidity = Math.exp(d.logLiq);
    const price = Math.exp(d.logPrice);
    const minutes = (ts - d.lastTickMs) / MIN_MS;
    const volume = liquidity * params.turnover * minutes * rng.logNormal(1, 0.6);
    const trades = volume > 0 ? Math.max(1, Math.round((volume / token.avgTradeUsd) * rng.range(0.7, 1.3))) : 0;
    const value: MarketTick = {
      tokenId: token.tokenId,
      ts,
      priceUsd: price,
      volumeUsd: volume,
      liquidityUsd: liquidity,
      marketCapUsd: price * token.supply,
      trades,
    };
    out.push({ topic: TOPICS.market.name, key: token.tokenId, value, timestamp: ts });
    d.lastTickMs = ts;
    const [lo, hi] = params.tickMs;
    d.nextTickMs = ts + lo + Math.floor(rng.float() * (hi - lo));
  }

  private mentions(token: SimToken, d: TokenDyn, t: number, out: SimRecord[]): void {
    const rng = this.rng;
    const attention = this.attention[token.narrative];
    if (d.regime !== 'dead' && d.regime !== 'breakout' && d.surge === 0 && rng.float() < SURGE_PER_MIN) {
      d.surge = rng.range(0.05, 0.3);
    }
    const total = this.mentionRates(d, t, attention * token.hype);
    if (d.surge > 0) d.surge = d.surge < 0.002 ? 0 : d.surge * SURGE_DECAY;
    const count = rng.poisson(total);
    for (let i = 0; i < count; i++) {
      const stream = rng.weighted(this.rates, total);
      const source = stream === SPECIALIST ? this.specialistPools[token.narrative] : this.pools[stream];
      if (source.total === 0) continue;
      const author = this.world.authors[pickAuthor(rng, source)];
      this.post(author, token, d, t + rng.int(STEP_MS), toneOf(stream, d.regime), out);
    }
  }

  /**
   * Fills `this.rates` with expected mentions per minute by stream and returns their sum.
   * The planted structure lives here: early authors and in-narrative specialists talk about
   * tokens whose accumulation will end in a breakout, shills about tokens about to die,
   * followers pile in once a breakout has run for a while, bots chase whatever is loud.
   */
  private mentionRates(d: TokenDyn, t: number, loudness: number): number {
    const r = this.rates;
    r.fill(0);
    const progress = d.regimeEnd === NEVER ? 0 : Math.min(1, (t - d.regimeStart) / (d.regimeEnd - d.regimeStart));
    const sinceStart = t - d.regimeStart;
    const doomed = d.next === 'dead';
    switch (d.regime) {
      case 'quiet':
        r[BOT] = 0.002 * loudness;
        r[FOLLOWER] = 0.0004 * loudness;
        r[SHILL] = doomed ? 0.002 + 0.006 * progress : 0.0001;
        r[SPECIALIST_NOISE] = 0.0004;
        break;
      case 'accumulation':
        r[BOT] = 0.003 * loudness;
        r[FOLLOWER] = 0.0008 * loudness;
        if (d.next === 'breakout') {
          r[EARLY] = 0.004 + 0.012 * progress;
          r[SPECIALIST] = 0.003 + 0.008 * progress;
          r[SHILL] = 0.0002;
        } else if (doomed) {
          r[SHILL] = 0.006 + 0.015 * progress;
          r[EARLY] = 0.0004;
        } else {
          // Wrong calls: early authors are often right, not always.
          r[EARLY] = 0.003 * progress;
          r[SPECIALIST] = 0.002 * progress;
          r[SHILL] = 0.0004;
        }
        r[SPECIALIST_NOISE] = 0.0004;
        break;
      case 'breakout': {
        const crowd = Math.min(1, sinceStart / (90 * MIN_MS));
        r[EARLY] = 0.004 * (1 - crowd);
        r[SPECIALIST] = 0.002 * (1 - crowd);
        r[FOLLOWER] = (0.005 + 0.06 * crowd) * loudness;
        r[BOT] = 0.03 * loudness;
        r[SHILL] = doomed ? 0.01 : 0.001;
        break;
      }
      case 'distribution':
        r[FOLLOWER] = 0.05 * loudness;
        r[BOT] = 0.02 * loudness;
        r[SHILL] = doomed ? 0.01 : 0.001;
        r[EARLY] = 0.001;
        break;
      case 'cooling':
        r[FOLLOWER] = (0.002 + 0.01 * (1 - progress)) * loudness;
        r[BOT] = 0.006 * loudness;
        r[SHILL] = doomed ? 0.004 + 0.008 * progress : 0.0005;
        break;
      case 'dead':
        r[BOT] = 0.001;
        r[FOLLOWER] = 0.0005;
        r[SHILL] = 0.0003;
        break;
    }
    if (d.surge > 0) {
      r[FOLLOWER] += 0.5 * d.surge;
      r[BOT] += 0.4 * d.surge;
      r[SHILL] += 0.1 * d.surge;
    }
    let total = 0;
    for (let i = 0; i < STREAMS; i++) total += r[i];
    return total;
  }

  private post(author: SimAuthor, token: SimToken, d: TokenDyn, ts: number, tone: Tone, out: SimRecord[]): void {
    const rng = this.rng;
    const refs = [tokenRef(rng, token)];
    if (rng.chance(0.08)) {
      const other = this.world.tokens[rng.pick(this.tokensByNarrative[token.narrative])];
      if (other !== token && this.tokens[other.index].live) refs.push(tokenRef(rng, other));
    }
    const kind = postKind(rng, author.type);
    const narrative = NARRATIVE_SLUGS[token.narrative];
    const text = rng.chance(kind === 'repost' ? 0.3 : 0.7) ? thesisText(rng, tone, refs, narrative) : null;
    const loud = d.regime === 'breakout' || d.regime === 'distribution' ? 2 : 1;
    const hints = rng.chance(0.3) ? [narrative] : [];
    out.push(this.makePost(author, ts, kind, refs, text, hints, loud));
  }

  private chatter(t: number, out: SimRecord[]): void {
    const rng = this.rng;
    const author = this.world.authors[pickAuthor(rng, this.allAuthors)];
    // Chatter names the currently loudest narratives more often, as timelines do.
    const n = rng.weighted(this.attention, this.attention.reduce((s, a) => s + a, 0));
    const slug = NARRATIVE_SLUGS[n];
    const hints = rng.chance(0.2) ? [slug] : [];
    out.push(this.makePost(author, t + rng.int(STEP_MS), postKind(rng, author.type), [], chatterText(rng, slug), hints, 1));
  }

  private makePost(
    author: SimAuthor,
    ts: number,
    kind: Post['kind'],
    tokenRefs: string[],
    text: string | null,
    narrativeHints: string[],
    loud: number,
  ): SimRecord {
    const rng = this.rng;
    const reach = (author.followers ?? 500) * 0.003 * loud * (author.type === 'bot' ? 0.2 : 1);
    const likes = Math.floor(reach * rng.logNormal(1, 0.9));
    const value: Post = {
      postId: `po_${this.world.tag}${(this.seq++).toString(36)}`,
      authorId: author.authorId,
      authorHandle: author.handle,
      authorFollowers: author.followers,
      ts,
      kind,
      tokenRefs,
      likes,
      replies: Math.floor(likes * rng.range(0.05, 0.3)),
      reposts: Math.floor(likes * rng.range(0.02, 0.25)),
      views: rng.chance(0.08) ? null : Math.floor((likes + 1) * rng.range(20, 120)),
      text,
      narrativeHints,
    };
    return { topic: TOPICS.posts.name, key: value.postId, value, timestamp: ts };
  }
}

function regimeMinutes(rng: Rng, regime: Regime, attention: number): number {
  switch (regime) {
    case 'quiet':
      // Hot narratives wake their quiet tokens sooner.
      return Math.max(120, rng.exponential((48 * 60) / attention));
    case 'accumulation':
      return rng.range(6 * 60, 36 * 60);
    case 'breakout':
      return rng.range(2 * 60, 10 * 60);
    case 'distribution':
      return rng.range(6 * 60, 24 * 60);
    case 'cooling':
      return rng.range(12 * 60, 48 * 60);
    case 'dead':
      return Infinity;
  }
}

function toneOf(stream: number, regime: Regime): Tone {
  switch (stream) {
    case SHILL:
      return 'hype';
    case BOT:
      return 'noise';
    case FOLLOWER:
      return regime === 'cooling' || regime === 'dead' ? 'exit' : 'momentum';
    default:
      if (regime === 'quiet' || regime === 'accumulation') return 'early';
      return regime === 'breakout' ? 'momentum' : 'exit';
  }
}

/** One of the spec's reference forms, in a realistic mix. */
function tokenRef(rng: Rng, token: SimToken): string {
  const r = rng.float();
  if (r < 0.4) return `$${token.symbol}`;
  if (r < 0.5) return token.symbol;
  if (r < 0.57) return token.tokenId;
  if (r < 0.72) return `${token.chain}:${token.address}`;
  return token.address;
}

function postKind(rng: Rng, type: AuthorType): Post['kind'] {
  const r = rng.float();
  if (type === 'bot') return r < 0.4 ? 'repost' : r < 0.8 ? 'post' : 'reply';
  return r < 0.55 ? 'post' : r < 0.75 ? 'reply' : r < 0.87 ? 'repost' : 'quote';
}

function pool(authors: SimAuthor[]): AuthorPool {
  let total = 0;
  const cumulative = authors.map((a) => (total += a.activity));
  return { authors: authors.map((a) => a.index), cumulative, total };
}

/** Author of a pool with probability proportional to activity (binary search on the running sum). */
function pickAuthor(rng: Rng, p: AuthorPool): number {
  const target = rng.float() * p.total;
  let lo = 0;
  let hi = p.cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (p.cumulative[mid] > target) hi = mid;
    else lo = mid + 1;
  }
  return p.authors[lo];
}

function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}

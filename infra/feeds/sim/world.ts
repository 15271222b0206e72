import type { Chain } from '../../../schemas/records.ts';
import { Rng } from './prng.ts';

/**
 * The static part of a simulated world: narratives, tokens and authors. It is a pure
 * function of the parameters, so a saved simulation only stores the parameters and
 * rebuilds the world on resume.
 */

export const AUTHOR_TYPES = ['early_right', 'follower', 'shill', 'specialist', 'bot'] as const;
export type AuthorType = (typeof AUTHOR_TYPES)[number];

export interface WorldParams {
  seed: number;
  tokens: number;
  authors: number;
  /** Epoch ms at which the simulation starts; tokens launched later appear during the run. */
  startMs: number;
}

export interface Narrative {
  slug: string;
  /** Attention rotates as a sine wave of absolute time: period and phase are per narrative. */
  periodMs: number;
  phase: number;
  amplitude: number;
}

export interface SimToken {
  index: number;
  tokenId: string;
  symbol: string;
  name: string;
  chain: Chain;
  address: string;
  logoUrl: string | null;
  sourceUrl: string | null;
  narrative: number;
  launchMs: number;
  supply: number;
  /** How much social attention the token draws relative to others of its regime. */
  hype: number;
  avgTradeUsd: number;
}

export interface SimAuthor {
  index: number;
  authorId: string;
  handle: string;
  type: AuthorType;
  /** Narrative index of a specialist's specialty, else -1. */
  specialty: number;
  followers: number | null;
  /** Relative posting rate within the author's type. */
  activity: number;
}

export interface World {
  params: WorldParams;
  /** Distinguishes ids of different seeds (post ids are `po_<tag><sequence>`). */
  tag: string;
  narratives: Narrative[];
  tokens: SimToken[];
  authors: SimAuthor[];
}

export const NARRATIVE_SLUGS = [
  'ai-agents',
  'memes',
  'defi',
  'rwa',
  'gaming',
  'depin',
  'l2-infra',
  'socialfi',
  'privacy',
  'restaking',
] as const;

const NAME_WORDS: Record<(typeof NARRATIVE_SLUGS)[number], string[]> = {
  'ai-agents': ['Neural', 'Agent', 'Cortex', 'Synth', 'Mind', 'Autonomous', 'Sentient'],
  memes: ['Doge', 'Frog', 'Cat', 'Wojak', 'Bonk', 'Moon', 'Chad', 'Hamster'],
  defi: ['Swap', 'Yield', 'Lend', 'Vault', 'Curve', 'Perp'],
  rwa: ['Treasury', 'Estate', 'Bond', 'Gold', 'Credit'],
  gaming: ['Quest', 'Arena', 'Pixel', 'Guild', 'Loot'],
  depin: ['Node', 'Mesh', 'Grid', 'Hotspot', 'Sensor'],
  'l2-infra': ['Rollup', 'Bridge', 'Layer', 'Sequencer', 'Blob'],
  socialfi: ['Friend', 'Circle', 'Club', 'Fan'],
  privacy: ['Shadow', 'Veil', 'Zero', 'Cloak'],
  restaking: ['Restake', 'Stake', 'Shield', 'Anchor'],
};
const NAME_SUFFIXES = ['Protocol', 'Network', 'Finance', 'AI', 'Inu', 'Coin', 'Labs', 'DAO', 'Token', ''];

const CHAIN_WEIGHTS: [Chain, number][] = [
  ['solana', 35],
  ['base', 20],
  ['bnb', 15],
  ['eth', 14],
  ['robinhood', 8],
  ['arc', 8],
];

const AUTHOR_TYPE_WEIGHTS: [AuthorType, number][] = [
  ['early_right', 6],
  ['specialist', 6],
  ['follower', 40],
  ['shill', 10],
  ['bot', 38],
];

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const HEX = '0123456789abcdef';
const ALNUM = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const SYLLABLES = ['MO', 'PE', 'KA', 'ZI', 'BO', 'NU', 'RA', 'TO', 'XA', 'LU', 'GI', 'FE', 'WO', 'DA', 'SU', 'VI', 'YE', 'QU'];
const HANDLE_WORDS = [
  'crypto', 'degen', 'alpha', 'chart', 'moon', 'whale', 'based', 'onchain', 'sol', 'eth',
  'anon', 'trader', 'hunter', 'gem', 'sniper', 'macro', 'quant', 'ape', 'wagmi', 'fren',
];

const DAY_MS = 86_400_000;

export function buildWorld(params: WorldParams): World {
  const rng = Rng.seeded(params.seed, 'world');
  const tag = randomString(rng, ALNUM.slice(0, 36), 4);
  const narratives: Narrative[] = NARRATIVE_SLUGS.map((slug) => ({
    slug,
    periodMs: Math.round(rng.range(2, 6) * DAY_MS),
    phase: rng.range(0, 2 * Math.PI),
    amplitude: rng.range(0.4, 0.9),
  }));
  return {
    params,
    tag,
    narratives,
    tokens: buildTokens(rng, params),
    authors: buildAuthors(rng, params),
  };
}

/** Relative attention of a narrative at a moment (about 0.4 to 2.5, mean near 1). */
export function narrativeAttention(n: Narrative, atMs: number): number {
  return Math.exp(n.amplitude * Math.sin((2 * Math.PI * atMs) / n.periodMs + n.phase));
}

function buildTokens(rng: Rng, params: WorldParams): SimToken[] {
  const tokens: SimToken[] = [];
  const ids = new Set<string>();
  const chainTotal = CHAIN_WEIGHTS.reduce((s, [, w]) => s + w, 0);
  const chainWeights = CHAIN_WEIGHTS.map(([, w]) => w);
  for (let index = 0; index < params.tokens; index++) {
    let tokenId: string;
    do tokenId = 'tk_' + randomString(rng, ALNUM, 12);
    while (ids.has(tokenId));
    ids.add(tokenId);
    const chain = CHAIN_WEIGHTS[rng.weighted(chainWeights, chainTotal)][0];
    const narrative = rng.int(NARRATIVE_SLUGS.length);
    const words = NAME_WORDS[NARRATIVE_SLUGS[narrative]];
    const name = `${rng.pick(words)} ${rng.pick(NAME_SUFFIXES)}`.trim();
    // Copycat tickers: about one token in eight reuses an existing symbol.
    const symbol =
      tokens.length > 0 && rng.chance(0.12) ? rng.pick(tokens).symbol : makeSymbol(rng);
    const address = makeAddress(rng, chain);
    // A fifth of the tokens launch during the first half of a week-long run.
    const launchMs = rng.chance(0.8) ? params.startMs - 1 : params.startMs + Math.floor(rng.range(0, 3.5 * DAY_MS));
    tokens.push({
      index,
      tokenId,
      symbol,
      name,
      chain,
      address,
      logoUrl: rng.chance(0.75) ? `https://cdn.example.com/logos/${tokenId}.png` : null,
      sourceUrl: rng.chance(0.5) ? `https://explorer.example.com/${chain}/token/${address}` : null,
      narrative,
      launchMs,
      supply: Math.round(10 ** rng.range(8, 12)),
      hype: rng.logNormal(1, 0.5),
      avgTradeUsd: rng.range(150, 1500),
    });
  }
  return tokens;
}

function buildAuthors(rng: Rng, params: WorldParams): SimAuthor[] {
  const authors: SimAuthor[] = [];
  const handles = new Set<string>();
  const typeTotal = AUTHOR_TYPE_WEIGHTS.reduce((s, [, w]) => s + w, 0);
  const typeWeights = AUTHOR_TYPE_WEIGHTS.map(([, w]) => w);
  for (let index = 0; index < params.authors; index++) {
    let handle: string;
    do handle = `${rng.pick(HANDLE_WORDS)}${rng.chance(0.5) ? '_' : ''}${rng.pick(HANDLE_WORDS)}${rng.int(1000)}`;
    while (handles.has(handle));
    handles.add(handle);
    const type = AUTHOR_TYPE_WEIGHTS[rng.weighted(typeWeights, typeTotal)][0];
    // Follower counts are drawn independently of the type: audience size carries no skill.
    const followers = rng.chance(0.02) ? null : Math.min(5_000_000, Math.round(rng.logNormal(900, 1.7)));
    authors.push({
      index,
      authorId: `au_${randomString(rng, ALNUM, 10)}`,
      handle,
      type,
      specialty: type === 'specialist' ? rng.int(NARRATIVE_SLUGS.length) : -1,
      followers,
      activity: rng.logNormal(1, 0.6),
    });
  }
  return authors;
}

function makeSymbol(rng: Rng): string {
  const parts = 1 + rng.int(3);
  let s = '';
  for (let i = 0; i < parts; i++) s += rng.pick(SYLLABLES);
  if (rng.chance(0.15)) s += String(rng.int(100));
  if (rng.chance(0.25)) s = s.slice(0, Math.max(2, s.length - 1));
  return s;
}

/** EVM chains (eth, base, bnb, and the EVM L1/L2s arc and robinhood) use 0x + 40 hex; Solana base58. */
function makeAddress(rng: Rng, chain: Chain): string {
  if (chain === 'solana') {
    const body = randomString(rng, BASE58, 40 + rng.int(5));
    // Launchpad mints commonly end in "pump".
    return rng.chance(0.4) ? body.slice(0, -4) + 'pump' : body;
  }
  return '0x' + randomString(rng, HEX, 40);
}

function randomString(rng: Rng, alphabet: string, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += alphabet[rng.int(alphabet.length)];
  return s;
}

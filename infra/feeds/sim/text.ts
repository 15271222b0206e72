import type { Rng } from './prng.ts';

/** The tone of a post, chosen from the author's hidden type and the token's regime. */
export type Tone = 'early' | 'momentum' | 'exit' | 'hype' | 'noise';

type Template = (ref: string, narrative: string) => string;

const TEMPLATES: Record<Tone, Template[]> = {
  early: [
    (r, n) => `${r} quietly accumulating. ${n} is next`,
    (r) => `been watching ${r} for a while, holders growing, chart coiling`,
    (r, n) => `early on ${r}: small cap, real product, ${n} rotation not priced in`,
    (r) => `${r} looks like a setup. not financial advice`,
  ],
  momentum: [
    (r) => `${r} is breaking out, volume confirms`,
    (r) => `${r} sending it, who else is in`,
    (r) => `aped ${r} after the move, momentum is strong`,
    (r, n) => `${r} chart vertical. ${n} season`,
  ],
  exit: [
    (r) => `took profits on ${r}`,
    (r) => `${r} looks toppy here, careful`,
    (r) => `${r} bleeding, rotating out`,
  ],
  hype: [
    (r) => `${r} 100x gem, dev is based, do not fade`,
    (r) => `last chance to get ${r} under 1M mcap`,
    (r) => `${r} is the next big thing, load up`,
  ],
  noise: [(r) => r, (r) => `${r} gm`, (r) => `trending: ${r}`, (r) => `new listing alert ${r}`],
};

const CHATTER: ((narrative: string) => string)[] = [
  () => 'gm',
  () => 'market feels slow today',
  () => 'what are you all watching this week?',
  (n) => `${n} narrative heating up`,
  () => 'stay safe out there, lots of rugs lately',
];

export function thesisText(rng: Rng, tone: Tone, refs: string[], narrative: string): string {
  const text = rng.pick(TEMPLATES[tone])(refs[0], narrative);
  return refs.length > 1 ? `${text} (also ${refs.slice(1).join(' ')})` : text;
}

export function chatterText(rng: Rng, narrative: string): string {
  return rng.pick(CHATTER)(narrative);
}

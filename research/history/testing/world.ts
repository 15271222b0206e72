import { seededRandom } from '../../../infra/feeds/sim/prng.ts';
import type { TokenRow } from '../../../presenters/tokens-table.ts';
import { HOUR, MIN, T0, tokenRow, type GivenSnapshot } from './given.ts';

/**
 * A small seeded world for tests that compare stores and refresh cadences: a few tokens over
 * two days of 5-minute snapshots with random-walk prices and noisy rule fields, one token
 * rugged (liquidity gone mid-way), one delisted (snapshots stop, metadata says dead), one on
 * another chain. Deterministic: the same seed gives the same rows.
 */

export const WORLD_END = T0 + 48 * HOUR;
export const RUG_AT = T0 + 30 * HOUR;
export const DELISTED_AT = T0 + 20 * HOUR;

export function smallWorld(seed = 7): { snapshots: GivenSnapshot[]; tokens: TokenRow[] } {
  const random = seededRandom(seed);
  const snapshots: GivenSnapshot[] = [];
  const ids = ['tk_a', 'tk_b', 'tk_c', 'tk_rug', 'tk_gone', 'tk_base'];
  for (const token of ids) {
    let price = 1 + random();
    let authors = 2;
    for (let ts = T0; ts < WORLD_END; ts += 5 * MIN) {
      if (token === 'tk_gone' && ts >= DELISTED_AT) break;
      price *= Math.exp((random() - 0.48) * 0.04);
      authors = Math.max(0, authors + Math.round((random() - 0.5) * 6));
      const rugged = token === 'tk_rug' && ts >= RUG_AT;
      snapshots.push({
        token,
        ts,
        chain: token === 'tk_base' ? 'base' : 'solana',
        price: rugged ? price * 0.02 : price,
        liquidity: rugged ? 1_000 : 50_000 + Math.round(random() * 100_000),
        fields: {
          momentum: Math.round(random() * 100),
          unique_authors_1h: authors,
          mentions_15m: Math.round(random() * 8),
          mention_velocity_15m: random() * 5,
          mention_velocity_1h: random() * 5,
          mentions_1h: Math.round(random() * 12),
          new_author_share_1h: random(),
          price_change_1h: (random() - 0.5) * 0.1,
        },
      });
    }
  }
  return { snapshots, tokens: [tokenRow('tk_gone', 'dead', DELISTED_AT + 10 * MIN)] };
}

import { describe, expect, it } from 'vitest';
import { evmAddress, HOUR, MIN, T0, tokenMeta } from './fixtures.ts';
import {
  activity24h,
  applyTokenMeta,
  createTokensState,
  noteMention,
  resolveTokenRef,
  tokenLookup,
  type TokensState,
} from './registry.ts';

const SOL = 'MBTiK5cmvZU7dbtggpwT1b44Tw62dguDsrrjCApump';

function resolved(state: TokensState, ref: string, t = T0): string {
  const r = resolveTokenRef(state, ref, t);
  if (!r.ok) throw new Error(`${ref} did not resolve: ${r.reason}`);
  return r.tokenId;
}

function mentionTimes(state: TokensState, tokenId: string, t: number, n: number): void {
  for (let i = 0; i < n; i++) noteMention(state, tokenId, t);
}

describe('token registry', () => {
  it('resolves $SYMBOL and SYMBOL case-insensitively, and tk_<id> exactly', () => {
    const s = createTokensState();
    applyTokenMeta(s, tokenMeta('tk_1', 'PePe', T0));
    for (const ref of ['$PEPE', '$pepe', 'pepe', 'PEPE']) expect(resolveTokenRef(s, ref, T0)).toEqual({ ok: true, tokenId: 'tk_1', kind: 'symbol' });
    expect(resolveTokenRef(s, 'tk_1', T0)).toEqual({ ok: true, tokenId: 'tk_1', kind: 'id' });
    expect(resolveTokenRef(s, 'tk_2', T0)).toEqual({ ok: false, reason: 'unknown_id' });
    expect(resolveTokenRef(s, '$WIF', T0)).toEqual({ ok: false, reason: 'unknown_symbol' });
    expect(resolveTokenRef(s, '$$$', T0)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('resolves <chain>:<address> and bare addresses; EVM hex in any case, Solana base58 exactly', () => {
    const s = createTokensState();
    applyTokenMeta(s, tokenMeta('tk_1', 'AAA', T0, { chain: 'eth', address: evmAddress(0xabc) }));
    applyTokenMeta(s, tokenMeta('tk_2', 'BBB', T0, { chain: 'solana', address: SOL }));
    const upper = `0x${evmAddress(0xabc).slice(2).toUpperCase()}`;
    expect(resolveTokenRef(s, `eth:${upper}`, T0)).toEqual({ ok: true, tokenId: 'tk_1', kind: 'chain_address' });
    expect(resolveTokenRef(s, `ETH:${evmAddress(0xabc)}`, T0)).toEqual({ ok: true, tokenId: 'tk_1', kind: 'chain_address' });
    expect(resolveTokenRef(s, upper, T0)).toEqual({ ok: true, tokenId: 'tk_1', kind: 'address' });
    expect(resolveTokenRef(s, `base:${evmAddress(0xabc)}`, T0)).toEqual({ ok: false, reason: 'unknown_address' });
    expect(resolveTokenRef(s, `solana:${SOL}`, T0)).toEqual({ ok: true, tokenId: 'tk_2', kind: 'chain_address' });
    expect(resolveTokenRef(s, SOL, T0)).toEqual({ ok: true, tokenId: 'tk_2', kind: 'address' });
    // Lower-cased, it is still valid base58 but another address.
    expect(resolveTokenRef(s, SOL.toLowerCase(), T0)).toEqual({ ok: false, reason: 'unknown_address' });
    expect(resolveTokenRef(s, `solana:${SOL.toLowerCase()}`, T0)).toEqual({ ok: false, reason: 'unknown_address' });
  });

  it('tells apart one EVM address deployed on two chains by chain, and by activity when bare', () => {
    const s = createTokensState();
    const address = evmAddress(7);
    applyTokenMeta(s, tokenMeta('tk_1', 'AAA', T0, { chain: 'base', address }));
    applyTokenMeta(s, tokenMeta('tk_2', 'AAA', T0 + 1, { chain: 'bnb', address }));
    expect(resolved(s, `bnb:${address}`)).toBe('tk_2');
    expect(resolved(s, `base:${address}`)).toBe('tk_1');
    expect(resolved(s, address, T0 + 2)).toBe('tk_1');
    mentionTimes(s, 'tk_2', T0 + 2, 1);
    expect(resolved(s, address, T0 + 3)).toBe('tk_2');
  });

  it('resolves a shared symbol to the most active token of the trailing 24h and switches as activity changes', () => {
    const s = createTokensState();
    applyTokenMeta(s, tokenMeta('tk_b', 'COPY', T0));
    applyTokenMeta(s, tokenMeta('tk_a', 'COPY', T0 + MIN));
    // No activity: the earliest listed wins.
    expect(resolved(s, '$COPY', T0 + HOUR)).toBe('tk_b');
    mentionTimes(s, 'tk_a', T0 + HOUR, 3);
    mentionTimes(s, 'tk_b', T0 + 2 * HOUR, 2);
    expect(resolved(s, '$COPY', T0 + 2 * HOUR)).toBe('tk_a');
    mentionTimes(s, 'tk_b', T0 + 3 * HOUR, 2);
    expect(resolved(s, '$COPY', T0 + 3 * HOUR)).toBe('tk_b');
    // tk_a's 3 mentions leave the window 24h after their bucket; tk_b's 4 stay: still tk_b.
    expect(activity24h(s, 'tk_a', T0 + 25 * HOUR - 1)).toBe(3);
    expect(activity24h(s, 'tk_a', T0 + 25 * HOUR)).toBe(0);
    mentionTimes(s, 'tk_a', T0 + 26 * HOUR + 30 * MIN, 1);
    // tk_b's first 2 expired at 26h, its other 2 remain: 2 vs 1.
    expect(resolved(s, '$COPY', T0 + 26 * HOUR + 30 * MIN)).toBe('tk_b');
    mentionTimes(s, 'tk_a', T0 + 26 * HOUR + 40 * MIN, 1);
    // 2 vs 2: a tie goes to the earliest listed.
    expect(resolved(s, '$COPY', T0 + 26 * HOUR + 40 * MIN)).toBe('tk_b');
    // After 27h only tk_a has mentions left.
    expect(resolved(s, '$COPY', T0 + 27 * HOUR)).toBe('tk_a');
  });

  it('breaks ties between tokens listed at the same time by the smallest token id', () => {
    const s = createTokensState();
    applyTokenMeta(s, tokenMeta('tk_z', 'TIE', T0));
    applyTokenMeta(s, tokenMeta('tk_m', 'TIE', T0));
    expect(resolved(s, 'tie')).toBe('tk_m');
  });

  it('counts activity over 24h in 5-minute steps, ignoring mentions older than the window', () => {
    const s = createTokensState();
    noteMention(s, 'tk_1', T0 + 4 * MIN);
    expect(activity24h(s, 'tk_1', T0 + 24 * HOUR - 1)).toBe(1);
    expect(activity24h(s, 'tk_1', T0 + 24 * HOUR)).toBe(0);
    noteMention(s, 'tk_1', T0 + 2 * HOUR); // late but inside the window of now
    noteMention(s, 'tk_1', T0 - HOUR); // older than the window
    expect(activity24h(s, 'tk_1', T0 + 24 * HOUR)).toBe(1);
    expect(activity24h(s, 'tk_1', T0 + 100 * HOUR)).toBe(0);
  });

  it('re-indexes a token whose symbol changes and ignores metadata older than what it holds', () => {
    const s = createTokensState();
    applyTokenMeta(s, tokenMeta('tk_1', 'OLD', T0));
    applyTokenMeta(s, tokenMeta('tk_1', 'NEW', T0 + HOUR, { status: 'rugged' }));
    expect(resolveTokenRef(s, '$OLD', T0 + HOUR)).toEqual({ ok: false, reason: 'unknown_symbol' });
    expect(resolved(s, '$NEW', T0 + HOUR)).toBe('tk_1');
    applyTokenMeta(s, tokenMeta('tk_1', 'STALE', T0 - HOUR));
    const info = tokenLookup(s).get('tk_1');
    expect(info).toMatchObject({ symbol: 'NEW', status: 'rugged', listedAt: T0 - HOUR });
    expect([...tokenLookup(s).all()].map((t) => t.tokenId)).toEqual(['tk_1']);
    expect(resolveTokenRef(s, '$STALE', T0 + HOUR)).toEqual({ ok: false, reason: 'unknown_symbol' });
  });

  it('keeps its state structured-cloneable', () => {
    const s = createTokensState();
    applyTokenMeta(s, tokenMeta('tk_1', 'AAA', T0));
    noteMention(s, 'tk_1', T0);
    const copy = structuredClone(s);
    expect(resolved(copy, '$aaa')).toBe('tk_1');
    expect(activity24h(copy, 'tk_1', T0)).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { feedFromRows, latestEventOf, newestFirst, type SignalFeedRow } from '../../projections/read-models/signal-feed-rows.ts';
import { checkFeedQuery, type SignalFeedQuery } from '../../projections/read-models/signals.ts';
import { compareText } from '../../projections/read-models/text-order.ts';
import { signalRow } from '../../projections/signals.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { signal } from '../contract/read-models-quant.contract.ts';

const T0 = 1_750_000_000_000;
const MINUTE = 60_000;

/** The feed's rows, in its order, of `signals` as the projection stores them. */
const rowsOf = (signals: Signal[]): SignalFeedRow[] => signals.map(signalRow).sort(newestFirst);

function page(rows: SignalFeedRow[], query: Partial<SignalFeedQuery>, asOf: number | null = latestEventOf(rows)) {
  const request = checkFeedQuery({ status: 'all', limit: 100, ...query });
  const result = feedFromRows(rows, request, request.cursor?.asOf ?? asOf);
  return { ...result, ids: result.rows.map((s) => s.signalId) };
}

/** Pages through the feed from its first page, `limit` at a time. */
function allPages(rows: SignalFeedRow[], query: Partial<SignalFeedQuery>): string[][] {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const next = page(rows, { ...query, cursor });
    pages.push(next.ids);
    cursor = next.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return pages;
}

describe('the signal feed over rows in memory', () => {
  it('given signals fired at the same time, orders them by id descending and pages through the tie', () => {
    const rows = rowsOf([
      signal(1, { tokenId: 'tk_a', firedAt: T0 }),
      signal(2, { tokenId: 'tk_a', firedAt: T0 + MINUTE }),
      signal(3, { tokenId: 'tk_b', firedAt: T0 + MINUTE }),
      signal(4, { tokenId: 'tk_b', firedAt: T0 + MINUTE }),
    ]);
    expect(page(rows, {}).ids).toEqual(['sig_000004', 'sig_000003', 'sig_000002', 'sig_000001']);
    expect(allPages(rows, { limit: 2 })).toEqual([
      ['sig_000004', 'sig_000003'],
      ['sig_000002', 'sig_000001'],
    ]);
    expect(allPages(rows, { limit: 1 }).flat()).toEqual(['sig_000004', 'sig_000003', 'sig_000002', 'sig_000001']);
  });

  it('given a page that ends exactly at the last match, says no more follow', () => {
    const rows = rowsOf([signal(1, { tokenId: 'tk_a', firedAt: T0 }), signal(2, { tokenId: 'tk_a', firedAt: T0 + MINUTE })]);
    expect(page(rows, { limit: 2 })).toMatchObject({ ids: ['sig_000002', 'sig_000001'], hasMore: false, nextCursor: null });
    const first = page(rows, { limit: 1 });
    expect(first).toMatchObject({ ids: ['sig_000002'], hasMore: true });
    expect(page(rows, { limit: 1, cursor: first.nextCursor ?? '' })).toMatchObject({ ids: ['sig_000001'], hasMore: false, nextCursor: null });
  });

  it('given a cursor inside a tie, continues after its id, skipping the rows the filter leaves out', () => {
    const rows = rowsOf([
      signal(1, { tokenId: 'tk_a', firedAt: T0 }),
      signal(2, { tokenId: 'tk_a', firedAt: T0 + MINUTE }),
      signal(3, { tokenId: 'tk_b', firedAt: T0 + MINUTE }),
      signal(4, { tokenId: 'tk_a', firedAt: T0 + MINUTE }),
    ]);
    expect(allPages(rows, { limit: 1, tokenId: 'tk_a' })).toEqual([['sig_000004'], ['sig_000002'], ['sig_000001']]);
  });

  it('given a signal that ended, shows it active with its fire record before its end and ended from its end on', () => {
    const ended = signal(1, { tokenId: 'tk_a', firedAt: T0, ended: true });
    const end = ended.endedAt ?? 0;
    const rows = rowsOf([ended]);
    expect(latestEventOf(rows)).toBe(end);
    const before = page(rows, { status: 'active' }, end - 1);
    expect(before.rows).toEqual([{ ...ended, status: 'active', endedAt: null, endReason: null, version: 1, ts: T0 }]);
    expect(page(rows, { status: 'ended' }, end - 1).ids).toEqual([]);
    expect(page(rows, { status: 'ended' }, end).rows).toEqual([ended]);
    expect(page(rows, { status: 'active' }, end).ids).toEqual([]);
    expect(page(rows, { status: 'all' }, T0 - 1).ids).toEqual([]);
    expect(page(rows, { status: 'all' }, T0).ids).toEqual(['sig_000001']);
  });

  it('given a cursor, reads as of its time, not the newest event', () => {
    const rows = rowsOf([signal(1, { tokenId: 'tk_a', firedAt: T0 }), signal(2, { tokenId: 'tk_a', firedAt: T0 + MINUTE })]);
    const first = page(rows, { limit: 1, status: 'active' });
    const ended = rowsOf([signal(1, { tokenId: 'tk_a', firedAt: T0, ended: true }), signal(2, { tokenId: 'tk_a', firedAt: T0 + MINUTE })]);
    // Signal 1 ended since (at T0 + 1 min, the first page's time): as of that time it had.
    expect(page(ended, { limit: 1, status: 'active', cursor: first.nextCursor ?? '' })).toMatchObject({ ids: [], asOf: T0 + MINUTE });
    expect(page(ended, { limit: 1, status: 'active' }).ids).toEqual(['sig_000002']);
  });

  it('given unknown values at fire time, never passes a minimum on them', () => {
    const rows = rowsOf([
      signal(1, { tokenId: 'tk_a', firedAt: T0, scores: { momentum: null }, marketCap: null, liquidity: null }),
      signal(2, { tokenId: 'tk_a', firedAt: T0 + MINUTE, scores: { momentum: 0 }, marketCap: 0, liquidity: 0 }),
    ]);
    expect(page(rows, { minScore: { score: 'momentum', value: 0 } }).ids).toEqual(['sig_000002']);
    expect(page(rows, { marketCap: 0 }).ids).toEqual(['sig_000002']);
    expect(page(rows, { liquidity: 0 }).ids).toEqual(['sig_000002']);
    expect(page(rows, { createdAfter: T0 }).ids).toEqual(['sig_000002']);
  });

  it('given chains, keeps the signals on the tokens it is told are on them', () => {
    const rows = rowsOf([signal(1, { tokenId: 'tk_a', firedAt: T0 }), signal(2, { tokenId: 'tk_b', firedAt: T0 + MINUTE })]);
    const request = checkFeedQuery({ status: 'all', limit: 100, chains: ['base'] });
    expect(feedFromRows(rows, request, T0 + MINUTE, new Set(['tk_a'])).rows.map((s) => s.signalId)).toEqual(['sig_000001']);
  });

  it('given no rows, answers as of nothing', () => {
    expect(latestEventOf([])).toBeNull();
    expect(page([], {})).toMatchObject({ ids: [], hasMore: false, nextCursor: null, asOf: null });
  });
});

describe('compareText', () => {
  it('orders strings as their UTF-8 bytes, which JavaScript < does not above U+FFFF', () => {
    const strings = ['sig_a', 'sig_b', 'sig_', 'sig_\u{1F600}', 'sig_\uFF5E', 'sig_\u00e9', 'SIG_a', ''];
    const byBytes = [...strings].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect([...strings].sort(compareText)).toEqual(byBytes);
    expect('sig_\u{1F600}' < 'sig_\uFF5E').toBe(true);
    expect(compareText('sig_\u{1F600}', 'sig_\uFF5E')).toBeGreaterThan(0);
  });
});

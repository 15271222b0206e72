import './tokens.css';
import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { unwrap } from '../../client/index.ts';
import { apiFor, hasScope, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { FIRST_TOKENS, FIRST_TOKENS_PATH, takeFirstRequest, type FirstResult } from '../first-requests.ts';
import { openStream, perFrame } from '../live.ts';
import type { Session } from '../session-type.ts';
import { MARK_MS, SCORES, shownRow, TokenRow, withoutOldMarks, withUpdates, type ScoreName, type ScoreUpdate, type ShownRow } from './token-rows.tsx';

/**
 * The scanner: every token with its scores, a preset or a sort, rows updated live from the
 * stream. More adds the next page of the list (a preset's scan has one page).
 */

const PRESETS = ['early-attention', 'broad-momentum', 'high-conviction', 'low-crowding', 'smart-cohort', 'cooling-fast', 'narrative-breakout'] as const;
export const CHAINS = ['solana', 'robinhood', 'base', 'bnb', 'eth', 'arc'] as const;
const SCAN_LIMIT = 200;
/** Rows the stream changes in one frame at most: a render stays short however many tokens moved at once. */
const ROWS_PER_FRAME = 25;

/** The rows of one view (preset, sort and chain) and the cursor of its next page. */
interface Listing {
  view: string;
  rows: ShownRow[];
  next: string | null;
}

export function TokensPage({ session }: { session: Session }) {
  const [listing, setListing] = useState<Listing | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [sort, setSort] = useState<ScoreName>(FIRST_TOKENS.sort);
  const [preset, setPreset] = useState<(typeof PRESETS)[number] | ''>('');
  const [chain, setChain] = useState<(typeof CHAINS)[number] | ''>('');
  const [live, setLive] = useState('connecting');
  const view = `${preset}/${sort}/${chain}`;

  const load = async (cursor?: string): Promise<{ rows: ShownRow[]; next: string | null }> => {
    const api = apiFor(session.key);
    if (preset !== '') {
      const scan = unwrap(await api.POST('/v1/quant/scan', { body: { preset, limit: SCAN_LIMIT, chains: chain === '' ? undefined : [chain] } }));
      return { rows: scan.data.map(shownRow), next: null };
    }
    // The first view's first page was asked for by the head script while the console loaded.
    const started = cursor === undefined && sort === FIRST_TOKENS.sort && chain === '' ? takeFirstRequest<Schemas['TokenList']>(session.key, FIRST_TOKENS_PATH) : null;
    const answer: Promise<FirstResult<Schemas['TokenList']>> =
      started ?? api.GET('/v1/quant/tokens', { params: { query: { sort, limit: FIRST_TOKENS.limit, chain: chain === '' ? undefined : chain, cursor } } });
    const list = unwrap(await answer);
    return { rows: list.data.map(shownRow), next: list.next_cursor };
  };

  // At once, not after the first paint: the first page may have been answered already (start.ts).
  useLayoutEffect(() => {
    // A slower answer for a view left behind must not replace the current one.
    let current = true;
    setError(null);
    load().then(
      (page) => current && setListing({ view, ...page }),
      (err: unknown) => current && setError(err),
    );
    return () => {
      current = false;
    };
  }, [session.key, view]);

  const more = (from: Listing) =>
    load(from.next!).then(
      // Added once, and only to the rows it continues.
      (page) => setListing((now) => (now?.view === from.view && now.next === from.next ? { ...now, rows: [...now.rows, ...page.rows], next: page.next } : now)),
      setError,
    );

  // Scores moved by the stream: the rows take them and their changed cells are marked for a while.
  // Opened once there are rows to update, so the first page does not wait behind it at the API.
  const loaded = listing !== null;
  useEffect(() => {
    if (!loaded) return;
    if (!hasScope(session.info, 'stream:read')) return setLive('no live updates: this key lacks the scope stream:read');
    const update = (change: (rows: ShownRow[]) => ShownRow[]) =>
      setListing((now) => {
        if (now === null) return null;
        const rows = change(now.rows);
        return rows === now.rows ? now : { ...now, rows };
      });
    const updates = perFrame<ScoreUpdate>(
      (u) => u.token_id,
      ROWS_PER_FRAME,
      (batch) => {
        const at = performance.now();
        update((rows) => withUpdates(rows, new Map(batch.map((u) => [u.token_id, u])), at));
        setTimeout(() => update((rows) => withoutOldMarks(rows, performance.now())), MARK_MS);
      },
    );
    const close = openStream(session.key, ['score.updated'], (event) => updates.push(event.data as ScoreUpdate), setLive);
    return () => {
      close();
      updates.stop();
    };
  }, [session.key, loaded]);

  return (
    <section>
      <h1>Tokens</h1>
      <div class="controls">
        <label>
          Preset{' '}
          <select value={preset} onChange={(e) => setPreset((e.target as HTMLSelectElement).value as typeof preset)}>
            <option value="">none (all tokens)</option>
            {PRESETS.map((p) => (
              <option value={p}>{p}</option>
            ))}
          </select>
        </label>
        <label>
          Sort{' '}
          <select value={sort} disabled={preset !== ''} onChange={(e) => setSort((e.target as HTMLSelectElement).value as ScoreName)}>
            {SCORES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Chain{' '}
          <select value={chain} onChange={(e) => setChain((e.target as HTMLSelectElement).value as typeof chain)}>
            <option value="">all</option>
            {CHAINS.map((c) => (
              <option value={c}>{c}</option>
            ))}
          </select>
        </label>
        <span class="live" data-state={live}>
          {live}
        </span>
      </div>
      {error !== null && <ErrorBox error={error} />}
      {error === null && listing?.view !== view && <p>Loading…</p>}
      {listing?.view === view && (
        <>
          <table class="tokens">
            <thead>
              <tr>
                <th>token</th>
                <th>chain</th>
                {SCORES.map((s) => (
                  <th>{s}</th>
                ))}
                <th>snapshot</th>
              </tr>
            </thead>
            <tbody>
              {listing.rows.map((shown) => (
                <TokenRow key={shown.row.token_id} shown={shown} />
              ))}
            </tbody>
          </table>
          {listing.next !== null && (
            <button class="more" onClick={() => more(listing)}>
              More
            </button>
          )}
        </>
      )}
    </section>
  );
}

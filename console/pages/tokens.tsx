import { useEffect, useState } from 'preact/hooks';
import { unwrap } from '../../client/index.ts';
import { apiFor, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { score } from '../format.tsx';
import { openStream } from '../live.ts';
import type { Session } from '../session-type.ts';

/** The scanner: every token with its scores, a preset or a sort, rows updated live from the stream. */

type Row = Schemas['TokenScore'];
type ScoreName = keyof Row['scores'];
const SCORES: ScoreName[] = ['momentum', 'conviction', 'crowding', 'early_quality', 'narrative_velocity', 'divergence', 'smart_cohort'];
const PRESETS = ['early-attention', 'broad-momentum', 'high-conviction', 'low-crowding', 'smart-cohort', 'cooling-fast', 'narrative-breakout'] as const;
export const CHAINS = ['solana', 'robinhood', 'base', 'bnb', 'eth', 'arc'] as const;

/** The data of a score.updated event (spec 6.1), as far as the table needs it. */
interface ScoreUpdate {
  token_id: string;
  ts: string;
  scores: Row['scores'];
}

const CHANGE_MARK_MS = 3000;

export function TokensPage({ session }: { session: Session }) {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [sort, setSort] = useState<ScoreName>('momentum');
  const [preset, setPreset] = useState<(typeof PRESETS)[number] | ''>('');
  const [chain, setChain] = useState<(typeof CHAINS)[number] | ''>('');
  const [changed, setChanged] = useState<ReadonlySet<string>>(new Set());
  const [live, setLive] = useState('connecting');

  useEffect(() => {
    const api = apiFor(session.key);
    const chains = chain === '' ? undefined : [chain];
    const load =
      preset === ''
        ? api.GET('/v1/quant/tokens', { params: { query: { sort, limit: 100, chain: chain === '' ? undefined : chain } } }).then((r) => unwrap(r).data)
        : api.POST('/v1/quant/scan', { body: { preset, limit: 200, chains } }).then((r) => unwrap(r).data);
    load.then(setRows, setError);
  }, [session.key, sort, preset, chain]);

  // Scores moved by the stream: the rows take them and their changed cells are marked. Events
  // are applied together once a frame, so a burst of them costs one render, not one each.
  useEffect(() => {
    let pending: ScoreUpdate[] = [];
    let frame = 0;
    const flush = () => {
      frame = 0;
      const updates = new Map(pending.map((u) => [u.token_id, u]));
      pending = [];
      setRows((current) => {
        if (current === null) return null;
        const moved: string[] = [];
        const next = current.map((row) => {
          const update = updates.get(row.token_id);
          if (update === undefined) return row;
          moved.push(...SCORES.filter((name) => update.scores[name] !== row.scores[name]).map((name) => `${row.token_id}:${name}`));
          return { ...row, ts: update.ts, scores: { ...row.scores, ...update.scores } };
        });
        if (moved.length > 0) {
          setChanged((marks) => new Set([...marks, ...moved]));
          // A mark shows what moved lately; it goes after a while, as the cell's colour fades.
          setTimeout(() => setChanged((marks) => new Set([...marks].filter((m) => !moved.includes(m)))), CHANGE_MARK_MS);
        }
        return next;
      });
    };
    const close = openStream(
      session.key,
      ['score.updated'],
      (event) => {
        pending.push(event.data as ScoreUpdate);
        frame ||= requestAnimationFrame(flush);
      },
      setLive,
    );
    return () => {
      close();
      cancelAnimationFrame(frame);
    };
  }, [session.key]);

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
      {rows !== null && (
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
            {rows.map((row) => (
              <tr data-token={row.token_id}>
                <td>
                  <a href={`#/token/${row.token_id}`}>{row.token?.symbol ?? row.token_id}</a>
                </td>
                <td>{row.token?.chain ?? ''}</td>
                {SCORES.map((s) => (
                  <td data-score={s} class={changed.has(`${row.token_id}:${s}`) ? 'num changed' : 'num'}>
                    {score(row.scores[s])}
                  </td>
                ))}
                <td>{row.ts.slice(0, 16).replace('T', ' ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

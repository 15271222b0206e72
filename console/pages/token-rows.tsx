import { Component } from 'preact';
import type { Schemas } from '../api.ts';
import { minute, score } from '../format.tsx';

/** The scanner's rows and how the stream's score updates change them. */

export type Row = Schemas['TokenScore'];
export type ScoreName = keyof Row['scores'];
export const SCORES: ScoreName[] = ['momentum', 'conviction', 'crowding', 'early_quality', 'narrative_velocity', 'divergence', 'smart_cohort'];

/** The data of a score.updated event (spec 6.1), as far as the table needs it. */
export interface ScoreUpdate {
  token_id: string;
  ts: string;
  scores: Row['scores'];
}

/** A row as shown: the token's scores, and those the stream moved lately, marked until MARK_MS after `movedAt`. */
export interface ShownRow {
  row: Row;
  moved: ReadonlySet<ScoreName>;
  movedAt: number;
}

export const MARK_MS = 3000;
const NONE_MOVED: ReadonlySet<ScoreName> = new Set();

export const shownRow = (row: Row): ShownRow => ({ row, moved: NONE_MOVED, movedAt: 0 });

/**
 * The rows with the updates applied at `now`. Only an updated row becomes a new object, so only
 * its component renders again; with nothing to change, the same array comes back.
 */
export function withUpdates(rows: ShownRow[], updates: ReadonlyMap<string, ScoreUpdate>, now: number): ShownRow[] {
  let changed = false;
  const next = rows.map((shown) => {
    const update = updates.get(shown.row.token_id);
    // A late event must not take a row back to an older snapshot.
    if (update === undefined || Date.parse(update.ts) <= Date.parse(shown.row.ts)) return shown;
    changed = true;
    const moved = SCORES.filter((name) => update.scores[name] !== shown.row.scores[name]);
    const row = { ...shown.row, ts: update.ts, scores: { ...shown.row.scores, ...update.scores } };
    return moved.length === 0 ? { ...shown, row } : { row, moved: new Set(moved), movedAt: now };
  });
  return changed ? next : rows;
}

/** The rows with the marks set MARK_MS or longer before `now` taken off; the same array when none is. */
export function withoutOldMarks(rows: ShownRow[], now: number): ShownRow[] {
  let changed = false;
  const next = rows.map((shown) => {
    if (shown.moved.size === 0 || now - shown.movedAt < MARK_MS) return shown;
    changed = true;
    return { ...shown, moved: NONE_MOVED };
  });
  return changed ? next : rows;
}

/** One token's row. It renders again only when its row changes, not when another row does. */
export class TokenRow extends Component<{ shown: ShownRow }> {
  override shouldComponentUpdate(next: { shown: ShownRow }): boolean {
    return next.shown !== this.props.shown;
  }

  override render() {
    const { row, moved } = this.props.shown;
    return (
      <tr data-token={row.token_id}>
        <td>
          <a href={`#/token/${row.token_id}`}>{row.token?.symbol ?? row.token_id}</a>
        </td>
        <td>{row.token?.chain ?? ''}</td>
        {SCORES.map((s) => (
          <td data-score={s} class={moved.has(s) ? 'num changed' : 'num'}>
            {score(row.scores[s])}
          </td>
        ))}
        <td>{minute(row.ts)}</td>
      </tr>
    );
  }
}

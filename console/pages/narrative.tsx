import { unwrap } from '../../client/index.ts';
import { apiFor, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { AuthorLink, minute, orMissing, percent, points, TokenLink } from '../format.tsx';
import { NeedsScope } from '../needs-scope.tsx';
import type { Session } from '../session-type.ts';
import { useAnswer } from '../use-answer.ts';

/** One narrative as of its latest closed hour: its attention share, its authors, its top tokens and contributors. */

/** Why a narrative's figures can be null, as the API documents it. */
export const NARRATIVE_WHY_NULL = {
  share: 'no mentions in the hour',
  share24h: 'no mentions in the 24 h',
  change24h: 'needs 48 h of history',
  authorGrowth: 'first hour',
} as const;

/** Author growth, a ratio less one, as a signed percentage. */
export const growth = (v: number) => `${v >= 0 ? '+' : ''}${percent(v)}`;

function Figures({ n }: { n: Schemas['NarrativeDetail'] }) {
  return (
    <dl class="narrative">
      <dt>attention share</dt>
      <dd data-field="attention-share">{orMissing(n.attention_share, percent, NARRATIVE_WHY_NULL.share)}</dd>
      <dt>attention share, 24 h</dt>
      <dd>{orMissing(n.attention_share_24h, percent, NARRATIVE_WHY_NULL.share24h)}</dd>
      <dt>24 h growth of the share</dt>
      <dd>{orMissing(n.attention_share_change_24h, points, NARRATIVE_WHY_NULL.change24h)}</dd>
      <dt>theses</dt>
      <dd>{n.theses} posts</dd>
      <dt>mentions</dt>
      <dd>{n.mentions}</dd>
      <dt>authors</dt>
      <dd>
        {n.unique_authors}, {n.new_authors} of them new to it
      </dd>
      <dt>author growth</dt>
      <dd>{orMissing(n.author_growth, growth, NARRATIVE_WHY_NULL.authorGrowth)}</dd>
    </dl>
  );
}

function Narrative({ session, slug }: { session: Session; slug: string }) {
  const { data: n, error } = useAnswer(
    () => apiFor(session.key).GET('/v1/quant/narratives/{slug}', { params: { path: { slug } } }).then(unwrap),
    [session.key, slug],
  );
  if (error !== null) return <ErrorBox error={error} />;
  if (n === null) return <p>Loading…</p>;
  return (
    <>
      <h1>
        {n.slug} <small>the hour from {minute(n.bucket_start)} · as of {minute(n.as_of)}</small>
      </h1>
      <Figures n={n} />
      <h2>Top tokens of the hour</h2>
      {n.top_tokens.length === 0 ? (
        <p>None in the hour.</p>
      ) : (
        <table class="top-tokens">
          <thead>
            <tr>
              <th>token</th>
              <th>mentions</th>
            </tr>
          </thead>
          <tbody>
            {n.top_tokens.map((t) => (
              <tr data-token={t.token_id}>
                <td>
                  <TokenLink token={{ id: t.token_id, symbol: t.symbol ?? t.token_id }} />
                </td>
                <td class="num">{t.mentions}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Top contributors of the hour</h2>
      {n.top_contributors.length === 0 ? (
        <p>None in the hour.</p>
      ) : (
        <table class="top-contributors">
          <thead>
            <tr>
              <th>author</th>
              <th>posts</th>
            </tr>
          </thead>
          <tbody>
            {n.top_contributors.map((c) => (
              <tr data-author={c.author_id}>
                <td>
                  <AuthorLink handle={c.handle} />
                </td>
                <td class="num">{c.posts}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

export function NarrativePage({ session, slug }: { session: Session; slug: string }) {
  return (
    <section>
      <NeedsScope session={session} scope="quant:read" what="narratives">
        <Narrative session={session} slug={slug} />
      </NeedsScope>
    </section>
  );
}

import { unwrap } from '../../client/index.ts';
import type { EventStudyHorizon } from '../../research/event-studies/compute.ts';
import { apiFor } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { interval, minute, orMissing, percent, points } from '../format.tsx';
import { NeedsScope } from '../needs-scope.tsx';
import { signedPercent } from '../research-values.ts';
import type { Session } from '../session-type.ts';
import { useAnswer } from '../use-answer.ts';
import { BAND, quantile, StudyPathChart } from './study-path-chart.tsx';

/** The event studies: their list on the Research page, and one study's page (`#/study/<slug>`). */

export function EventStudyList({ session }: { session: Session }) {
  const { data, error } = useAnswer(() => apiFor(session.key).GET('/v1/quant/event-studies').then(unwrap), [session.key]);
  if (error !== null) return <ErrorBox error={error} />;
  if (data === null) return <p>Loading…</p>;
  return (
    <table class="event-studies">
      <thead>
        <tr>
          <th>study</th>
          <th>signal</th>
          <th>events</th>
          <th>as of</th>
        </tr>
      </thead>
      <tbody>
        {data.data.map((s) => (
          <tr data-study={s.slug}>
            <td>
              <a href={`#/study/${s.slug}`}>{s.title}</a>
            </td>
            <td>{s.signal_type}</td>
            <td class="num">{s.events}</td>
            <td>{orMissing(s.as_of, minute, 'not refreshed yet')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function EventStudyPage({ session, slug }: { session: Session; slug: string }) {
  return (
    <NeedsScope session={session} scope="research:read" what="event studies">
      <Study session={session} slug={slug} />
    </NeedsScope>
  );
}

function Study({ session, slug }: { session: Session; slug: string }) {
  const { data: study, error } = useAnswer(
    () => apiFor(session.key).GET('/v1/quant/event-studies/{slug}', { params: { path: { slug } } }).then(unwrap),
    [session.key, slug],
  );
  if (error !== null) return <ErrorBox error={error} />;
  if (study === null) return <p>Loading…</p>;
  // The API documents a horizon only as open fields; the engine's type names them.
  const horizons = study.horizons as unknown as EventStudyHorizon[];
  return (
    <section class="event-study" data-study={study.slug}>
      <p>
        <a href="#/research">← Research</a>
      </p>
      <h1>{study.title}</h1>
      <p>{study.description}</p>
      <p>
        {study.events} firings of {study.signal_type} ({study.rule_version}) as of {orMissing(study.as_of, minute, 'no refresh yet')}, refreshed hourly over
        point-in-time history.
      </p>
      {horizons.length === 0 ? (
        <p>No distributions before the first refresh.</p>
      ) : (
        <>
          {horizons.some((h) => h.n > 0) && <StudyPathChart horizons={horizons} />}
          <HorizonTable horizons={horizons} />
          <p class="baseline-description">Baseline: {String(study.baseline_description)}</p>
        </>
      )}
      <p class="disclaimer">{study.disclaimer}</p>
    </section>
  );
}

/** The chart's numbers, one row per horizon (raw values in data attributes), with the rest of each horizon's distribution. */
function HorizonTable({ horizons }: { horizons: EventStudyHorizon[] }) {
  return (
    <table class="horizons">
      <thead>
        <tr>
          <th>after</th>
          <th>N</th>
          <th>pending</th>
          <th>mean return</th>
          <th>median return</th>
          <th>{BAND[0] * 100}th percentile</th>
          <th>{BAND[1] * 100}th percentile</th>
          <th>hit rate (95% interval)</th>
          <th>baseline mean</th>
          <th>abnormal mean</th>
          <th>excess hit rate</th>
        </tr>
      </thead>
      <tbody>
        {horizons.map((h) => {
          const [low, high] = BAND.map((q) => quantile(h, q));
          return (
            <tr data-horizon={h.horizon} data-n={h.n} data-mean={String(h.mean_return)} data-low={String(low)} data-high={String(high)} data-baseline={String(h.baseline.mean_return)}>
              <td>{h.horizon}</td>
              <td class="num">{h.n}</td>
              <td class="num">{h.pending}</td>
              <td class="num">{orMissing(h.mean_return, signedPercent)}</td>
              <td class="num">{orMissing(h.median_return, signedPercent)}</td>
              <td class="num">{orMissing(low, signedPercent)}</td>
              <td class="num">{orMissing(high, signedPercent)}</td>
              <td class="num">
                {orMissing(h.hit_rate, percent)}
                {h.hit_rate_ci95 !== null && ` (${interval(h.hit_rate_ci95)})`}
              </td>
              <td class="num">{orMissing(h.baseline.mean_return, signedPercent)}</td>
              <td class="num">{orMissing(h.abnormal_mean_return, signedPercent)}</td>
              <td class="num">{orMissing(h.excess_hit_rate, points)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

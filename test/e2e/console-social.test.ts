import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../../console/build.ts';
import { startApiWorld, type ApiWorld } from '../helpers/api-world.ts';
import { ConsoleBrowser } from '../helpers/console-browser.ts';

/**
 * The console's authors, cohorts and narratives in headless Chromium, each page compared with
 * what the API answers the same key. Every watched page is checked for console errors and
 * uncaught exceptions at the end.
 */

let world: ApiWorld;
let browser: ConsoleBrowser;

beforeAll(async () => {
  await buildConsole();
  world = await startApiWorld();
  browser = await ConsoleBrowser.open(world.base);
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

const api = async (path: string) => (await world.request('GET', path)).body;
/** What the console shows for a fraction and for a change of one. */
const percent = (v: number) => `${(v * 100).toFixed(1)}%`;
const points = (v: number) => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)} pp`;
/** The rows of a table by one data attribute, in order. */
const rowsOf = (page: Page, table: string, attribute: string) =>
  page.$$eval(`table.${table} tbody tr`, (rows, name) => rows.map((r) => r.getAttribute(name)), attribute);
const textOf = (page: Page, selector: string) => page.$eval(selector, (e) => e.textContent);

interface Member {
  author_id: string | null;
  handle: string;
}

/**
 * The authors the leaderboard ranks, from the API: the members of the key's cohorts, once each,
 * by research score (unknown last), equal scores in the cohorts' order.
 */
async function leaderboard(): Promise<{ id: string; metrics: any }[]> {
  const handles = new Map<string, string>();
  for (const cohort of (await api('/v1/quant/cohorts')).data) {
    for (const m of cohort.members as Member[]) handles.set(m.author_id ?? `@${m.handle}`, m.handle);
  }
  const entries = await Promise.all(
    [...handles].map(async ([id, handle]) => ({ id, metrics: id.startsWith('@') ? null : await api(`/v1/quant/users/${handle}`) })),
  );
  const rank = (e: { metrics: any }) => e.metrics?.research_score ?? -1;
  return entries.sort((a, b) => rank(b) - rank(a));
}

describe('the console: authors, cohorts and narratives', () => {
  it("ranks the cohorts' authors by research score with each hit rate and Wilson interval the API gives", async () => {
    const expected = await leaderboard();
    expect(expected.length).toBeGreaterThan(1);
    const page = await browser.signedIn(world.keys.team, '#/authors');
    await page.waitForSelector('table.authors tbody tr');
    expect(await rowsOf(page, 'authors', 'data-author')).toEqual(expected.map((e) => e.id));
    const shown = await page.$$eval('table.authors tbody tr', (rows) =>
      rows.map((r) => [r.querySelector('[data-field=hit-rate]')?.textContent, r.querySelector('[data-field=interval]')?.textContent]),
    );
    const rated = expected.filter((e) => e.metrics?.hit_rate != null);
    expect(rated.length).toBeGreaterThan(0);
    expect(shown.filter((_, i) => expected[i].metrics?.hit_rate != null)).toEqual(
      rated.map(({ metrics: { hit_rate: r } }) => [percent(r.value), `${percent(r.low)}–${percent(r.high)}`]),
    );

    // The first author's link opens their page, with the same interval and their calls.
    const [first] = expected;
    await page.click('table.authors tbody tr a');
    await page.waitForSelector('dl.author');
    expect(new URL(page.url()).hash).toBe(`#/author/${first.metrics.handle}`);
    const { hit_rate: r, calls } = first.metrics;
    expect(await textOf(page, 'dd[data-field=interval]')).toBe(`${percent(r.low)}–${percent(r.high)}`);
    expect(await textOf(page, 'dd[data-field=calls]')).toContain(`${calls.total} made, ${calls.unpriced} without a price, ${calls.resolved} resolved, ${calls.hits} hits`);
    await page.close();
  });

  it('lists the cohorts GET /v1/quant/cohorts lists for a kind, and opens one with its members and convergence events', async () => {
    const ids = (list: { data: { id: string }[] }) => list.data.map((c) => c.id);
    const page = await browser.signedIn(world.keys.team, '#/cohorts');
    await page.waitForSelector('table.cohorts[data-kind=all]');
    expect(await rowsOf(page, 'cohorts', 'data-cohort')).toEqual(ids(await api('/v1/quant/cohorts?kind=all')));
    await page.select('select[name=kind]', 'auto');
    await page.waitForSelector('table.cohorts[data-kind=auto]');
    expect(new URL(page.url()).hash).toBe('#/cohorts?kind=auto');
    expect(await rowsOf(page, 'cohorts', 'data-cohort')).toEqual(ids(await api('/v1/quant/cohorts?kind=auto')));

    // The cohort with the most convergence events, opened from its link.
    const cohorts = await Promise.all(ids(await api('/v1/quant/cohorts')).map((id) => api(`/v1/quant/cohorts/${id}`)));
    const cohort = cohorts.sort((a, b) => b.convergence_events.length - a.convergence_events.length)[0];
    expect(cohort.convergence_events.length).toBeGreaterThan(0);
    await page.click(`table.cohorts tr[data-cohort="${cohort.id}"] a`);
    await page.waitForSelector('table.members tbody tr');
    expect(await rowsOf(page, 'members', 'data-author')).toEqual(cohort.members.map((m: Member) => m.author_id ?? `@${m.handle}`));
    expect(await rowsOf(page, 'convergence', 'data-event')).toEqual(cohort.convergence_events.map((e: { id: string }) => e.id));
    const scores = await page.$$eval('table.convergence tbody tr', (rows) => rows.map((r) => r.lastElementChild!.textContent));
    expect(scores).toEqual(cohort.convergence_events.map((e: { score: number }) => e.score.toFixed(1)));
    await page.close();
  });

  it('shows the narrative map, the rotation for 24h and 7d, and a narrative, as the API gives them', async () => {
    const page = await browser.signedIn(world.keys.team, '#/narratives');
    await page.waitForSelector('table.narratives tbody tr');
    const map = (await api('/v1/quant/narratives')).data;
    expect(await rowsOf(page, 'narratives', 'data-narrative')).toEqual(map.map((n: { slug: string }) => n.slug));

    /** Each row's narrative and change, a null change (shown as a dash with its reason) as null. */
    const rotationShown = () =>
      page.$$eval('table.rotation tbody tr', (rows) =>
        rows.map((r) => {
          const change = r.querySelector('[data-field=change]')!.textContent!;
          return [r.getAttribute('data-narrative'), change.startsWith('–') ? null : change];
        }),
      );
    const rotationOf = async (window: string) =>
      (await api(`/v1/quant/narratives/rotation?window=${window}`)).narratives.map((n: { slug: string; change: number | null }) => [
        n.slug,
        n.change === null ? null : points(n.change),
      ]);
    await page.waitForSelector('table.rotation[data-window="24h"]');
    const day = await rotationOf('24h');
    expect(day.some(([, change]: [string, string | null]) => change !== null)).toBe(true);
    expect(await rotationShown()).toEqual(day);
    await page.select('select[name=window]', '7d');
    await page.waitForSelector('table.rotation[data-window="7d"]');
    expect(await rotationShown()).toEqual(await rotationOf('7d'));

    // A narrative with mentions in its hour, from its link: the attention share of that hour.
    const narrative = map.find((n: { attention_share: number | null }) => n.attention_share !== null);
    await page.click(`table.narratives tr[data-narrative="${narrative.slug}"] a`);
    await page.waitForSelector('dl.narrative');
    const detail = await api(`/v1/quant/narratives/${narrative.slug}`);
    expect(await textOf(page, 'dd[data-field=attention-share]')).toBe(percent(detail.attention_share));
    await page.close();
  });

  it("draws the heatmap's cells with the API's values, shaded by its per-row intensity, for the shape chosen", async () => {
    /** Each row's narrative and cells: raw value and intensity, as the cell's data gives them. */
    const cellsShown = (page: Page) =>
      page.$$eval('table.heatmap tbody tr', (rows) =>
        rows.map((r) => [
          r.getAttribute('data-narrative'),
          [...r.querySelectorAll('td.cell')].map((cell) => [cell.getAttribute('data-value'), Number(cell.getAttribute('data-intensity'))]),
        ]),
      );
    /** The largest gap between a cell's intensity and the opacity of its colour as drawn. */
    const shadingGap = (page: Page) =>
      page.$$eval('table.heatmap td.cell', (cells) =>
        Math.max(
          ...cells.map((cell) => {
            const [, , , alpha = '1'] = /rgba?\(([^)]*)\)/.exec(getComputedStyle(cell).backgroundColor)![1].split(',');
            return Math.abs(Number(alpha) - Number(cell.getAttribute('data-intensity')));
          }),
        ),
      );
    const heatmapOf = async (query: string) => {
      const map = await api(`/v1/quant/narratives/heatmap?${query}`);
      const cells = map.rows.map((row: { slug: string; values: (number | null)[]; intensity: number[] }) => [
        row.slug,
        row.values.map((v, i) => [v === null ? '' : String(v), row.intensity[i]]),
      ]);
      return { cells, count: map.rows.length * map.columns.length };
    };
    const page = await browser.signedIn(world.keys.team, '#/narratives');
    const shapes: { choose?: [control: string, value: string]; query: string }[] = [
      { query: 'metric=theses&bucket=1h&range=48h' },
      { choose: ['bucket', '6h'], query: 'metric=theses&bucket=6h&range=48h' },
      { choose: ['metric', 'author_growth'], query: 'metric=author_growth&bucket=6h&range=48h' },
    ];
    for (const { choose, query } of shapes) {
      if (choose !== undefined) await page.select(`select[name=${choose[0]}]`, choose[1]);
      await page.waitForSelector(`table.heatmap[data-query="${query}"]`);
      const expected = await heatmapOf(query);
      expect(expected.count, query).toBeGreaterThan(0);
      expect(await page.$$eval('table.heatmap td.cell', (cells) => cells.length), query).toBe(expected.count);
      expect(await cellsShown(page), query).toEqual(expected.cells);
      expect(await shadingGap(page), query).toBeLessThan(0.01);
    }
    expect(new URL(page.url()).hash).toBe('#/narratives?window=24h&metric=author_growth&bucket=6h&range=48h');
    await page.close();
  });

  it("shows the API's error for an unknown author, with the request id", async () => {
    // Not a watched page: Chromium logs the 404 answer as a console error.
    const page = await browser.signedIn(world.keys.team, '#/authors', await browser.unwatchedPage());
    await page.type('input[name=handle]', 'nobody_here_at_all');
    await page.click('form.open-author button[type=submit]');
    const alert = await page.waitForSelector('.error');
    const refused = (await world.request('GET', '/v1/quant/users/nobody_here_at_all')).body.error;
    const shown = (await alert!.evaluate((e) => e.textContent))!;
    expect(shown.replace(/req_[0-9a-f]+/, '<id>')).toBe(`${refused.code}: ${refused.message} (request <id>)`);
    await page.close();
  });

  it('tells a key without quant:read why it sees no authors, cohorts or narratives', async () => {
    const { key } = await world.createKey('team', ['keys:read', 'signals:read'], 'no quant');
    // Not a watched page: signing in opens the tokens page, whose request this key is refused.
    const page = await browser.signedIn(key, '#/authors', await browser.unwatchedPage());
    for (const [route, what] of [
      ['#/authors', 'authors'],
      ['#/cohorts', 'cohorts'],
      ['#/narratives', 'narratives'],
      ['#/cohort/cohort_top-research', 'cohorts'],
    ]) {
      await page.evaluate((hash) => (location.hash = hash), route);
      await page.waitForFunction((hash, w) => location.hash === hash && document.querySelector('.refused')?.textContent?.includes(w), {}, route, what);
      expect(await textOf(page, '.refused'), route).toBe(`This key lacks the scope quant:read: it cannot read ${what}.`);
    }
    await page.close();
  });

  it('logged no console error and no uncaught exception on any page', () => {
    expect(browser.problems).toEqual([]);
  });
});

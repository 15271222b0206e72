import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { researchRole } from '../../cli/roles/research.ts';
import type { RunningRole } from '../../cli/roles/role.ts';
import { buildConsole } from '../../console/build.ts';
import { waitFor } from '../../infra/wait.ts';
import { startApiWorld, type ApiWorld } from '../helpers/api-world.ts';
import { canvasesDrawn, ConsoleBrowser } from '../helpers/console-browser.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';
import { sink } from '../helpers/sink.ts';

/**
 * The console's Research page in headless Chromium: a backtest filled in and run from the
 * form, past runs and the event studies, each compared with what the API answers the same
 * key. The research role runs beside the API, as `tqa start` runs it, so runs end and the
 * event studies are refreshed.
 */

let world: ApiWorld;
let research: RunningRole;
let browser: ConsoleBrowser;
let downloads: string;

beforeAll(async () => {
  await buildConsole();
  world = await startApiWorld();
  const { config, log, codec, store } = world;
  research = await researchRole.start({
    config,
    logger: silentLogger,
    services: { log, codec, registry: undefined as never, close: async () => undefined },
    store: async () => store,
    stdout: sink().stream,
  });
  browser = await ConsoleBrowser.open(world.base);
  downloads = await mkdtemp(join(tmpdir(), 'tqa-console-downloads-'));
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await research?.stop();
  await world?.stop();
  await rm(downloads, { recursive: true, force: true });
});

const api = async (path: string) => (await world.request('GET', path)).body;
/** How the console shows a share, a return and an interval. */
const percent = (v: number) => `${(v * 100).toFixed(1)}%`;
const signedPercent = (v: number) => `${v > 0 ? '+' : ''}${(v * 100).toFixed(2)}%`;
const interval = (ci: { low: number; high: number }) => `${percent(ci.low)}–${percent(ci.high)}`;

/** The run cell of a row of the result's summary: the raw value it keeps and the text it shows. */
const figure = (page: Page, field: string) =>
  page.$eval(`table.summary tr[data-field=${field}] td.run`, (td) => ({ value: td.getAttribute('data-value'), text: td.textContent }));

/** Sets the rule row `index` of the backtest form. */
async function fillRule(page: Page, index: number, rule: { field: string; op: string; value: number }): Promise<void> {
  const row = (await page.$$('form.backtest .rule'))[index];
  await (await row.$('select[name=field]'))!.select(rule.field);
  await (await row.$('select[name=op]'))!.select(rule.op);
  const value = (await row.$('input[name=value]'))!;
  await value.evaluate((input) => ((input as HTMLInputElement).value = ''));
  await value.type(String(rule.value));
}

/** Clicks a download link and reads the file the browser saved. */
async function download(page: Page, selector: string): Promise<string> {
  const cdp = await page.createCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads, eventsEnabled: true });
  const done = new Promise<void>((resolve) => cdp.on('Browser.downloadProgress', (e) => e.state === 'completed' && resolve()));
  const name = await page.$eval(selector, (a) => a.getAttribute('download')!);
  await page.click(selector);
  await done;
  expect(await readdir(downloads)).toContain(name);
  return readFile(join(downloads, name), 'utf8');
}

describe('the research page', () => {
  it('a backtest started from the form ends with the numbers the API returns for that run', async () => {
    const page = await browser.signedIn(world.keys.team, '#/research');
    await page.waitForSelector('form.backtest select[name=field]');
    const rules = [
      { field: 'momentum', op: '>=', value: 55 },
      { field: 'liquidity_usd', op: '>', value: 1000 },
    ];
    await page.type('input[name=name]', 'from the console');
    await fillRule(page, 0, rules[0]);
    await page.click('form.backtest .add-rule');
    await fillRule(page, 1, rules[1]);
    await page.select('select[name=horizon]', '6h');
    await page.select('select[name=cooldown]', '24h');
    await page.select('select[name=dead_token_policy]', 'total_loss');
    await page.click('input[name=chain][value=solana]');
    await page.click('input[name=chain][value=base]');
    await page.type('input[name=min_liquidity_usd]', '500');
    await page.click('form.backtest button[type=submit]');

    const shown = await page.waitForSelector('.run[data-status=done]', { timeout: 120_000 });
    const id = (await shown!.evaluate((e) => e.getAttribute('data-run')))!;
    const run = await api(`/v1/quant/backtests/${id}`);
    // The run is the one the form described.
    expect(run).toMatchObject({
      name: 'from the console',
      spec: { rules, horizon: '6h', cooldown: '24h', dead_token_policy: 'total_loss', universe: { chains: ['solana', 'base'], min_liquidity_usd: 500 } },
    });
    const result = run.result;
    expect(result.n, 'the run has events to compare').toBeGreaterThan(0);

    expect(await figure(page, 'n')).toEqual({ value: String(result.n), text: String(result.n) });
    expect(await figure(page, 'hit_rate')).toEqual({ value: String(result.hit_rate), text: percent(result.hit_rate) });
    expect(await figure(page, 'hit_rate_ci95')).toEqual({ value: null, text: interval(result.hit_rate_ci95) });
    expect(await figure(page, 'mean_return')).toEqual({ value: String(result.mean_return), text: signedPercent(result.mean_return) });
    expect(await figure(page, 'median_return')).toEqual({ value: String(result.median_return), text: signedPercent(result.median_return) });
    const excess = await page.$eval('table.summary tr[data-field=mean_return] td.excess', (td) => td.textContent);
    expect(excess).toBe(signedPercent(result.excess.mean_return));

    const checks = await page.$$eval('table.leakage tbody tr', (rows) => rows.map((r) => [r.getAttribute('data-check'), r.children[2].textContent, r.getAttribute('data-ok')]));
    expect(checks).toEqual(result.leakage_checks.map((c: any) => [c.check, `${c.passed} of ${c.checked}`, String(c.ok)]));

    const events = await page.$$eval('table.events tbody tr', (rows) =>
      rows.map((r) => [r.getAttribute('data-token'), r.getAttribute('data-entry'), r.querySelector('[data-value]')!.getAttribute('data-value')]),
    );
    expect(events).toEqual(result.events.map((e: any) => [e.token_id, e.entry_at, String(e.return)]));

    // The charts drew the result: a bar per bin, and the sum of the returns by exit time.
    expect(await canvasesDrawn(page, '.run .chart')).toEqual([true, true]);
    expect(await page.$eval('.chart.return-histogram', (e) => Number(e.getAttribute('data-bins')))).toBe(result.return_distribution.histogram.length);
    const path = await page.$eval('.chart.cumulative-path', (e) => ({ points: Number(e.getAttribute('data-points')), final: Number(e.getAttribute('data-final')) }));
    expect(path.points).toBe(new Set(result.events.map((e: any) => e.exit_at)).size);
    expect(path.final).toBeCloseTo(result.events.reduce((sum: number, e: any) => sum + e.return, 0), 9);

    // The CSV holds every event, one line each, in the API's order.
    const [header, ...lines] = (await download(page, '.export a.csv')).trimEnd().split('\r\n');
    const columns = header.split(',');
    expect(columns.slice(0, 2)).toEqual(['token_id', 'chain']);
    const cell = (line: string, name: string) => line.split(',')[columns.indexOf(name)];
    expect(lines.map((l) => [cell(l, 'token_id'), cell(l, 'entry_at'), Number(cell(l, 'return'))])).toEqual(
      result.events.map((e: any) => [e.token_id, e.entry_at, e.return]),
    );
    await page.close();
  });

  it("lists the key's past runs as GET /v1/quant/backtests does, and opens one with its result", async () => {
    const posted = await world.request('POST', '/v1/quant/backtests', { body: { rules: [{ field: 'conviction', op: '>=', value: 40 }], horizon: '1h' } });
    const ended = await waitFor(async () => {
      const run = await api(`/v1/quant/backtests/${posted.body.id}`);
      return run.status === 'done' && run;
    }, 'the run to end', 120_000);
    const page = await browser.signedIn(world.keys.team, '#/research');
    await page.waitForSelector(`table.past-runs tr[data-run="${ended.id}"]`);
    const listed = await api('/v1/quant/backtests?limit=25');
    expect(await page.$$eval('table.past-runs tbody tr', (rows) => rows.map((r) => [r.getAttribute('data-run'), r.getAttribute('data-status')]))).toEqual(
      listed.data.map((r: any) => [r.id, r.status]),
    );
    await page.click(`table.past-runs tr[data-run="${ended.id}"] button.open`);
    await page.waitForSelector(`.run[data-run="${ended.id}"][data-status=done] table.summary`);
    expect(await figure(page, 'n')).toEqual({ value: String(ended.result.n), text: String(ended.result.n) });
    // A long list shows its start until asked for all of it.
    await page.$eval('.run', (run) => run.querySelector<HTMLButtonElement>('button.all-events')?.click());
    await page.waitForFunction((n) => document.querySelectorAll('table.events tbody tr').length === n, {}, ended.result.events.length);
    expect(await page.$$eval('table.events tbody tr', (rows) => rows.map((r) => r.getAttribute('data-entry')))).toEqual(ended.result.events.map((e: any) => e.entry_at));
    await page.close();
  });

  it('shows each event study with its horizons, and draws the average path with its band from the numbers the API gives', async () => {
    const studies = await waitFor(async () => {
      const list = await api('/v1/quant/event-studies');
      return list.data.every((s: { as_of: string | null }) => s.as_of !== null) && list.data;
    }, 'the first refresh of the event studies', 240_000);
    const page = await browser.signedIn(world.keys.team, '#/research');
    await page.waitForSelector('table.event-studies tbody tr');
    const listed = await page.$$eval('table.event-studies tbody tr', (rows) => rows.map((r) => [r.getAttribute('data-study'), r.children[2].textContent]));
    expect(listed).toEqual(studies.map((s: any) => [s.slug, String(s.events)]));

    const busiest = [...studies].sort((a: any, b: any) => b.events - a.events)[0].slug;
    await page.click(`table.event-studies tr[data-study="${busiest}"] a`);
    await page.waitForSelector('.event-study table.horizons tbody tr');
    const study = await api(`/v1/quant/event-studies/${busiest}`);
    const quantile = (h: any, q: number) => String(h.return_distribution.quantiles.find((x: any) => x.q === q)?.value ?? null);
    const rows = await page.$$eval('table.horizons tbody tr', (trs) =>
      trs.map((r) => ['horizon', 'n', 'mean', 'low', 'high', 'baseline'].map((name) => r.getAttribute(`data-${name}`))),
    );
    expect(rows).toEqual(
      study.horizons.map((h: any) => [h.horizon, String(h.n), String(h.mean_return), quantile(h, 0.25), quantile(h, 0.75), String(h.baseline.mean_return)]),
    );
    expect(await page.$eval('.chart.study-path', (e) => e.getAttribute('data-horizons'))).toBe(study.horizons.map((h: any) => h.horizon).join(','));
    // The horizon axis, the mean, the band's two edges and the baseline.
    expect(await page.$eval('.chart.study-path', (e) => e.querySelectorAll('.u-legend .u-series').length)).toBe(1 + 4);
    expect(await canvasesDrawn(page, '.chart.study-path')).toEqual([true]);
    await page.close();
  }, 300_000);

  it('logged no console error and no uncaught exception on any page', () => {
    expect(browser.problems).toEqual([]);
  });
});

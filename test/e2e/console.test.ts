import { randomBytes } from 'node:crypto';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionForKey } from '../../infra/log/partitioner.ts';
import { waitFor } from '../../infra/wait.ts';
import { SNAPSHOT_GRID_MS } from '../../processors/quant-engine/features/features.ts';
import { buildConsole } from '../../console/build.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { QuantSnapshot } from '../../schemas/records.ts';
import { verifyWebhook } from '../../webhooks/signature.ts';
import { startApiWorld, type ApiWorld } from '../helpers/api-world.ts';
import { ConsoleBrowser } from '../helpers/console-browser.ts';
import { selfSignedCertificate, WebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * The console in a real browser: Debian's headless Chromium (installed by .ci/run) driven by
 * puppeteer-core, against the API serving a simulated world and the built console, with the
 * stream fed by the public-events processor. Every page a test opens is watched for console
 * errors and uncaught exceptions.
 */

let world: ApiWorld;
let consoleBrowser: ConsoleBrowser;
let receiver: WebhookReceiver;

beforeAll(async () => {
  await buildConsole();
  const tls = selfSignedCertificate();
  receiver = await WebhookReceiver.start(tls);
  world = await startApiWorld({ webhookReceiverCa: tls.cert, stream: true });
  consoleBrowser = await ConsoleBrowser.open(world.base);
}, 600_000);

afterAll(async () => {
  await consoleBrowser?.close();
  await world?.stop();
  await receiver?.stop();
});

const watchedPage = () => consoleBrowser.watchedPage();
const signedIn = (key: string, route = '#/tokens', page?: Page) => consoleBrowser.signedIn(key, route, page);

const tableTokens = (page: Page) => page.$$eval('table.tokens tbody tr', (rows) => rows.map((r) => r.getAttribute('data-token')));
const tableSignals = (page: Page, table = 'signals') => page.$$eval(`table.${table} tbody tr`, (rows) => rows.map((r) => r.getAttribute('data-signal')));
const ids = (signals: { id: string }[]) => signals.map((s) => s.id);
/** The API's list for the filters the console sends, 50 at a time as it asks. */
const feed = async (query: string) => (await world.request('GET', `/v1/quant/signals?limit=50${query === '' ? '' : `&${query}`}`)).body;

/** A token's snapshots in the world's log, oldest first. */
async function snapshotsOf(tokenId: string): Promise<QuantSnapshot[]> {
  const topic = TOPICS.snapshots.name;
  const partition = partitionForKey(tokenId, TOPICS.snapshots.partitions);
  const out: QuantSnapshot[] = [];
  for (let from = 0; ; ) {
    const batch = await world.log.read(topic, partition, from, 10_000);
    if (batch.length === 0) break;
    for (const record of batch) if (record.key === tokenId) out.push((await world.codec.decode(topic, record.value!)) as QuantSnapshot);
    from = batch.at(-1)!.offset + 1;
  }
  return out.sort((a, b) => a.ts - b.ts);
}

/**
 * The token's next snapshot as the engine would write it, one grid step after its latest, with
 * the momentum (value and drivers) it had at an earlier snapshot, at least 6 points away: more
 * than any drift left unpublished (3 points), so the stream announces it.
 */
async function appendMomentumChange(tokenId: string): Promise<{ momentum: number; ts: number }> {
  const history = await snapshotsOf(tokenId);
  const latest = history.at(-1)!;
  const now = latest.scores.momentum;
  const earlier = [...history].reverse().find((s) => s.scores.momentum !== null && (now === null || Math.abs(s.scores.momentum - now) >= 6));
  expect(earlier, `an earlier momentum of ${tokenId} away from ${now}`).toBeDefined();
  const momentum = earlier!.scores.momentum!;
  const ts = latest.ts + SNAPSHOT_GRID_MS;
  const next: QuantSnapshot = {
    ...latest,
    snapshotId: `snap_${randomBytes(12).toString('hex')}`,
    ts,
    scores: { ...latest.scores, momentum },
    scoreDetails: latest.scoreDetails.map((d) => (d.score === 'momentum' ? earlier!.scoreDetails.find((e) => e.score === 'momentum')! : d)),
    freshness: { ...latest.freshness, updatedAt: ts },
  };
  // Both topics the engine writes a snapshot to: the history, and the latest per token (which the API reads).
  for (const topic of [TOPICS.snapshots.name, TOPICS.snapshotsLatest.name]) {
    await world.log.append(topic, [{ key: tokenId, value: await world.codec.encode(topic, next), timestamp: ts }]);
  }
  return { momentum, ts };
}

describe('the console', () => {
  it('signs in with a key typed into the form and lists the tokens GET /v1/quant/tokens lists', async () => {
    const page = await watchedPage();
    await page.goto(`${world.base}/console/`);
    await page.type('input[name=key]', world.keys.team);
    await page.click('button[type=submit]');
    await page.waitForSelector('table.tokens tbody tr');
    const listed = (await world.request('GET', '/v1/quant/tokens?sort=momentum&limit=100')).body.data.map((row: { token_id: string }) => row.token_id);
    expect(await tableTokens(page)).toEqual(listed);
    await page.close();
  });

  it("refuses a wrong key with the API's message and request id", async () => {
    // Not a watched page: Chromium logs the 401 answer as a console error.
    const page = await consoleBrowser.unwatchedPage();
    await page.goto(`${world.base}/console/`);
    await page.type('input[name=key]', 'svc_live_wrong');
    await page.click('button[type=submit]');
    const alert = await page.waitForSelector('.error');
    expect(await alert!.evaluate((e) => e.textContent)).toMatch(/^UNAUTHORIZED: .*\(request req_[0-9a-f]+\)$/);
    await page.close();
  });

  it('takes the key from the URL fragment, removes it from the address bar and keeps it for the tab only', async () => {
    const page = await signedIn(world.keys.pro, '#/key');
    expect(new URL(page.url()).hash).toBe('#/key');
    expect(page.url()).not.toContain(world.keys.pro);
    expect(await page.evaluate(() => sessionStorage.getItem('tqa.console.key'))).toBe(world.keys.pro);
    await page.waitForSelector('dd[data-field=plan]');
    expect(await page.$eval('dd[data-field=plan]', (e) => e.textContent)).toBe('pro');
    await page.close();
  });

  it("draws a token's history chart and shows each score with the API's values", async () => {
    const token = (await world.request('GET', '/v1/quant/tokens?limit=1')).body.data[0].token_id as string;
    const page = await signedIn(world.keys.team, `#/token/${token}`);
    await page.waitForSelector('.chart canvas');
    await page.waitForSelector('table.drivers tbody tr');
    // uPlot drew on the canvas: some pixel is not blank.
    const drawn = await page.$eval('.chart canvas', (canvas) => {
      const c = canvas as HTMLCanvasElement;
      const pixels = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      return pixels.some((value, i) => i % 4 === 3 && value !== 0);
    });
    expect(drawn).toBe(true);
    const snapshot = (await world.request('GET', `/v1/quant/token/${token}`)).body;
    const shown = await page.$$eval('table.drivers tbody tr', (rows) => rows.map((r) => [r.getAttribute('data-score'), r.children[1].textContent]));
    expect(shown).toEqual(snapshot.score_details.map((d: { score: string; value: number | null }) => [d.score, d.value === null ? '–' : d.value.toFixed(1)]));
    const history = (await world.request('GET', `/v1/quant/token/${token}/history?step=1h`)).body.data;
    // The time axis, four scores and the price, over every point of the API's history.
    expect(await page.$eval('.chart', (e) => e.querySelectorAll('.u-legend .u-series').length)).toBe(1 + 4 + 1);
    expect(await page.$eval('.chart', (e) => Number(e.getAttribute('data-points')))).toBe(history.length);
    expect(history.length).toBeGreaterThan(1);
    await page.close();
  });

  it('shows a key without research:write the backtest form disabled, with the reason', async () => {
    const { key } = await world.createKey('team', ['quant:read', 'keys:read', 'research:read'], 'reader');
    const page = await signedIn(key, '#/research');
    await page.waitForSelector('form.backtest');
    expect(await page.$eval('form.backtest fieldset', (f) => (f as HTMLFieldSetElement).disabled)).toBe(true);
    expect(await page.$eval('form.backtest .refused', (e) => e.textContent)).toContain('lacks the scope research:write');
    await page.evaluate(() => (location.hash = '#/webhooks'));
    await page.waitForSelector('.refused');
    expect(await page.$eval('.refused', (e) => e.textContent)).toContain('lacks the scope webhooks:read');
    await page.close();
  });

  it('creates a webhook showing its secret once, sends webhook.test to the receiver and shows the delivery in its log', async () => {
    const page = await signedIn(world.keys.team, '#/webhooks');
    await page.waitForSelector('form.create-webhook');
    await page.type('input[name=url]', receiver.url('/console-hook'));
    await page.click('form.create-webhook button[type=submit]');
    const secret = (await (await page.waitForSelector('.secret code'))!.evaluate((e) => e.textContent))!;
    expect(secret).toMatch(/^whsec_/);
    const hook = await page.waitForSelector('article.webhook');
    await (await hook!.$('.actions button'))!.click();
    await page.waitForFunction(() => document.querySelector('.notice')?.textContent?.startsWith('webhook.test delivered: HTTP 200') === true);
    const [received] = receiver.to('/console-hook');
    expect(received.headers['service-event']).toBe('webhook.test');
    // Signed with the secret the page showed; the world's clock is simulated, so its own time is the verifier's now.
    const header = String(received.headers['service-signature']);
    const signedAt = Number(/t=(\d+)/.exec(header)![1]);
    expect(verifyWebhook({ payload: received.body, header, secret, now: signedAt })).toMatchObject({ type: 'webhook.test' });
    // The delivery reaches the log once it is projected: look again until it shows.
    for (let tries = 0; (await page.$('tr[data-event-type="webhook.test"]')) === null; tries++) {
      expect(tries, 'the test delivery shows in the log').toBeLessThan(50);
      await page.evaluate(() => (location.hash = '#/key'));
      await page.evaluate(() => (location.hash = '#/webhooks'));
      await page.waitForSelector('article.webhook');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await page.close();
  });

  it('lists the signals GET /v1/quant/signals lists, each linking to itself and its token, and the next page with More', async () => {
    const page = await signedIn(world.keys.team);
    await page.click('nav a[href="#/signals"]');
    await page.waitForSelector('table.signals[data-query=""]');
    const first = await feed('');
    expect(first.has_more).toBe(true);
    expect(await tableSignals(page)).toEqual(ids(first.data));
    const links = await page.$$eval('table.signals tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('a')].map((a) => a.getAttribute('href'))));
    expect(links).toEqual(first.data.map((s: { id: string; token: { id: string } }) => [`#/token/${s.token.id}`, `#/signal/${s.id}`]));
    await page.click('button.more');
    await page.waitForFunction((n) => document.querySelectorAll('table.signals tbody tr').length > n, {}, first.data.length);
    const second = await feed(`cursor=${encodeURIComponent(first.next_cursor)}`);
    expect(await tableSignals(page)).toEqual(ids([...first.data, ...second.data]));
    await page.close();
  });

  it('narrows the signals with its filters to what the API lists for them, and keeps them in a link', async () => {
    const type = (await feed('status=ended')).data[0].type as string;
    const page = await signedIn(world.keys.team, '#/signals');
    await page.waitForSelector('table.signals[data-query=""]');
    await page.select('select[name=status]', 'ended');
    await page.waitForSelector('table.signals[data-query="status=ended"]');
    expect(await tableSignals(page)).toEqual(ids((await feed('status=ended')).data));
    await page.select('select[name=signal_type]', type);
    const query = `status=ended&signal_type=${type}`;
    await page.waitForSelector(`table.signals[data-query="${query}"]`);
    expect(new URL(page.url()).hash).toBe(`#/signals?${query}`);
    const narrowed = ids((await feed(query)).data);
    expect(narrowed.length).toBeGreaterThan(0);
    expect(await tableSignals(page)).toEqual(narrowed);
    await page.close();
    // The link opens the same view, its controls set as the filters are.
    const linked = await signedIn(world.keys.team, `#/signals?${query}`);
    await linked.waitForSelector(`table.signals[data-query="${query}"]`);
    expect(await tableSignals(linked)).toEqual(narrowed);
    expect(await linked.$eval('select[name=signal_type]', (s) => (s as HTMLSelectElement).value)).toBe(type);
    await linked.close();
  });

  it('opens a signal with its why lines, how it ended and its prior firings as GET /v1/quant/signals/{id} gives them', async () => {
    // An ended signal whose rule fired on its token before.
    let signal: any;
    for (const { id } of (await world.request('GET', '/v1/quant/signals?status=ended&limit=100')).body.data) {
      signal = (await world.request('GET', `/v1/quant/signals/${id}`)).body;
      if (signal.prior_firings.data.length > 0) break;
    }
    expect(signal.prior_firings.data.length, 'an ended signal with prior firings').toBeGreaterThan(0);
    const page = await signedIn(world.keys.team, `#/signal/${signal.id}`);
    await page.waitForSelector('ul.why');
    expect(await page.$$eval('ul.why li', (items) => items.map((li) => li.textContent))).toEqual(signal.why);
    expect(await page.$eval('dd[data-field=ended]', (e) => e.textContent)).toBe(`${signal.ended_at} (${signal.end_reason})`);
    expect(await tableSignals(page, 'prior-firings')).toEqual(ids(signal.prior_firings.data));
    const firings = await page.$$eval('table.prior-firings tbody tr', (rows) => rows.map((r) => [r.children[0].textContent, r.children[1].textContent]));
    expect(firings).toEqual(signal.prior_firings.data.map((p: { fired_at: string; status: string }) => [p.fired_at, p.status]));
    await page.close();
  });

  it("shows the API's error for a signal filter it refuses, with the request id", async () => {
    // Not a watched page: Chromium logs the 404 answer as a console error.
    const page = await signedIn(world.keys.team, '#/signals?token=tk_doesnotexist', await consoleBrowser.unwatchedPage());
    const alert = await page.waitForSelector('.error');
    expect(await alert!.evaluate((e) => e.textContent)).toMatch(/^NOT_FOUND: .*\(request req_[0-9a-f]+\)$/);
    await page.close();
  });

  it('a live score change reaches the tokens page within 5 s', async () => {
    const page = await signedIn(world.keys.team);
    await page.waitForSelector('table.tokens tbody tr');
    await page.waitForSelector('.live[data-state=live]');
    const [token] = await tableTokens(page);
    const { momentum, ts } = await appendMomentumChange(token!);
    const cell = `tr[data-token="${token}"] td[data-score=momentum]`;
    await page.waitForFunction(
      (selector, shown) => {
        const td = document.querySelector(selector);
        return td?.textContent === shown && td.classList.contains('changed');
      },
      { timeout: 5_000 },
      cell,
      momentum.toFixed(1),
    );
    // The stream may be ahead of the projection that the API reads.
    const snapshot = await waitFor(async () => {
      const body = (await world.request('GET', `/v1/quant/token/${token}`)).body;
      return Date.parse(body.ts) === ts && body;
    }, 'the API to answer with the new snapshot');
    expect(snapshot.scores.momentum).toBe(momentum);
    expect(await page.$eval(cell, (td) => td.textContent)).toBe(snapshot.scores.momentum.toFixed(1));
    await page.close();
  });

  it('logged no console error and no uncaught exception on any page', () => {
    expect(consoleBrowser.problems).toEqual([]);
  });
});

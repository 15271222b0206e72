import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../webhooks/signature.ts';
import { startApiWorld, type ApiWorld } from '../helpers/api-world.ts';
import { ROOT } from '../helpers/project-files.ts';
import { selfSignedCertificate, WebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * The console in a real browser: Debian's headless Chromium (installed by .ci/run) driven by
 * puppeteer-core, against the API serving a simulated world and the built console. Every
 * page a test opens is watched for console errors and uncaught exceptions.
 */

const CHROMIUM = '/usr/bin/chromium';
const run = promisify(execFile);
let world: ApiWorld;
let browser: Browser;
let receiver: WebhookReceiver;
const problems: string[] = [];

beforeAll(async () => {
  await run('npm', ['run', 'build'], { cwd: ROOT });
  const tls = selfSignedCertificate();
  receiver = await WebhookReceiver.start(tls);
  world = await startApiWorld({ webhookReceiverCa: tls.cert });
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
  await receiver?.stop();
});

/** A new page whose console errors and uncaught exceptions are collected in `problems`. */
async function watchedPage(): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`${page.url()}: ${String(err)}`));
  return page;
}

/** A page signed in through the URL fragment. */
async function signedIn(key: string, route = '#/tokens'): Promise<Page> {
  const page = await watchedPage();
  await page.goto(`${world.base}/console/#key=${encodeURIComponent(key)}`);
  await page.waitForSelector('nav');
  if (route !== '#/tokens') await page.evaluate((hash) => (location.hash = hash), route);
  return page;
}

const tableTokens = (page: Page) => page.$$eval('table.tokens tbody tr', (rows) => rows.map((r) => r.getAttribute('data-token')));

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
    const page = await browser.newPage();
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

  it('logged no console error and no uncaught exception on any page', () => {
    expect(problems).toEqual([]);
  });
});

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Page } from 'puppeteer-core';
import { buildConsole } from './build.ts';

/**
 * `npm run docs:screenshots`: the console's pages as docs/console-<page>.png, taken in
 * Debian's headless Chromium from `tqa start` on a fresh 3-day simulated world once it has
 * caught up, signed in with the demo key. Three days, not one: the automatic cohorts are
 * recomputed daily from authors' resolved calls, and after one day they have no members yet.
 * Run it after a change to a page.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const PORT = process.env.PORT ?? '18480';
const CATCH_UP_TIMEOUT_MS = 15 * 60_000;

/** Each page by its file name and its route; a route with `first <kind>` opens the first row of that list. */
const PAGES: { name: string; route: string; open?: string }[] = [
  { name: 'tokens', route: '#/tokens' },
  { name: 'token', route: '#/tokens', open: 'table.tokens tbody tr a' },
  { name: 'signals', route: '#/signals' },
  { name: 'authors', route: '#/authors' },
  { name: 'cohorts', route: '#/cohorts' },
  { name: 'narratives', route: '#/narratives' },
  { name: 'research', route: '#/research' },
  { name: 'webhooks', route: '#/webhooks' },
  { name: 'key', route: '#/key' },
];

async function main(): Promise<void> {
  await buildConsole();
  const dir = await mkdtemp(join(tmpdir(), 'tqa-screenshots-'));
  const service = spawn(process.execPath, ['bin/tqa.js', 'start'], {
    cwd: ROOT,
    stdio: 'ignore',
    env: { ...process.env, LOG_LEVEL: 'warn', TQA_DATA_DIR: dir, TQA_SIM_DAYS: '3', PORT, STREAM_PORT: String(Number(PORT) + 1) },
  });
  const base = `http://127.0.0.1:${PORT}`;
  try {
    await caughtUp(base);
    const key = (await readFile(join(dir, 'demo-key'), 'utf8')).trim();
    const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 860 });
      await page.goto(`${base}/console/#key=${encodeURIComponent(key)}`);
      await page.waitForSelector('nav');
      for (const { name, route, open } of PAGES) {
        await show(page, route, open);
        const file = join(ROOT, 'docs', `console-${name}.png`);
        await page.screenshot({ path: file as `${string}.png` });
        process.stdout.write(`${file}\n`);
      }
    } finally {
      await browser.close();
    }
  } finally {
    service.kill('SIGTERM');
    await new Promise((resolve) => service.once('exit', resolve));
    await rm(dir, { recursive: true, force: true });
  }
}

/** Waits until the service says every stage has caught up with the seeded history. */
async function caughtUp(base: string): Promise<void> {
  const deadline = Date.now() + CATCH_UP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const health = await fetch(`${base}/v1/health`).then((r) => r.json() as Promise<{ status: string }>, () => null);
    if (health?.status === 'ok') return;
    await delay(2_000);
  }
  throw new Error(`the service did not catch up within ${CATCH_UP_TIMEOUT_MS / 60_000} minutes`);
}

/** Opens a route (and a link on it), then waits for the page's requests and charts to settle. */
async function show(page: Page, route: string, open?: string): Promise<void> {
  await page.evaluate((hash) => (location.hash = hash), route);
  await page.waitForNetworkIdle({ idleTime: 500 });
  if (open) {
    await page.click(open);
    await page.waitForNetworkIdle({ idleTime: 500 });
  }
}

await main();

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import puppeteer from 'puppeteer-core';
import { buildConsole, CONSOLE_DIR } from '../console/build.ts';
import { atMost, report } from './results.ts';
import { startService } from './service.ts';

/**
 * The console in Debian's headless Chromium against `tqa start`: the size of what it loads
 * (JS and CSS, gzipped), the time to its first tokens row against the bare
 * GET /v1/quant/tokens from the same browser, and the longest main-thread task while the
 * stream updates the rows (the simulated world at 60× its speed: a snapshot step every 5 s).
 */

const CHROMIUM = '/usr/bin/chromium';
const DAYS = '1';
const SPEED = '60';
const LIVE_MS = 30_000;
const RUNS = 5;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function benchConsole(): Promise<void> {
  await buildConsole();
  const sizes = await Promise.all(['console.js', 'console.css'].map(async (f) => gzipSync(await readFile(join(CONSOLE_DIR, f))).length));
  report({ figure: 'console JS + CSS, gzipped', value: (sizes[0] + sizes[1]) / 1024, unit: 'KB', target: atMost(150, 'KB') });

  const service = await startService(1, { TQA_SIM_DAYS: DAYS, TQA_SIM_SPEED: SPEED });
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const [key] = service.keys;
    // Wait until the service lists tokens.
    for (;;) {
      const res = await service.get('/v1/quant/tokens?limit=1', key);
      if (res?.status === 200 && (res.body as { data: unknown[] }).data.length > 0) break;
      await delay(500);
    }
    const page = await browser.newPage();
    const bare: number[] = [];
    const firstRow: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await page.goto(`${service.base}/console/`);
      bare.push(
        await page.evaluate(async (k) => {
          const t = performance.now();
          await (await fetch('/v1/quant/tokens?sort=momentum&limit=100', { headers: { Authorization: `Bearer ${k}` } })).json();
          return performance.now() - t;
        }, key),
      );
      await page.evaluate(() => sessionStorage.clear());
      // A new document each time: a change of the fragment alone would not load the console again.
      await page.goto('about:blank');
      await page.goto(`${service.base}/console/#key=${encodeURIComponent(key)}`);
      // From the navigation's start to the first row in the document.
      const handle = await page.waitForFunction(() => document.querySelector('table.tokens tbody tr') !== null && performance.now(), { polling: 'mutation' });
      firstRow.push((await handle.jsonValue()) as number);
    }
    report({
      figure: 'console: first tokens row',
      value: median(firstRow),
      unit: 'ms',
      baseline: { name: 'GET /v1/quant/tokens from the same browser', value: median(bare) },
      target: { text: '≤ 2× baseline', meets: (_v, ratio) => ratio !== null && ratio <= 2 },
    });

    // The longest task while rows update live.
    await page.evaluate(() => {
      const w = window as unknown as { longest: number };
      w.longest = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.longest = Math.max(w.longest, entry.duration);
      }).observe({ type: 'longtask' });
    });
    const before = await page.$$eval('td.changed', (cells) => cells.length);
    await delay(LIVE_MS);
    const { longest, changed, rows } = await page.evaluate(() => ({
      longest: (window as unknown as { longest: number }).longest,
      changed: document.querySelectorAll('td.changed').length,
      rows: document.querySelectorAll('table.tokens tbody tr').length,
    }));
    report({
      figure: 'console: longest main-thread task while tokens update live',
      value: longest,
      unit: 'ms',
      target: atMost(50, 'ms'),
      note: `${rows} rows shown, ${changed - before} cells changed live in ${LIVE_MS / 1000} s; tasks under 50 ms are not reported by the browser (0 means none longer)`,
    });
  } finally {
    await browser.close();
    await service.stop();
  }
}

import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/**
 * The console in a real browser for the e2e tests: Debian's headless Chromium (installed by
 * .ci/run) driven by puppeteer-core, against an API world that serves the built console.
 * Every page opened here is watched: its console errors and uncaught exceptions are kept in
 * `problems`, for a test to check at the end.
 */

const CHROMIUM = '/usr/bin/chromium';

export class ConsoleBrowser {
  readonly problems: string[] = [];

  private constructor(
    private readonly browser: Browser,
    private readonly base: string,
  ) {}

  static async open(base: string): Promise<ConsoleBrowser> {
    const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    return new ConsoleBrowser(browser, base);
  }

  /** A new page whose console errors and uncaught exceptions are collected in `problems`. */
  async watchedPage(): Promise<Page> {
    const page = await this.unwatchedPage();
    page.on('console', (message) => {
      if (message.type() === 'error') this.problems.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (err) => this.problems.push(`${page.url()}: ${String(err)}`));
    return page;
  }

  /** A page not watched, for a test that shows an error on purpose: Chromium logs the API's error answer as a console error. */
  async unwatchedPage(): Promise<Page> {
    const page = await this.browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    return page;
  }

  /** A page signed in through the URL fragment, showing `route` (`#/research`; the tokens page, where the console opens, by default); a watched one unless another page is given. */
  async signedIn(key: string, route = '#/tokens', page?: Page): Promise<Page> {
    page ??= await this.watchedPage();
    await page.goto(`${this.base}/console/#key=${encodeURIComponent(key)}`);
    await page.waitForSelector('nav');
    if (route !== '#/tokens') await page.evaluate((hash) => (location.hash = hash), route);
    return page;
  }

  close(): Promise<void> {
    return this.browser.close();
  }
}

/**
 * Whether something was drawn on each canvas under `selector` (the console's charts), once
 * every chart it matches says it is drawn (uPlot loads with the first chart): some pixel is not blank.
 */
export async function canvasesDrawn(page: Page, selector: string): Promise<boolean[]> {
  await page.waitForFunction((s) => [...document.querySelectorAll(s)].every((chart) => chart.hasAttribute('data-drawn')), {}, selector);
  return page.$$eval(`${selector} canvas`, (canvases) =>
    canvases.map((canvas) => {
      const c = canvas as HTMLCanvasElement;
      const pixels = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      return pixels.some((value, i) => i % 4 === 3 && value !== 0);
    }),
  );
}

import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The console's static files, built with esbuild into dist/console, which the api role serves at /console/. */

const HERE = fileURLToPath(new URL('.', import.meta.url));
export const CONSOLE_DIR = join(HERE, '..', 'dist', 'console');
/** The place in index.html that build takes the head script (start.ts) into. */
const HEAD_SCRIPT = '<!-- start.ts -->';

/**
 * Builds into a directory of its own, then renames each file into dist/console: a server
 * reading the console, or another build running at the same time (test files build it in
 * parallel), never sees it half written or gone.
 */
export async function buildConsole(): Promise<void> {
  await mkdir(CONSOLE_DIR, { recursive: true });
  const staging = await mkdtemp(join(CONSOLE_DIR, '..', 'console-build-'));
  try {
    const common = { outdir: staging, bundle: true, minify: true, target: 'es2022', logLevel: 'warning' } as const;
    await build({
      ...common,
      entryPoints: { console: join(HERE, 'main.tsx') },
      format: 'esm',
      // Code loaded by import() (uPlot, for the charts) goes in chunks of its own.
      splitting: true,
      chunkNames: 'lib-[hash]',
      jsx: 'automatic',
      jsxImportSource: 'preact',
      // uPlot's stylesheet, imported by the chart, lands in console.css beside the console's own.
      loader: { '.css': 'css' },
    });
    // A classic script inlined in the head: it runs as the page arrives, where a module would
    // wait for the whole document and a file of its own for one more round trip.
    const start = await build({ ...common, outdir: undefined, write: false, entryPoints: [join(HERE, 'start.ts')], format: 'iife' });
    const startCode = start.outputFiles[0].text.trim();
    if (startCode.includes('</script')) throw new Error('the head script holds "</script", which would end its tag early');
    const page = await readFile(join(HERE, 'index.html'), 'utf8');
    if (!page.includes(HEAD_SCRIPT)) throw new Error(`console/index.html has no ${HEAD_SCRIPT} for the head script`);
    await writeFile(join(staging, 'index.html'), page.replace(HEAD_SCRIPT, () => `<script>${startCode}</script>`));
    const built = await readdir(staging);
    for (const file of built) await rename(join(staging, file), join(CONSOLE_DIR, file));
    // Chunks of earlier builds (their names hold their hashes) go: every build makes the same set.
    for (const file of await readdir(CONSOLE_DIR)) if (!built.includes(file)) await rm(join(CONSOLE_DIR, file), { force: true });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole();

import { copyFile, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The console's static files, built with esbuild into dist/console, which the api role serves at /console/. */

const HERE = fileURLToPath(new URL('.', import.meta.url));
export const CONSOLE_DIR = join(HERE, '..', 'dist', 'console');

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
      jsx: 'automatic',
      jsxImportSource: 'preact',
      // uPlot's stylesheet, imported by the chart, lands in console.css beside the console's own.
      loader: { '.css': 'css' },
    });
    // A classic script: the head runs it at once, where a module would wait for the whole document.
    await build({ ...common, entryPoints: { start: join(HERE, 'start.ts') }, format: 'iife' });
    await copyFile(join(HERE, 'index.html'), join(staging, 'index.html'));
    for (const file of await readdir(staging)) await rename(join(staging, file), join(CONSOLE_DIR, file));
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole();

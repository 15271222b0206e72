import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The console's static files, built with esbuild into dist/console, which the api role serves at /console/. */

const HERE = fileURLToPath(new URL('.', import.meta.url));
export const CONSOLE_DIR = join(HERE, '..', 'dist', 'console');

export async function buildConsole(): Promise<void> {
  await rm(CONSOLE_DIR, { recursive: true, force: true });
  await mkdir(CONSOLE_DIR, { recursive: true });
  await build({
    entryPoints: { console: join(HERE, 'main.tsx') },
    outdir: CONSOLE_DIR,
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    // uPlot's stylesheet, imported by the chart, lands in console.css beside the console's own.
    loader: { '.css': 'css' },
    logLevel: 'warning',
  });
  await copyFile(join(HERE, 'index.html'), join(CONSOLE_DIR, 'index.html'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole();

import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * `npm run build` (also on `prepare`): the package's exports as JavaScript with type
 * declarations in dist/, so plain Node 20 and a bundler import them without a TypeScript
 * loader. esbuild bundles each entry (dependencies stay imports); tsc writes the declarations.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist');
const ENTRIES = ['client/index.ts', 'client/webhooks.ts', 'client/stream.ts'];

async function declarationFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.d.ts')).map((e) => join(e.parentPath, e.name));
}

// Only this build's outputs: dist/console is the console build's.
for (const dir of ['client', 'webhooks', 'stream']) await rm(join(OUT, dir), { recursive: true, force: true });
await build({
  entryPoints: ENTRIES.map((entry) => join(ROOT, entry)),
  outdir: join(OUT, 'client'),
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
});
execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
// The sources import with .ts extensions; the declarations sit beside .js files, so name those.
for (const file of await declarationFiles(OUT)) {
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace(/(from\s+['"]\.{1,2}\/[^'"]*)\.ts(['"])/g, '$1.js$2'));
}

import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, stop, type BuildOptions, type Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The thread's side of onWorkerThread, which imports the role's module. */
const THREAD_MAIN = fileURLToPath(new URL('./worker-thread-main.ts', import.meta.url));
/**
 * Under the project's node_modules, so that the bundles' imports of packages resolve as the
 * sources' do; `npm ci` clears it with the packages it was built against.
 */
const CACHE_DIR = join(ROOT, 'node_modules/.cache/tqa/threads');
/** A bundle directory no process has used for this long is removed when another is built. */
const UNUSED_FOR_MS = 7 * 24 * 3_600_000;

export interface ThreadCode {
  /** The thread's entry: the bundled worker-thread-main. */
  main: URL;
  /** The role's module, bundled: what the thread imports in place of the source. */
  module: URL;
}

const built = new Map<string, Promise<ThreadCode>>();
/** The build in progress: one at a time, since each ends the esbuild process it ran in. */
let building: Promise<unknown> = Promise.resolve();

/**
 * The code of a role thread, bundled from the TypeScript sources into JavaScript once per
 * process and role module (about 0.1 s), so that each thread loads plain modules instead of
 * passing every import through the TypeScript loader: on one core, five threads loading the
 * processors role took about 3 s through the loader and 0.6 s bundled, and a processors
 * process starts five. Packages stay outside the bundle, imported as they are. Bundles of the
 * same sources are the same files, kept by their content's hash, so that processes started
 * together share one directory.
 */
export function threadCode(module: URL): Promise<ThreadCode> {
  let code = built.get(module.href);
  if (!code) {
    code = bundle(module);
    built.set(module.href, code);
    code.catch(() => built.delete(module.href));
  }
  return code;
}

async function bundle(module: URL): Promise<ThreadCode> {
  const entries = [THREAD_MAIN, fileURLToPath(module)];
  // Written under a name of the same depth as the final one: the source maps' paths are relative.
  const staging = join(CACHE_DIR, 'staging');
  const result = await buildWithRetry({
    entryPoints: entries,
    absWorkingDir: ROOT,
    outdir: staging,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    write: false,
    logLevel: 'silent',
    plugins: [sourceLocations],
  });
  const files = result.outputFiles.map((file) => ({ name: relative(staging, file.path), contents: file.contents }));
  const hash = createHash('sha256');
  for (const { name, contents } of files) hash.update(name).update(contents);
  const dir = join(CACHE_DIR, hash.digest('hex').slice(0, 16));
  await writeOnce(dir, files);
  await removeUnused(dir);
  // The metafile names files relative to the working dir.
  const outputOf = (entry: string) => {
    const [path] = Object.entries(result.metafile.outputs).find(([, output]) => output.entryPoint !== undefined && join(ROOT, output.entryPoint) === entry)!;
    return pathToFileURL(join(dir, relative(staging, join(ROOT, path))));
  };
  return { main: outputOf(entries[0]), module: outputOf(entries[1]) };
}

/**
 * esbuild builds in a child process of ours, which a signal to our process group (a stop
 * while the roles start) ends with the build in progress: that build runs once more, in a new
 * one. Each build ends its esbuild process, which would otherwise stay for the process's life.
 */
function buildWithRetry(options: BuildOptions & { write: false; metafile: true }) {
  const once = async () => {
    try {
      return await build(options);
    } finally {
      await stop();
    }
  };
  const result = building.then(() => once().catch(() => once()));
  building = result.catch(() => undefined);
  return result;
}

/**
 * The source's own location in place of `import.meta.url` and `import.meta.dirname`: the code
 * finds files beside it (schemas, migrations, package.json) and names modules for threads
 * relative to where it is, not where its bundle is.
 */
const sourceLocations: Plugin = {
  name: 'source-locations',
  setup(setup) {
    setup.onLoad({ filter: /\.ts$/ }, async ({ path }) => ({
      loader: 'ts',
      contents: (await readFile(path, 'utf8'))
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(path))),
    }));
  },
};

/** Writes the files into `dir` unless another process has: written aside, then renamed into place. */
async function writeOnce(dir: string, files: { name: string; contents: Uint8Array }[]): Promise<void> {
  if (await stat(dir).catch(() => undefined)) {
    const now = new Date();
    await utimes(dir, now, now);
    return;
  }
  const aside = `${dir}.${process.pid}.${Date.now()}`;
  for (const { name, contents } of files) {
    await mkdir(dirname(join(aside, name)), { recursive: true });
    await writeFile(join(aside, name), contents);
  }
  try {
    await rename(aside, dir);
  } catch (err) {
    // Another process renamed its identical files into place first.
    await rm(aside, { recursive: true, force: true });
    if (!(await stat(dir).catch(() => undefined))) throw err;
  }
}

async function removeUnused(keep: string): Promise<void> {
  for (const name of await readdir(CACHE_DIR)) {
    const dir = join(CACHE_DIR, name);
    if (dir === keep) continue;
    const info = await stat(dir).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > UNUSED_FOR_MS) await rm(dir, { recursive: true, force: true });
  }
}

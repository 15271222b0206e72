import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderResultsMarkdown, renderStartFigures, type StoredRow } from '../../bench/results.ts';
import { COMMANDS } from '../../cli/main.ts';
import { topologyBlocks } from '../../cli/topology.ts';
import { CONFIG_SETTINGS } from '../../infra/config.ts';
import { readBlock } from '../../infra/fs/generated-block.ts';
import { codeSpans, docFiles, headingAnchors, prose, readDoc } from '../helpers/markdown.ts';
import { ROOT, tsFiles } from '../helpers/project-files.ts';

/**
 * Docs that cannot drift from the code: links resolve, every `tqa` command and flag and every
 * setting they name exists, every setting the service reads is in the configuration table,
 * and the generated parts (topology, benchmark table) equal what the code generates now.
 */

const SERVICE_FOLDERS = ['api', 'cli', 'infra', 'processors', 'projections', 'research', 'webhooks', 'stream', 'presenters', 'schemas'];
const SETTING = /\b(?:TQA_[A-Z0-9_]+|KAFKA_[A-Z0-9_]+|CLICKHOUSE_[A-Z0-9_]+|SCHEMA_REGISTRY_URL|LOG_LEVEL|STREAM_PORT|BENCH_[A-Z0-9_]+)\b/g;

/** A folder's code, tests left out. */
function sourceFiles(folder: string): string[] {
  return tsFiles(folder)
    .filter((f) => !f.endsWith('.test.ts'))
    .map((f) => join(ROOT, f));
}

/** Settings the service reads: the config schema's and any read straight from process.env. */
function serviceSettings(): Set<string> {
  const read = new Set(CONFIG_SETTINGS);
  for (const file of SERVICE_FOLDERS.flatMap(sourceFiles)) {
    for (const m of readFileSync(file, 'utf8').matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)) if (m[1] !== 'PATH') read.add(m[1]);
  }
  return read;
}

/** The benchmarks' settings: every BENCH_ name in bench/. */
function benchSettings(): Set<string> {
  return new Set(sourceFiles('bench').flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\bBENCH_[A-Z0-9_]+\b/g)].map((m) => m[0])));
}

/** The docs a user reads for today's behaviour; the changelog names what is gone on purpose. */
const currentDocs = () => docFiles().filter((f) => f !== 'CHANGELOG.md');

describe('the docs', () => {
  it('keep the README to 200 lines', () => {
    expect(readDoc('README.md').split('\n').length).toBeLessThanOrEqual(200);
  });

  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of docFiles()) {
      for (const m of prose(readDoc(file)).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
        const [path, anchor] = target.split('#');
        const resolved = path === '' ? file : normalize(join(dirname(file), path));
        if (resolved.startsWith('..')) {
          broken.push(`${file}: ${target} (outside the repository)`);
          continue;
        }
        if (!existsSync(join(ROOT, resolved))) {
          broken.push(`${file}: ${target} (no ${resolved})`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && !headingAnchors(readDoc(resolved)).has(anchor)) broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('name only tqa commands and flags that exist', () => {
    const unknown: string[] = [];
    for (const file of currentDocs()) {
      for (const span of codeSpans(readDoc(file))) {
        for (const line of span.split('\n')) {
          for (const m of line.matchAll(/\btqa ([a-z][a-z-]*)([^|;&]*)/g)) {
            const command = COMMANDS.find((c) => c.name === m[1]);
            if (!command) {
              unknown.push(`${file}: tqa ${m[1]}`);
              continue;
            }
            for (const flag of m[2].matchAll(/(?<=\s)--[a-z][a-z-]*/g)) if (!command.usage.includes(flag[0])) unknown.push(`${file}: tqa ${m[1]} ${flag[0]}`);
          }
        }
      }
    }
    expect(unknown).toEqual([]);
  });

  it('name only settings the code reads', () => {
    const known = new Set([...serviceSettings(), ...benchSettings()]);
    const unknown = currentDocs().flatMap((file) => [...readDoc(file).matchAll(SETTING)].map((m) => m[0]).filter((name) => !known.has(name)).map((name) => `${file}: ${name}`));
    expect([...new Set(unknown)]).toEqual([]);
  });

  it('have every setting the service reads in the configuration table, and every benchmark setting in the benchmarks guide', () => {
    const table = new Set([...readDoc('docs/operations.md').matchAll(/^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/gm)].map((m) => m[1]));
    expect([...serviceSettings()].filter((name) => !table.has(name))).toEqual([]);
    const benchGuide = readDoc('docs/benchmarks.md');
    expect([...benchSettings()].filter((name) => !benchGuide.includes(name))).toEqual([]);
  });

  it('show the topology the code declares (tqa topology --update-docs)', () => {
    for (const block of topologyBlocks()) expect(readBlock(readDoc(block.file), block.name), block.file).toBe(block.content);
  });

  it('show the benchmark figures bench/results.json holds (npm run bench writes them)', () => {
    const rows = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as StoredRow[];
    expect(readBlock(readDoc('docs/benchmarks.md'), 'bench-results')).toBe(renderResultsMarkdown(rows));
    expect(readBlock(readDoc('README.md'), 'start-figures')).toBe(renderStartFigures(rows));
  });
});

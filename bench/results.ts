import { readFile, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';

/**
 * The results table of `npm run bench`: besides printing its own lines, each benchmark
 * reports its headline figures here, each next to the baseline measured in the same run and
 * the target it has, if any. bench/index.ts prints the rows as one table at the end, merges
 * them into bench/results.json (a benchmark's rows replace those of its last run) and renders
 * docs/benchmarks.md from that file.
 */
export interface ResultRow {
  figure: string;
  /** null: not measured (`note` says why). */
  value: number | null;
  unit: string;
  baseline: string | null;
  baselineValue: number | null;
  /** value / baselineValue. */
  ratio: number | null;
  target: string | null;
  /** null when the figure has no target or was not measured. */
  met: boolean | null;
  note: string | null;
}

/** A target: how it reads, and whether a value (and its ratio to the baseline) meets it. */
export interface Target {
  text: string;
  meets(value: number, ratio: number | null): boolean;
}

export const atLeast = (min: number, unit: string): Target => ({ text: `≥ ${number(min)} ${unit}`, meets: (v) => v >= min });
export const atMost = (max: number, unit: string): Target => ({ text: `≤ ${number(max)} ${unit}`, meets: (v) => v <= max });
export const below = (max: number, unit: string): Target => ({ text: `< ${number(max)} ${unit}`, meets: (v) => v < max });
/** At least this share of the baseline, e.g. 0.5 for "≥ 50% of the baseline". */
export const shareOfBaseline = (min: number): Target => ({
  text: `≥ ${Math.round(min * 100)}% of baseline`,
  meets: (_v, ratio) => ratio !== null && ratio >= min,
});

/** At least this multiple of the baseline, e.g. 1.7 for "≥ 1.7×". */
export const timesBaseline = (min: number): Target => ({ text: `≥ ${min}×`, meets: (_v, ratio) => ratio !== null && ratio >= min });

/** A rate as the benches print it: "12,345 events/s". */
export const eventsPerSecond = (n: number): string => `${Math.round(n).toLocaleString('en-US')} events/s`;

export interface Measured {
  figure: string;
  value: number;
  unit: string;
  baseline?: { name: string; value: number };
  target?: Target;
  note?: string;
}

const rows: ResultRow[] = [];

export function report({ figure, value, unit, baseline, target, note }: Measured): void {
  const ratio = baseline === undefined || baseline.value === 0 ? null : value / baseline.value;
  rows.push({
    figure,
    value,
    unit,
    baseline: baseline?.name ?? null,
    baselineValue: baseline?.value ?? null,
    ratio,
    target: target?.text ?? null,
    met: target === undefined || !Number.isFinite(value) ? null : target.meets(value, ratio),
    note: note ?? null,
  });
}

/** A figure (with its target, if any) this run did not measure, and why: a row without a number. */
export function notMeasured(figure: string, target: string | null, why: string): void {
  rows.push({ figure, value: null, unit: '', baseline: null, baselineValue: null, ratio: null, target, met: null, note: why });
}

export function resultRows(): readonly ResultRow[] {
  return rows;
}

/** The rows aligned in columns: figure, value, baseline (its value), ratio, target, met; notes after. */
export function formatTable(table: readonly ResultRow[]): string {
  const cells = table.map((r) => rowCells(r, 'NOT MET'));
  const header = TABLE_HEADER;
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) =>
    c
      .map((cell, i) => (i === 1 || i === 3 ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n') + '\n';
}

const TABLE_HEADER = ['figure', 'value', 'baseline', 'ratio', 'target', 'met', 'note'];

/** A row's cells as both tables show them, in TABLE_HEADER's order; `notMet` is how a missed target reads. */
function rowCells(r: ResultRow, notMet: string): string[] {
  return [
    r.figure,
    r.value === null ? 'not measured' : `${number(r.value)} ${r.unit}`,
    r.baseline === null ? '—' : `${r.baseline} (${number(r.baselineValue!)} ${r.unit})`,
    r.ratio === null ? '—' : number(r.ratio),
    r.target ?? '—',
    r.met === null ? '—' : r.met ? 'met' : notMet,
    r.note ?? '',
  ];
}

/** A row as bench/results.json keeps it: which benchmark measured it, when and on what. */
export interface StoredRow extends ResultRow {
  bench: string;
  /** ISO date of the run. */
  measuredAt: string;
  machine: string;
}

/** This machine in one line: cores, CPU model, memory, Node version. */
export function machineLine(): string {
  const cores = cpus();
  return `${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}`;
}

export async function readStoredRows(path: URL): Promise<StoredRow[]> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as StoredRow[];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** The stored rows with those of the benchmarks run now replaced by their new rows, in the benchmarks' order. */
export function mergeRows(stored: readonly StoredRow[], fresh: readonly StoredRow[], order: readonly string[]): StoredRow[] {
  const ran = new Set(fresh.map((r) => r.bench));
  const merged = [...stored.filter((r) => !ran.has(r.bench)), ...fresh];
  const rank = (bench: string) => (order.includes(bench) ? order.indexOf(bench) : order.length);
  return merged.map((row, i) => ({ row, i })).sort((a, b) => rank(a.row.bench) - rank(b.row.bench) || a.i - b.i).map(({ row }) => row);
}

export async function writeStoredRows(path: URL, rows: readonly StoredRow[]): Promise<void> {
  await writeFile(path, `${JSON.stringify(rows, null, 2)}\n`);
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** docs/benchmarks.md's generated part: a table per benchmark with its date and machine. */
export function renderResultsMarkdown(rows: readonly StoredRow[]): string {
  if (rows.length === 0) return 'No benchmark has been run yet: `npm run bench` writes this table.\n';
  const out: string[] = [];
  for (const bench of [...new Set(rows.map((r) => r.bench))]) {
    const own = rows.filter((r) => r.bench === bench);
    out.push(`### ${bench}`, '', `Measured ${own[0].measuredAt} on ${own[0].machine} (\`npm run bench -- ${bench}\`).`, '');
    out.push(`| ${TABLE_HEADER.join(' | ')} |`, '|---|---:|---|---:|---|---|---|');
    for (const r of own) out.push(`| ${rowCells(r, '**not met**').map(cell).join(' | ')} |`);
    out.push('');
  }
  return out.join('\n');
}

/** The README's line of `npm start`'s figures, from the start benchmark's last run. */
export function renderStartFigures(rows: readonly StoredRow[]): string {
  const start = rows.filter((r) => r.bench === 'start' && r.value !== null);
  const first = start.find((r) => r.figure.startsWith('first start'));
  const rss = start.find((r) => r.figure === 'RSS of npm start once caught up');
  if (!first) return 'Not measured yet: `npm run bench -- start` measures the first start on your machine.\n';
  const memory = rss ? `, ${number(rss.value!)} ${rss.unit} RSS once caught up` : '';
  return `Last measured ${first.measuredAt} on ${first.machine}: ${first.figure}, ${number(first.value!)} ${first.unit}${memory} ([all figures](docs/benchmarks.md)).\n`;
}

/** Thousands separated from 1,000 on, three significant digits below. */
function number(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Math.abs(x) >= 1000) return Math.round(x).toLocaleString('en-US');
  return Number(x.toPrecision(3)).toString();
}

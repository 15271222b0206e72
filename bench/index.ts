// `npm run bench -- NAME...`: runs the named benchmarks (all when none is named). Each prints
// its figures next to a baseline measured in the same run, so the ratios carry across machines,
// and reports its headline rows (bench/results.ts): the run ends with them as one table, merged
// into bench/results.json (each benchmark's rows replace those of its last run), from which
// docs/benchmarks.md's table is generated.
import { rewriteBlock } from '../infra/fs/generated-block.ts';
import { benchAnalogs } from './analogs.ts';
import { benchApi } from './api.ts';
import { benchBacktest } from './backtest.ts';
import { benchConsole } from './console.ts';
import { benchGrowth } from './growth.ts';
import { benchLog } from './log.ts';
import { benchPipeline } from './pipeline.ts';
import { benchPipelineKafka } from './pipeline-kafka.ts';
import { benchPush } from './push.ts';
import { benchRestore } from './restore.ts';
import { formatTable, machineLine, mergeRows, notMeasured, readStoredRows, renderResultsMarkdown, renderStartFigures, resultRows, writeStoredRows, type StoredRow } from './results.ts';
import { benchScale } from './scale.ts';
import { benchSoak } from './soak.ts';
import { benchStart } from './start.ts';
import { benchStore } from './store.ts';
import { benchStream } from './stream.ts';

const BENCHES: Record<string, () => Promise<void>> = {
  log: benchLog,
  analogs: benchAnalogs,
  store: benchStore,
  pipeline: benchPipeline,
  'pipeline-kafka': benchPipelineKafka,
  scale: benchScale,
  api: benchApi,
  start: benchStart,
  growth: benchGrowth,
  restore: benchRestore,
  push: benchPush,
  stream: benchStream,
  backtest: benchBacktest,
  console: benchConsole,
  soak: benchSoak,
};

const names = process.argv.slice(2).filter((a) => a !== '--');
const unknown = names.filter((n) => !(n in BENCHES));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}\n`);
  process.exit(2);
}
let failed = false;
const fresh: StoredRow[] = [];
const measuredAt = new Date().toISOString().slice(0, 10);
const machine = machineLine();
for (const name of names.length > 0 ? names : Object.keys(BENCHES)) {
  process.stdout.write(`\n== ${name}\n`);
  const before = resultRows().length;
  // One failing benchmark does not cost the others' rows; the exit code still says it failed.
  try {
    await BENCHES[name]();
  } catch (err) {
    failed = true;
    process.stderr.write(`benchmark ${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    notMeasured(`${name} benchmark`, null, `failed before reporting all its rows: ${err instanceof Error ? err.message : String(err)}`);
  }
  fresh.push(...resultRows().slice(before).map((row) => ({ ...row, bench: name, measuredAt, machine })));
}
process.stdout.write(`\n== results\n${formatTable(fresh)}`);
const resultsFile = new URL('./results.json', import.meta.url);
const rows = mergeRows(await readStoredRows(resultsFile), fresh, Object.keys(BENCHES));
await writeStoredRows(resultsFile, rows);
await rewriteBlock(new URL('../docs/benchmarks.md', import.meta.url), 'bench-results', renderResultsMarkdown(rows));
await rewriteBlock(new URL('../README.md', import.meta.url), 'start-figures', renderStartFigures(rows));
process.stdout.write('merged into bench/results.json, docs/benchmarks.md and the README\n');
process.exit(failed ? 1 : 0);

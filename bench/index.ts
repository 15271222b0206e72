// `npm run bench -- NAME...`: runs the named benchmarks (all when none is named). Each prints
// its figures next to a baseline measured in the same run, so the ratios carry across machines.
import { benchAnalogs } from './analogs.ts';
import { benchApi } from './api.ts';
import { benchBacktest } from './backtest.ts';
import { benchLog } from './log.ts';
import { benchPipeline } from './pipeline.ts';
import { benchPush } from './push.ts';
import { benchStore } from './store.ts';
import { benchStream } from './stream.ts';

const BENCHES: Record<string, () => Promise<void>> = {
  log: benchLog,
  analogs: benchAnalogs,
  store: benchStore,
  pipeline: benchPipeline,
  api: benchApi,
  push: benchPush,
  stream: benchStream,
  backtest: benchBacktest,
};

const names = process.argv.slice(2).filter((a) => a !== '--');
const unknown = names.filter((n) => !(n in BENCHES));
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}\n`);
  process.exit(2);
}
for (const name of names.length > 0 ? names : Object.keys(BENCHES)) {
  process.stdout.write(`\n== ${name}\n`);
  await BENCHES[name]();
}
process.exit(0);

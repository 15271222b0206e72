import { spawn } from 'node:child_process';
import type { LoadSpec } from './api-load.ts';
import { LoadClient, summarise, type Stats } from './load-client.ts';
import { atMost, below, notMeasured, report, shareOfBaseline } from './results.ts';
import { processMemory, startService, untilCaughtUp, type Service } from './service.ts';
import { waitFor } from '../infra/wait.ts';

const DAYS = process.env.BENCH_START_DAYS ?? '7';
const KEYS = 1024;
const CONNECTIONS = 16;
const WARMUP_MS = 1000;
const DURATION_MS = 5000;
const CATCH_UP_TIMEOUT_MS = 60 * 60_000;
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/**
 * `npm start` on an empty data dir, as a user runs it (a child process, the default seven
 * days): the time until it has seeded its world and caught up with it (health `ok`, measured
 * after the seeding ended), its resident memory then against an idle node process, and the
 * token snapshot's rate once caught up. Then a second first start, whose token snapshot is
 * loaded while it catches up: its rate against the caught-up one, and its p99 at half that.
 */
export async function benchStart(): Promise<void> {
  const client = new LoadClient();
  try {
    const idle = await idleNodeRss();
    const first = await startService(KEYS, { TQA_SIM_DAYS: DAYS });
    let firstStartMs: number;
    let memory: { rss: number; peak: number };
    let caughtUp: Stats;
    try {
      const started = performance.now();
      await untilCaughtUp(first, CATCH_UP_TIMEOUT_MS);
      firstStartMs = performance.now() - started;
      memory = await first.memory();
      caughtUp = summarise(await client.run(tokenLoad(first, await tokenPaths(first))));
    } finally {
      await first.stop();
    }
    const out = (line: string) => process.stdout.write(`${line}\n`);
    out(`${DAYS} simulated day(s): seeded and caught up in ${(firstStartMs / 1000).toFixed(1)} s`);
    out(`RSS once caught up ${(memory.rss / MiB).toFixed(0)} MiB, peak ${(memory.peak / MiB).toFixed(0)} MiB; idle node process ${(idle / MiB).toFixed(0)} MiB`);
    out(`token snapshot, caught up: ${Math.round(caughtUp.rps)} req/s, p50 ${caughtUp.p50.toFixed(2)} ms, p99 ${caughtUp.p99.toFixed(2)} ms`);

    const second = await startService(KEYS, { TQA_SIM_DAYS: DAYS });
    let during: Stats | null = null;
    let duringHalf: Stats | null = null;
    let unmeasured = 'the service had caught up before the load began';
    const half = Math.max(1, Math.floor(caughtUp.rps / 2));
    try {
      const paths = await tokenPaths(second);
      // From the lag itself: under load the store's health probe can time out, making the status `degraded`.
      const catchingUp = async () => (await second.health())?.caughtUp === false;
      // A figure counts only if the whole load ran during the catch-up.
      if (await catchingUp()) {
        unmeasured = 'the catch-up ended before the load did';
        const rate = summarise(await client.run(tokenLoad(second, paths)));
        if (await catchingUp()) during = rate;
        const latency = summarise(await client.run({ ...tokenLoad(second, paths), rate: half }));
        if (await catchingUp()) duringHalf = latency;
      }
    } finally {
      await second.stop();
    }
    if (during) out(`token snapshot during a catch-up: ${Math.round(during.rps)} req/s, p99 ${during.p99.toFixed(2)} ms`);
    if (duringHalf) out(`token snapshot during a catch-up at ${half} req/s: p50 ${duringHalf.p50.toFixed(2)} ms, p99 ${duringHalf.p99.toFixed(2)} ms`);

    report({ figure: `first start: ${DAYS} day(s) seeded and caught up`, value: firstStartMs / 1000, unit: 's', target: below(60, 's') });
    report({
      figure: 'RSS of npm start once caught up',
      value: memory.rss / GiB,
      unit: 'GiB',
      baseline: { name: 'idle node process', value: idle / GiB },
      target: atMost(1, 'GiB'),
    });
    report({ figure: 'peak RSS of npm start during the first start', value: memory.peak / GiB, unit: 'GiB', baseline: { name: 'idle node process', value: idle / GiB } });
    const caughtUpRate = { name: 'caught up', value: caughtUp.rps };
    // The load starts once a token answers: early in the catch-up, on a store that holds its first hours.
    const early = 'loaded early in the catch-up';
    if (during) report({ figure: 'GET token snapshot during a catch-up', value: during.rps, unit: 'req/s', baseline: caughtUpRate, target: shareOfBaseline(0.5), note: errors(during) ?? early });
    else notMeasured('GET token snapshot during a catch-up', shareOfBaseline(0.5).text, unmeasured);
    const p99Figure = `GET token snapshot p99 during a catch-up, at ${half} req/s (half the caught-up rate)`;
    if (duringHalf) report({ figure: p99Figure, value: duringHalf.p99, unit: 'ms', target: atMost(50, 'ms'), note: errors(duringHalf) ?? early });
    else notMeasured(p99Figure, atMost(50, 'ms').text, unmeasured);
  } finally {
    client.close();
  }
}

/** Token snapshot paths, once the service lists tokens and answers for the first of them with a bench key. */
async function tokenPaths(service: Service): Promise<string[]> {
  const key = service.keys[0];
  return waitFor(
    async () => {
      const listed = await service.get('/v1/quant/tokens?limit=64', key);
      const ids = listed?.status === 200 ? (listed.body as { data: { token_id: string }[] }).data.map((t) => t.token_id) : [];
      return ids.length > 0 && (await service.get(`/v1/quant/token/${ids[0]}`, key))?.status === 200 && ids.map((id) => `/v1/quant/token/${id}`);
    },
    'a token snapshot to answer',
    CATCH_UP_TIMEOUT_MS,
  );
}

function tokenLoad(service: Service, paths: string[]): LoadSpec {
  return { base: service.base, method: 'GET', paths, keys: service.keys, connections: CONNECTIONS, warmupMs: WARMUP_MS, durationMs: DURATION_MS };
}

/** RSS of a node process that does nothing, the floor of any node service's. */
async function idleNodeRss(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  try {
    await sleep(1000);
    return (await processMemory(child)).rss;
  } finally {
    child.kill();
  }
}

const errors = (s: Stats) => (s.errors === 0 ? undefined : `${s.errors} errors (${s.statuses})`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

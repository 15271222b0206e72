import {
  allocateCandidateColumns,
  analogsStateFromColumns,
  queryAnalogs,
  type AnalogCandidateColumns,
  type AnalogQuery,
  type AnalogsState,
} from '../processors/quant-engine/analogs/analogs.ts';
import { ANALOG_DIMS as D, standardiseInto, writeRawVector, type AnalogInputs } from '../processors/quant-engine/analogs/vector.ts';
import { AnalogWorker } from '../processors/quant-engine/analogs/worker.ts';
import { seededRandom } from '../infra/feeds/sim/prng.ts';
import { atMost, report } from './results.ts';
import { percentile } from './load-client.ts';

/**
 * kNN analogs over 10^5 and 10^6 candidates: the index in-process, the same index through
 * the worker thread (round trip included), and the baseline, a plain scan of a Float32Array
 * of the same standardised vectors keeping the k best (no eligibility checks, no ties).
 * Candidates come from clusters of setups, as real snapshots do, with a few nulls.
 */

const SIZES = [100_000, 1_000_000];
const K = 40;
const CLUSTERS = 300;
const TOKENS = 5_000;
const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);
const SPAN_MS = 365 * DAY;
const MISSING_RATE = 0.03;
/** The target: p50 per query at 10^6 candidates, exact. */
const TARGET = atMost(5, 'ms');

function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

interface Cluster {
  centre: number[];
  spread: number[];
}

function makeClusters(random: () => number): Cluster[] {
  return Array.from({ length: CLUSTERS }, () => ({
    centre: [100 * random(), 100 * random(), 100 * random(), 100 * random(), 0.4 * gaussian(random), 3 * random(), 3 + 4 * random()],
    spread: [3 + 10 * random(), 3 + 10 * random(), 3 + 10 * random(), 3 + 10 * random(), 0.02 + 0.1 * random(), 0.1 + 0.5 * random(), 0.1 + 0.4 * random()],
  }));
}

function sampleInputs(random: () => number, clusters: Cluster[]): AnalogInputs {
  const c = clusters[Math.floor(random() * clusters.length)];
  const v = c.centre.map((x, d) => x + c.spread[d] * gaussian(random));
  const maybe = (x: number): number | null => (random() < MISSING_RATE ? null : x);
  const score = (x: number): number | null => maybe(Math.min(100, Math.max(0, x)));
  return {
    momentum: score(v[0]),
    crowding: score(v[1]),
    earlyQuality: score(v[2]),
    narrativeVelocity: score(v[3]),
    priceChange1h: maybe(Math.expm1(v[4])),
    volumeAcceleration: maybe(Math.max(0, v[5])),
    liquidityUsd: maybe(10 ** v[6]),
  };
}

function makeColumns(n: number, random: () => number, clusters: Cluster[]): AnalogCandidateColumns {
  const cols = allocateCandidateColumns(n);
  for (let i = 0; i < n; i++) {
    cols.snapshotId.push(`snap_${i}`);
    cols.tokenId.push(`tk_${Math.floor(random() * TOKENS)}`);
    cols.ts[i] = T0 + Math.floor(random() * SPAN_MS);
    cols.resolvedAt[i] = cols.ts[i] + DAY;
    cols.return24h[i] = Math.expm1(0.3 * gaussian(random));
    cols.maxDrawdown24h[i] = -Math.abs(0.2 * gaussian(random));
    writeRawVector(sampleInputs(random, clusters), cols.raw, i * D);
  }
  return cols;
}

function makeQueries(count: number, random: () => number, clusters: Cluster[]): AnalogQuery[] {
  return Array.from({ length: count }, () => ({
    tokenId: `tk_${Math.floor(random() * TOKENS)}`,
    ts: T0 + SPAN_MS + 2 * DAY,
    inputs: sampleInputs(random, clusters),
  }));
}

/** The baseline: every standardised vector's squared distance, keeping the k best in a sorted array. */
function bruteForce(points: Float32Array, n: number, q: Float64Array, k: number): number {
  const best = new Float64Array(k).fill(Infinity);
  for (let i = 0; i < n; i++) {
    const o = i * D;
    let s = 0;
    for (let d = 0; d < D; d++) {
      const x = points[o + d] - q[d];
      s += x * x;
    }
    if (s >= best[k - 1]) continue;
    let j = k - 1;
    while (j > 0 && best[j - 1] > s) {
      best[j] = best[j - 1];
      j--;
    }
    best[j] = s;
  }
  return best[k - 1];
}

function timeEach<T>(items: T[], run: (item: T) => unknown): number[] {
  return items.map((item) => {
    const started = performance.now();
    run(item);
    return performance.now() - started;
  });
}

async function timeEachAsync<T>(items: T[], run: (item: T) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (const item of items) {
    const started = performance.now();
    await run(item);
    out.push(performance.now() - started);
  }
  return out;
}

function standardisedPoints(state: AnalogsState, cols: AnalogCandidateColumns): Float32Array {
  const points = new Float32Array(cols.count * D);
  for (let i = 0; i < cols.count; i++) standardiseInto(state.standardisation, cols.raw, i * D, points, i * D);
  return points;
}

function standardisedQuery(state: AnalogsState, query: AnalogQuery): Float64Array {
  const raw = new Float64Array(D);
  writeRawVector(query.inputs, raw, 0);
  const q = new Float64Array(D);
  standardiseInto(state.standardisation, raw, 0, q, 0);
  return q;
}

const fmt = (ms: number): string => ms.toFixed(3).padStart(9);

export async function benchAnalogs(): Promise<void> {
  const random = seededRandom(20_240_101);
  const clusters = makeClusters(random);
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  out(`k = ${K}, ${CLUSTERS} clusters, ${TOKENS} tokens; times in ms`);
  out(`${'candidates'.padEnd(11)} ${'build'.padStart(9)} ${'index p50'.padStart(9)} ${'index p99'.padStart(9)} ${'worker p50'.padStart(10)} ${'worker p99'.padStart(10)} ${'scan p50'.padStart(9)}  scan/index  scan/worker`);
  for (const n of SIZES) {
    const cols = makeColumns(n, random, clusters);
    const started = performance.now();
    const state = analogsStateFromColumns(cols);
    const build = performance.now() - started;
    const queries = makeQueries(600, random, clusters);
    const warm = queries.slice(0, 100);
    const measured = queries.slice(100);

    timeEach(warm, (q) => queryAnalogs(state, q, K));
    const index = timeEach(measured, (q) => queryAnalogs(state, q, K));

    const points = standardisedPoints(state, cols);
    const scanQueries = measured.slice(0, n >= 1_000_000 ? 60 : 200).map((q) => standardisedQuery(state, q));
    timeEach(scanQueries.slice(0, 5), (q) => bruteForce(points, n, q, K));
    const scan = timeEach(scanQueries, (q) => bruteForce(points, n, q, K));

    const worker = await AnalogWorker.start(cols); // transfers cols' buffers: the last use of them
    try {
      await timeEachAsync(warm, (q) => worker.queryAnalogs(q, K));
      const viaWorker = await timeEachAsync(measured, (q) => worker.queryAnalogs(q, K));
      const [i50, w50, s50] = [percentile(index, 0.5), percentile(viaWorker, 0.5), percentile(scan, 0.5)];
      out(
        `${String(n).padEnd(11)} ${fmt(build)} ${fmt(i50)} ${fmt(percentile(index, 0.99))} ${fmt(w50).padStart(10)} ${fmt(percentile(viaWorker, 0.99)).padStart(10)} ${fmt(s50)}  ${(s50 / i50).toFixed(1).padStart(9)}x  ${(s50 / w50).toFixed(1).padStart(10)}x`,
      );
      const baseline = { name: 'Float32Array scan p50', value: s50 };
      const target = n === 1_000_000 ? TARGET : undefined;
      const size = n.toLocaleString('en-US');
      report({ figure: `analogs p50, ${size} candidates, in process`, value: i50, unit: 'ms', baseline, target });
      report({ figure: `analogs p50, ${size} candidates, through the worker`, value: w50, unit: 'ms', baseline, target });
    } finally {
      await worker.close();
    }
  }
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analogsStateFromColumns, queryAnalogs, type AnalogCandidateColumns, type AnalogQuery, type AnalogsState } from './analogs.ts';
import { ANALOG_DIMS as D, writeRawVector } from './vector.ts';
import { AnalogWorker } from './worker.ts';

const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);
const N = 500;

function columns(): AnalogCandidateColumns {
  let seed = 9;
  const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const raw = new Float64Array(N * D);
  for (let i = 0; i < N; i++) {
    writeRawVector(
      {
        momentum: random() * 100,
        crowding: random() * 100,
        earlyQuality: i % 7 === 0 ? null : random() * 100,
        narrativeVelocity: random() * 100,
        priceChange1h: random() - 0.5,
        volumeAcceleration: random() * 3,
        liquidityUsd: 10 ** (3 + 3 * random()),
      },
      raw,
      i * D,
    );
  }
  return {
    count: N,
    snapshotId: Array.from({ length: N }, (_, i) => `snap_${i}`),
    tokenId: Array.from({ length: N }, (_, i) => `tk_${i % 20}`),
    ts: Float64Array.from({ length: N }, (_, i) => T0 + i * 3_600_000),
    resolvedAt: Float64Array.from({ length: N }, (_, i) => T0 + i * 3_600_000 + DAY),
    return24h: Float64Array.from({ length: N }, (_, i) => (i % 11 === 0 ? NaN : (i % 5) / 10 - 0.2)),
    maxDrawdown24h: Float64Array.from({ length: N }, (_, i) => -(i % 4) / 10),
    raw,
  };
}

describe('analogs worker', () => {
  let worker: AnalogWorker;
  let local: AnalogsState;

  beforeAll(async () => {
    local = analogsStateFromColumns(columns());
    worker = await AnalogWorker.start(columns());
  });
  afterAll(async () => {
    await worker.close();
  });

  it('answers as the index in-process does, concurrent queries each to its own caller', async () => {
    const queries: AnalogQuery[] = Array.from({ length: 20 }, (_, i) => ({
      tokenId: `tk_${i}`,
      ts: T0 + (i + 2) * 20 * 3_600_000, // mid-history too: the time rule applies in the worker
      inputs: { momentum: i * 5, crowding: 50, earlyQuality: i % 3 === 0 ? null : 40, narrativeVelocity: 60, priceChange1h: 0.1, volumeAcceleration: 1, liquidityUsd: 50_000 },
    }));
    const answers = await Promise.all(queries.map((q, i) => worker.queryAnalogs(q, 1 + i * 5)));
    answers.forEach((a, i) => expect(a).toEqual(queryAnalogs(local, queries[i], 1 + i * 5)));
    expect(answers.some((a) => a.neighbours.length > 0 && a.neighbours.length < 1 + 5 * 19)).toBe(true);
  });

  it('rejects a bad query with the reason, and keeps serving', async () => {
    const query: AnalogQuery = { tokenId: 'tk_1', ts: T0 + 30 * DAY, inputs: { momentum: 1, crowding: 2, earlyQuality: 3, narrativeVelocity: 4, priceChange1h: 0, volumeAcceleration: 0, liquidityUsd: 1 } };
    await expect(worker.queryAnalogs(query, 0)).rejects.toThrow(/k must be an integer from 1 to 100/);
    expect((await worker.queryAnalogs(query, 3)).neighbours).toHaveLength(3);
  });

  it('fails pending and later queries once closed', async () => {
    const w = await AnalogWorker.start(columns());
    await w.close();
    const query: AnalogQuery = { tokenId: 'tk_1', ts: T0, inputs: { momentum: 1, crowding: 2, earlyQuality: 3, narrativeVelocity: 4, priceChange1h: 0, volumeAcceleration: 0, liquidityUsd: 1 } };
    await expect(w.queryAnalogs(query, 3)).rejects.toThrow(/closed/);
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CAUGHT_UP_LAG, CatchUpMonitor, catchUpProgress, estimatedRemaining, type CatchUpStatus, type StageProgress } from '../../cli/catch-up.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { sink } from '../helpers/sink.ts';
import { waitFor } from '../../infra/wait.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('catch-up monitor', () => {
  it('counts per stage the records its group has not committed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-catch-up-'));
    dirs.push(dir);
    const { log } = await openEmbedded(dir);
    const topic = TOPICS.tokens.name;
    const records = CAUGHT_UP_LAG + 500;
    await log.append(topic, Array.from({ length: records }, (_, i) => ({ key: `tk_${i % 7}`, value: Buffer.from(String(i)) })));

    const measure = async (): Promise<CatchUpStatus> => {
      const statuses: CatchUpStatus[] = [];
      const monitor = new CatchUpMonitor({ log, logger: silentLogger });
      monitor.start((s) => statuses.push(s));
      await waitFor(() => statuses.length > 0, 'a measurement');
      await monitor.stop();
      return statuses[0];
    };
    const lagOf = (status: CatchUpStatus, name: string) => status.stages.find((s) => s.name === name)!.lagRecords;

    // The quant engine and the tokens projection both read the topic; nothing is committed yet.
    const before = await measure();
    expect(lagOf(before, 'quant-engine')).toBe(records);
    expect(lagOf(before, 'projection.tokens')).toBe(records);
    expect(before.caughtUp).toBe(false);

    // The projection's group stores one batch of 600 records and commits it.
    const consumer = log.consumer({ groupId: 'projection.tokens', topics: [topic], fromBeginning: true, maxBatchRecords: 600 });
    let handled = 0;
    const running = consumer.run(async (batch) => {
      handled += batch.records.length;
    });
    await waitFor(() => handled > 0, 'a batch');
    await consumer.stop();
    await running;
    const after = await measure();
    expect(lagOf(after, 'projection.tokens')).toBe(records - handled);
    expect(lagOf(after, 'quant-engine')).toBe(records);
    expect(after.lagRecords).toBe(before.lagRecords - handled);
    expect(after.doneRecords).toBe(before.doneRecords + handled);
    await log.close();
  });

  it('is not caught up while history is being seeded, whatever the lags of the log so far', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-catch-up-'));
    dirs.push(dir);
    const { log } = await openEmbedded(dir);
    let seeding = true;
    const statuses: CatchUpStatus[] = [];
    const monitor = new CatchUpMonitor({ log, logger: silentLogger, intervalMs: 10, seeding: () => seeding });
    monitor.start((s) => statuses.push(s));
    await waitFor(() => statuses.length > 0, 'a measurement');
    expect(statuses[0]).toMatchObject({ caughtUp: false, lagRecords: 0 });
    seeding = false;
    await waitFor(() => statuses.at(-1)!.caughtUp, 'caught up once seeded');
    await monitor.stop();
    await log.close();
  });

  it('counts in what is left the records a processor is still to write, at the rate it wrote so far', () => {
    // The engine covered 25 of its 100 inputs and wrote 50 records so far: 200 expected in all.
    // Public events covered 40 of those 50 and wrote 20: 20 x 200 / 40 = 100 expected.
    const records: Record<string, number> = { ingest: 100, quant: 50, public: 20 };
    const stage = (group: string, topics: string[], outputs: string[], done: number): StageProgress => ({
      group,
      topics,
      outputs,
      done,
      lagRecords: topics.reduce((sum, t) => sum + records[t], 0) - done,
    });
    const engine = stage('engine', ['ingest'], ['quant'], 25);
    const publicEvents = stage('public-events', ['quant'], ['public'], 40);
    const projections = [stage('projection.quant', ['quant'], [], 45), stage('projection.public', ['public'], [], 15)];
    const remaining = estimatedRemaining([engine, publicEvents, ...projections], (t) => records[t]);
    const lags = 75 + 10 + 5 + 5;
    // public-events and projection.quant each await 150 more quant records; projection.public 80 more public ones.
    expect(remaining).toBe(lags + 150 + 150 + 80);

    // Before the engine covered anything, nothing says how much it will write: its topic counts as it is (50),
    // and public events, having covered 40 of those 50, are to write 20 x 50 / 40 = 25, 5 more.
    const idle = estimatedRemaining([{ ...engine, done: 0, lagRecords: 100 }, publicEvents, ...projections], (t) => records[t]);
    expect(idle).toBe(100 + 10 + 5 + 5 + 5);
  });

  it('prints the catch-up while it runs and one line when it is done', () => {
    const out = sink();
    const show = catchUpProgress(out.stream);
    const status = (lag: number, done: number): CatchUpStatus => ({
      caughtUp: lag <= CAUGHT_UP_LAG,
      lagRecords: lag,
      doneRecords: done,
      remainingRecords: lag,
      timeLeftSeconds: lag > CAUGHT_UP_LAG ? 75 : 0,
      mostBehind: lag > CAUGHT_UP_LAG ? 'quant-engine' : null,
      stages: [
        { name: 'quant-engine', lagRecords: lag, ratePerSecond: 120 },
        { name: 'projection.tokens', lagRecords: 0, ratePerSecond: null },
      ],
      measuredAt: 0,
    });
    show(status(9_000, 1_000));
    show(status(10, 10_000));
    show(status(5, 10_005));
    const lines = out.text().trim().split('\n');
    expect(lines[0]).toMatch(/^catching up .* 0 records .*ETA 1:15  lag 9000, most behind: quant-engine at 120\/s$/);
    expect(lines.at(-1)).toMatch(/caught up \(lag 10 records\)$/);
    expect(lines).toHaveLength(2); // quiet once caught up
  });
});

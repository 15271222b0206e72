import { describe, expect, it } from 'vitest';
import type { OutputRecord } from '../runtime/processor.ts';
import { deterministicId } from '../runtime/runtime.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { quantEngine } from './engine.ts';
import { evmAddress, HOUR, MIN, post, T0, tick, tokenMeta } from './tokens/fixtures.ts';

function harness() {
  const state = quantEngine.createState(0);
  const outputs: OutputRecord[] = [];
  const rejected: string[] = [];
  let offset = 0;
  const ctx = { eventTime: 0, watermark: 0, id: deterministicId, emit: (o: OutputRecord) => outputs.push(o), reject: (r: string) => rejected.push(r) };
  const feed = (topic: string, value: { ts: number }) =>
    quantEngine.process(state, { topic, partition: 0, offset: offset++, key: null, timestamp: value.ts, value }, ctx);
  return { state, outputs, rejected, feed };
}

describe('quant engine', () => {
  it('drops a post or tick delivered twice, so repeats change no window', () => {
    const once = harness();
    const twice = harness();
    const meta = tokenMeta('tk_a', 'AAA', T0, { address: evmAddress(1) });
    const events: [string, { ts: number }][] = [
      [TOPICS.tokens.name, meta],
      [TOPICS.market.name, tick('tk_a', T0 + 1_000, 1)],
      [TOPICS.posts.name, post('p1', 'au_1', T0 + 2_000, ['$AAA'])],
      [TOPICS.market.name, tick('tk_a', T0 + 3_000, 1.1)],
    ];
    for (const [topic, value] of events) once.feed(topic, value);
    for (const [topic, value] of events) twice.feed(topic, value);
    for (const [topic, value] of events.slice(1)) twice.feed(topic, value); // redelivered
    const later = tick('tk_a', T0 + 10 * 60_000, 1.2);
    once.feed(TOPICS.market.name, later);
    twice.feed(TOPICS.market.name, later);
    expect(JSON.stringify(twice.outputs)).toBe(JSON.stringify(once.outputs));
    expect(once.outputs.filter((o) => o.topic === TOPICS.mentions.name)).toHaveLength(1);
    expect(twice.state.repeatedPosts.groups.get('au_1')?.keys).toEqual(['p1']);
    expect(twice.state.repeatedTicks.groups.get('tk_a')?.keys).toEqual([String(T0 + 1_000), String(T0 + 3_000), String(T0 + 10 * 60_000)]);
  });

  it('dead-letters a refused cohort command with its reason and keeps the outputs of the advance', () => {
    const h = harness();
    h.feed(TOPICS.tokens.name, tokenMeta('tk_a', 'AAA', T0, { address: evmAddress(1) }));
    h.feed(TOPICS.market.name, tick('tk_a', T0 + 1_000, 1));
    const before = h.outputs.length;
    h.feed(TOPICS.cohortCommands.name, {
      commandId: 'cmd_1',
      action: 'delete',
      cohortId: 'cohort_missing',
      name: null,
      ownerKeyId: 'key_1',
      teamId: null,
      members: [],
      ts: T0 + 11 * 60_000,
    } as { ts: number });
    expect(h.rejected).toHaveLength(1);
    expect(h.rejected[0]).toMatch(/cohort command refused/);
    // The snapshots of the grid times passed before the command are still emitted.
    expect(h.outputs.slice(before).some((o) => o.topic === TOPICS.features.name)).toBe(true);
  });

  it('joins as of each grid time: what the joined modules have due by b is out before the snapshots of b', () => {
    const h = harness();
    h.feed(TOPICS.tokens.name, tokenMeta('tk_a', 'AAA', T0, { address: evmAddress(1) }));
    h.feed(TOPICS.market.name, tick('tk_a', T0 + 1_000, 1));
    h.feed(TOPICS.posts.name, post('p1', 'au_1', T0 + 2_000, ['$AAA']));
    // The next event comes three hours later: one advance passes hour boundaries and grid times.
    h.feed(TOPICS.market.name, tick('tk_a', T0 + 3 * HOUR + MIN, 1.1));
    const joined = new Set<string>([TOPICS.authorMetrics.name, TOPICS.narratives.name, TOPICS.cohorts.name]);
    const hourly = h.outputs.filter((o) => joined.has(o.topic) && o.timestamp > T0 + 2_000);
    const snapshots = h.outputs.filter((o) => o.topic === TOPICS.features.name && o.timestamp > T0);
    // Narrative buckets close on the hours; the token's hourly snapshots fall 5 minutes after them.
    expect(hourly.filter((o) => o.topic === TOPICS.narratives.name).map((o) => o.timestamp)).toEqual([T0 + HOUR, T0 + 2 * HOUR, T0 + 3 * HOUR]);
    expect(snapshots.map((o) => o.timestamp)).toEqual([T0 + 5 * MIN, T0 + HOUR + 5 * MIN, T0 + 2 * HOUR + 5 * MIN]);
    for (const snapshot of snapshots) {
      const at = h.outputs.indexOf(snapshot);
      // Every joined record due by the snapshot's time came before it; none due later did.
      for (const record of hourly) expect(h.outputs.indexOf(record) < at, `${record.topic} at ${record.timestamp} against the snapshot at ${snapshot.timestamp}`).toBe(record.timestamp <= snapshot.timestamp);
    }
  });
});

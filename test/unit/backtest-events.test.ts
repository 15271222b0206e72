import { describe, expect, it } from 'vitest';
import { eventsPartsOf, joinEvents, splitEvents } from '../../projections/read-models/backtest-events.ts';

const result = (n: number) => ({ n, hit_rate: 0.5, events: Array.from({ length: n }, (_, i) => ({ token_id: `tk_${i}`, return: i / 10, note: 'é'.repeat(i % 7) })), warnings: [] });

describe("a result's events in parts", () => {
  it('splits into parts under the byte limit and joins back to the same result', () => {
    const whole = result(500);
    const { rest, parts } = splitEvents(whole, 4_096);
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(4_096);
    expect(eventsPartsOf(rest)).toBe(parts.length);
    expect(JSON.parse(rest)).not.toHaveProperty('events');
    expect(JSON.parse(joinEvents(rest, parts))).toEqual({ n: 500, hit_rate: 0.5, warnings: [], events: whole.events });
  });

  it('keeps a result without events as one empty part', () => {
    const { rest, parts } = splitEvents(result(0));
    expect(parts).toEqual(['[]']);
    expect(JSON.parse(joinEvents(rest, parts))).toEqual({ n: 0, hit_rate: 0.5, warnings: [], events: [] });
  });

  it('says a result recorded with its events has no parts', () => {
    expect(eventsPartsOf(JSON.stringify(result(3)))).toBeNull();
  });
});

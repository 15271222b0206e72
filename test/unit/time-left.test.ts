import { describe, expect, it } from 'vitest';
import { RATE_WINDOW_MS, secondsLeft, SmoothedEnd, StageRates } from '../../cli/time-left.ts';

describe('time left of a catch-up', () => {
  it('is the records left at the rate all stages covered records, unknown without a rate, 0 with none left', () => {
    expect(secondsLeft(120_000, 4_000)).toBe(30);
    expect(secondsLeft(120_000, null)).toBeNull();
    expect(secondsLeft(0, null)).toBe(0);
  });
});

describe('stage rates', () => {
  const engineAt = (rates: StageRates, at: number, done: number) => rates.add(at, new Map([['quant-engine', done]]));

  it('measure each stage from its count a window ago to now, once that spans 10 s', () => {
    const rates = new StageRates();
    engineAt(rates, 0, 0);
    engineAt(rates, 5_000, 50_000);
    expect(rates.rate('quant-engine')).toBeNull(); // one checkpoint's jump is not a rate
    engineAt(rates, 10_000, 100_000);
    expect(rates.rate('quant-engine')).toBe(10_000);
    // Then the engine slows to 1k/s: once the window has passed, the fast start is forgotten.
    for (let t = 20_000; t <= 10_000 + RATE_WINDOW_MS + 10_000; t += 10_000) engineAt(rates, t, 100_000 + (t - 10_000));
    expect(rates.rate('quant-engine')).toBe(1_000);
    expect(rates.rate('projection.tokens')).toBeNull();
  });

  it('keep a rate for a stage whose count moves less often than the window, falling while it does not move', () => {
    const rates = new StageRates();
    // Checkpoints every 90 s, 90k records each: 1k/s.
    for (let t = 0; t <= 180_000; t += 2_000) engineAt(rates, t, Math.floor(t / 90_000) * 90_000);
    expect(rates.rate('quant-engine')).toBe(1_000);
    engineAt(rates, 225_000, 180_000);
    expect(rates.rate('quant-engine')).toBe(90_000_000 / 135_000);
  });
});

describe('the shown end', () => {
  it('moves a share of the way to each new estimate and restarts when the estimate is unknown', () => {
    const end = new SmoothedEnd();
    expect(end.update(0, 100)).toBe(100);
    // 2 s later the estimate jumps to 200 s left (an end at 202 s): the shown end moves a
    // quarter of the way from 100 s, to 125.5 s, which is 123.5 s from now.
    expect(end.update(2_000, 200)).toBe(123.5);
    expect(end.update(4_000, null)).toBeNull();
    expect(end.update(6_000, 50)).toBe(50);
  });
});

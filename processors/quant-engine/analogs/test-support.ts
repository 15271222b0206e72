import type { AnalogInputs } from './vector.ts';

/** Three or four levels per component, so equal vectors (ties at every distance) and nulls both occur often. */
export function randomInputs(random: () => number): AnalogInputs {
  const pick = <T,>(x: T): T | null => (random() < 0.1 ? null : x);
  const level = (n: number): number => Math.floor(random() * n);
  return {
    momentum: pick(level(3) * 50),
    crowding: pick(level(3) * 50),
    earlyQuality: pick(level(4) * 25),
    narrativeVelocity: pick(level(3) * 50),
    priceChange1h: pick(level(3) / 10 - 0.1),
    volumeAcceleration: pick(level(3)),
    liquidityUsd: pick(10 ** (3 + level(3))),
  };
}

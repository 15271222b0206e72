import { TOPICS } from '../schemas/catalogue.ts';
import { SCORE_NAMES } from '../schemas/records/primitives.ts';
import type { Signal } from '../schemas/records/quant-signals.ts';
import { defineProjection } from './runtime/projection.ts';
import type { SignalRow } from './tables/quant.ts';

/** A signal record as its signals row; market and score columns are the values at fire time. */
export function signalRow(signal: Signal): SignalRow {
  const row: Record<string, string | number | null> = {
    signal_id: signal.signalId,
    version: signal.version,
    type: signal.type,
    rule_version: signal.ruleVersion,
    status: signal.status,
    token_id: signal.tokenId,
    fired_at: signal.firedAt,
    ended_at: signal.endedAt,
    strength: signal.strength,
    market_cap_usd: signal.features.market_cap_usd ?? null,
    liquidity_usd: signal.features.liquidity_usd ?? null,
  };
  for (const name of SCORE_NAMES) row[name] = signal.scores[name] ?? null;
  row.record = JSON.stringify(signal);
  return row as SignalRow;
}

/** Every signal, its end record replacing its fire record. */
export const signalsProjection = defineProjection({
  name: 'signals',
  topics: [TOPICS.signals.name],
  tables: ['signals'],
  toRows: (signal) => [{ table: 'signals', row: signalRow(signal) }],
});

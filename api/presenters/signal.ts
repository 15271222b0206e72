import type { z } from 'zod';
import type { TokenRow } from '../../projections/tables.ts';
import { SCORE_NAMES } from '../../schemas/records/primitives.ts';
import type { QuantScoresSchema } from '../../schemas/records/quant-scores.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { DISCLAIMER, header, iso } from '../schemas/common.ts';
import type { SignalFiringSchema, SignalSchema } from '../schemas/signals.ts';
import { presentTokenOf } from './token.ts';

type Scores = z.input<typeof QuantScoresSchema>;

/** The compact signal (spec 2.4 without scores, reasons, analogs and token). */
export function presentFiring(signal: Signal): z.input<typeof SignalFiringSchema> {
  return {
    ...header('signal'),
    id: signal.signalId,
    type: signal.type,
    label: signal.label,
    ruleVersion: signal.ruleVersion,
    status: signal.status,
    firedAt: iso(signal.firedAt),
    endedAt: iso(signal.endedAt),
    endReason: signal.endReason,
    strength: signal.strength,
  };
}

/** The signal object (spec 2.4); `tokens` holds the metadata rows of the signals' tokens. */
export function presentSignal(signal: Signal, tokens: ReadonlyMap<string, TokenRow>): z.input<typeof SignalSchema> {
  return {
    ...presentFiring(signal),
    // The engine records every score at fire time; the record type is a plain map, the response names each.
    scores: Object.fromEntries(SCORE_NAMES.map((name) => [name, signal.scores[name] ?? null])) as Scores,
    why: signal.why,
    analogs: signal.analogs,
    token: presentTokenOf(tokens, signal.tokenId),
    disclaimer: DISCLAIMER,
  };
}

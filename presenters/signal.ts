import type { z } from 'zod';
import type { TokenRow } from './tokens-table.ts';
import { SCORE_NAMES } from '../schemas/records/primitives.ts';
import type { QuantActiveSignalSchema, QuantScoresSchema } from '../schemas/records/quant-scores.ts';
import type { Signal, SignalAnalogs, SignalEndReason, SignalStatus } from '../schemas/records/quant-signals.ts';
import { DISCLAIMER, header, iso } from './resource.ts';
import { presentTokenOf, type PresentedToken } from './token.ts';

type Scores = z.input<typeof QuantScoresSchema>;

/** The compact signal: spec 2.4 without scores, reasons, analogs and token. */
export interface PresentedFiring extends ReturnType<typeof header<'signal'>> {
  id: string;
  type: string;
  label: string;
  ruleVersion: string;
  status: SignalStatus;
  firedAt: string;
  endedAt: string | null;
  endReason: SignalEndReason | null;
  strength: number;
}

/** The signal object (spec 2.4); api/schemas/signals.ts documents it. */
export interface PresentedSignal extends PresentedFiring {
  scores: Scores;
  why: string[];
  analogs: SignalAnalogs | null;
  token: PresentedToken | null;
  disclaimer: typeof DISCLAIMER;
}

export function presentFiring(signal: Signal): PresentedFiring {
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

/** The signal object; `tokens` holds the metadata rows of the signals' tokens. */
export function presentSignal(signal: Signal, tokens: ReadonlyMap<string, TokenRow>): PresentedSignal {
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

/** One of a snapshot's active signals, as the token snapshot lists them. */
export function presentActiveSignal(a: z.infer<typeof QuantActiveSignalSchema>) {
  return { id: a.signalId, type: a.type, ruleVersion: a.ruleVersion, firedAt: iso(a.firedAt), strength: a.strength };
}

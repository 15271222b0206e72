import { z } from 'zod';
import { AnalogSummarySchema, count, eventTime, isNullableFinite, isNullablePercent, nullableNumber, stringMap, tokenId } from './primitives.ts';

/**
 * Signals of the quant engine (topic quant.signals, keyed by token id): one record when a
 * signal fires (version 1, status active) and one when it ends (version 2, status ended),
 * with the same signalId. Avro: schemas/avro/signal. Field names match it one to one.
 */

export const SIGNAL_STATUSES = ['active', 'ended'] as const;
export type SignalStatus = (typeof SIGNAL_STATUSES)[number];

/** `conditions_lapsed`: not seen holding for the rule's lapse time; `max_age`: the rule's maximum age passed. */
export const SIGNAL_END_REASONS = ['conditions_lapsed', 'max_age'] as const;
export type SignalEndReason = (typeof SIGNAL_END_REASONS)[number];


export const SignalConditionSchema = z.strictObject({
  field: z.string().min(1),
  op: z.enum(['>', '>=', '<', '<=']),
  measure: z.enum(['value', 'change']),
  threshold: z.number().finite(),
  actual: z.number().finite(),
});
export type SignalCondition = z.infer<typeof SignalConditionSchema>;

export const SignalAnalogsSchema = AnalogSummarySchema;
export type SignalAnalogs = z.infer<typeof SignalAnalogsSchema>;

export const SignalSchema = z
  .strictObject({
    signalId: z.string().regex(/^sig_[0-9a-f]+$/),
    type: z.string().regex(/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/),
    label: z.string().min(1),
    ruleVersion: z.string().regex(/^[a-z][a-z0-9_]*@\d+(?:\.\d+)*$/),
    status: z.enum(SIGNAL_STATUSES),
    firedAt: eventTime,
    endedAt: eventTime.nullable(),
    endReason: z.enum(SIGNAL_END_REASONS).nullable(),
    strength: z.number().min(0).max(100),
    scores: stringMap(z.number().min(0).max(100).nullable(), isNullablePercent),
    why: z.array(z.string().min(1)).min(1),
    conditions: z.array(SignalConditionSchema).min(1),
    features: stringMap(nullableNumber, isNullableFinite),
    analogs: SignalAnalogsSchema.nullable(),
    tokenId,
    priorFirings: count,
    priorSignalIds: z.array(z.string().regex(/^sig_[0-9a-f]+$/)),
    version: z.number().int().min(1),
    ts: eventTime,
  })
  .refine((s) => (s.status === 'active') === (s.endedAt === null && s.endReason === null), {
    message: 'endedAt and endReason are set exactly when the signal has ended',
  })
  .refine((s) => s.ts >= s.firedAt && (s.endedAt === null || s.endedAt >= s.firedAt), {
    message: 'ts and endedAt cannot precede firedAt',
  });
export type Signal = z.infer<typeof SignalSchema>;

import { z } from 'zod';
import { eventTime } from './primitives.ts';

/**
 * Control events of API keys (control.keys). A key is created, moved to another plan and
 * revoked only through these events, so a replay rebuilds every key (DESIGN.md §3, rule 4).
 * Field names match schemas/avro/api-key-event/v3.avsc one to one.
 */

/** `set_plan` (schema v3) carries the key's new plan and the scopes that plan leaves it. */
export const API_KEY_ACTIONS = ['create', 'revoke', 'set_plan'] as const;
export const PLAN_NAMES = ['free', 'pro', 'team'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export const API_KEY_ID = /^key_[0-9a-f]{8,64}$/;
export const TEAM_ID = /^team_[0-9a-f]{8,64}$/;

export const ApiKeyEventSchema = z.strictObject({
  keyId: z.string().regex(API_KEY_ID, 'must be key_<hex>'),
  action: z.enum(API_KEY_ACTIONS),
  name: z.string().min(1).max(80),
  plan: z.enum(PLAN_NAMES),
  scopes: z.array(z.string().regex(/^[a-z]+:[a-z]+$/, 'must be resource:action')).max(32),
  keyHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 hex digest'),
  /** ts on create; on a later event the key's creation time, so each event carries the whole key. */
  createdAt: eventTime,
  /** The team the key belongs to (schema v2; keys made before teams existed have none). */
  teamId: z.string().regex(TEAM_ID, 'must be team_<hex>').nullable(),
  ts: eventTime,
}).refine((e) => e.createdAt <= e.ts, { message: 'createdAt must not be after ts', path: ['createdAt'] });
export type ApiKeyEvent = z.infer<typeof ApiKeyEventSchema>;

/**
 * The creation of a team (control.teams): keys of one team see the manual cohorts shared
 * with it (spec 2.6). Field names match schemas/avro/team-event/v1.avsc.
 */
export const TeamEventSchema = z.strictObject({
  teamId: z.string().regex(TEAM_ID, 'must be team_<hex>'),
  name: z.string().min(1).max(80),
  ts: eventTime,
});
export type TeamEvent = z.infer<typeof TeamEventSchema>;

import { z } from 'zod';
import { PLAN_NAMES } from '../../schemas/records/control-keys.ts';
import { isoTime, named, resourceHeader } from './common.ts';

const RateLimitSchema = z.strictObject({
  limit: z.number().int().describe('Requests allowed per window.'),
  windowSeconds: z.number().int(),
});

/** GET /v1/key (spec 2.10). Never shows the key or its hash. */
export const KeySchema = named(
  'Key',
  z.strictObject({
    ...resourceHeader('key'),
    id: z.string().regex(/^key_[0-9a-f]+$/),
    name: z.string(),
    mode: z.literal('live'),
    scopes: z.array(z.string()),
    plan: z.enum(PLAN_NAMES),
    planLimits: z.strictObject({
      rateLimit: RateLimitSchema,
      features: z.strictObject({
        backtests: z.boolean(),
        concurrentBacktests: z.number().int().min(0).describe('Most backtest runs the key may have queued or running at once.'),
        scannerDelayMinutes: z.number().int().min(0).describe('How far behind live snapshots POST /v1/quant/scan runs.'),
        webhooks: z.number().int().min(0).describe('Most webhooks the key may register.'),
        historyDays: z
          .number()
          .int()
          .min(1)
          .nullable()
          .describe("How many days back from its `as_of` GET /v1/quant/token/{token}/history may read; null for the whole history."),
      }),
    }),
    rateLimit: RateLimitSchema,
    createdAt: isoTime,
    team: z
      .strictObject({ id: z.string().regex(/^team_[0-9a-f]+$/), name: z.string().nullable() })
      .nullable()
      .describe('The team the key belongs to: its keys see the manual cohorts shared with the team. Null for a key without a team.'),
  }),
  'The calling key: mode, dataset, scopes, plan, rate limit and plan limits.',
);

import { z } from 'zod';
import { HORIZONS } from '../../processors/quant-engine/contracts.ts';
import { MAX_SCAN_RULES } from '../../projections/read-models/scan.ts';
import { BACKTEST_RUN_ID, CHAINS } from '../../schemas/records.ts';
import { disclaimer, isoTime, listOf, named, resourceHeader } from './common.ts';
import { ScanRuleSchema } from './tokens.ts';

/** Backtest runs and event studies (spec 2.8, 2.9, 3, 4.4). */

export const DEAD_TOKEN_POLICIES = ['last_price', 'total_loss', 'exclude'] as const;
export const MAX_BACKTEST_NAME = 80;
export const MAX_BACKTESTS_LIMIT = 100;

const horizon = z.enum(HORIZONS);
const runId = z.string().regex(BACKTEST_RUN_ID).describe('Backtest run id, `btr_<hex>`.');

/** Unix time is in seconds; beyond year 2100 in seconds it is taken as a mistake. */
const MAX_UNIX_SECONDS = 4_102_444_800;

const timeInput = z
  .union([
    z.iso.datetime({ offset: true }).describe('ISO-8601, e.g. `2026-03-01T00:00:00Z`.'),
    z.number().int().min(0).max(MAX_UNIX_SECONDS).describe('Unix time in seconds.'),
  ])
  .describe('ISO-8601 (with `Z` or an offset) or unix time in seconds.');

/** Epoch ms of a validated time input. */
export function timeInputMs(value: string | number): number {
  return typeof value === 'number' ? value * 1000 : Date.parse(value);
}

export const BacktestIdParamsSchema = z.strictObject({ id: runId });

export const CreateBacktestBodySchema = z
  .strictObject({
    rules: z
      .array(ScanRuleSchema)
      .min(1)
      .max(MAX_SCAN_RULES)
      .describe(`Entry conditions, all of which must hold on a token's snapshot (1 to ${MAX_SCAN_RULES} scanner rules).`),
    horizon: horizon.describe('How long after each entry the forward return is measured.'),
    name: z.string().max(MAX_BACKTEST_NAME).optional().describe(`A label for the run, at most ${MAX_BACKTEST_NAME} characters.`),
    from: timeInput.optional().describe('Start of the window of entry times; default: the start of history.'),
    to: timeInput.optional().describe('End of the window of entry times; default: the end of history when the run starts.'),
    cooldown: horizon
      .optional()
      .describe('Minimum spacing of two entries of the same token; default: the horizon (non-overlapping samples).'),
    dead_token_policy: z
      .enum(DEAD_TOKEN_POLICIES)
      .optional()
      .describe(
        'How tokens that died inside the horizon are valued: `last_price` (default) at their last price, `total_loss` as -100%, ' +
          '`exclude` left out (they are counted and a warning says so).',
      ),
    universe: z
      .strictObject({
        chains: z.array(z.enum(CHAINS)).min(1).optional().describe('Only tokens on these chains.'),
        min_liquidity_usd: z.number().min(0).optional().describe('Only entries with at least this liquidity (USD) at entry.'),
      })
      .optional()
      .describe('Restricts the universe of tokens.'),
  })
  .superRefine((body, ctx) => {
    if (body.from !== undefined && body.to !== undefined && timeInputMs(body.from) >= timeInputMs(body.to)) {
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must be after from' });
    }
  });
export type CreateBacktestBody = z.output<typeof CreateBacktestBodySchema>;

export const BacktestsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_BACKTESTS_LIMIT).default(25),
  cursor: z.string().min(1).optional().describe('`next_cursor` of the previous page.'),
});

export const BACKTEST_STATUSES = ['queued', 'running', 'done', 'failed', 'canceled'] as const;

const SpecSchema = z.strictObject({
  rules: z.array(ScanRuleSchema),
  horizon,
  from: isoTime.nullable().describe('Null: from the start of history.'),
  to: isoTime.nullable().describe('Null: to the end of history as of the run (`as_of`).'),
  cooldown: horizon,
  deadTokenPolicy: z.enum(DEAD_TOKEN_POLICIES),
  universe: z.strictObject({ chains: z.array(z.enum(CHAINS)).nullable(), minLiquidityUsd: z.number().nullable() }),
});

export const BacktestRunSchema = named(
  'BacktestRun',
  z.strictObject({
    ...resourceHeader('backtest_run'),
    id: runId,
    name: z.string().nullable(),
    status: z
      .enum(BACKTEST_STATUSES)
      .describe('`queued` → `running` → `done`, `failed` (see `reason`) or `canceled`. Poll until it is one of the last three.'),
    spec: SpecSchema.describe('The request as run, with its defaults filled in.'),
    progress: z
      .strictObject({
        scanned: z.number().int().min(0).describe('Snapshots scanned so far.'),
        total: z.number().int().min(0).describe('Snapshots in the window.'),
        fraction: z.number().min(0).max(1),
      })
      .nullable()
      .describe('Null while queued.'),
    attempt: z.number().int().min(0).describe('How often the runner started it: above 1 when a restart of the service found it unfinished.'),
    asOf: isoTime.nullable().describe('The end of the history the run reads, fixed when it first starts: a rerun reads the same history.'),
    reason: z.string().nullable().describe('Why it failed or was canceled.'),
    createdAt: isoTime,
    startedAt: isoTime.nullable(),
    finishedAt: isoTime.nullable(),
    cancelRequestedAt: isoTime.nullable(),
    result: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        'Once `done`: N, the hit rate with its Wilson interval, median, mean and 10% trimmed mean return, median max drawdown, median ' +
          'time to peak, best and worst, the return and drawdown distributions, the baseline, warnings, every event and the leakage checks.',
      ),
    disclaimer,
  }),
  'A backtest run (spec 2.8): strictly point in time; every entry sees only what was known at its snapshot.',
);

export const BacktestListSchema = listOf('BacktestRunList', BacktestRunSchema);

export const EventStudyParamsSchema = z.strictObject({
  slug: z.string().min(1).max(64).describe('The study: `velocity-3x`, `hq-authors-converge`, `social-up-price-flat`, `crowding-spike`, `broad-attention` or `cooling`.'),
});

const QuantileSummarySchema = z.looseObject({ n: z.number().int().min(0) });

const EventStudyFields = {
  ...resourceHeader('event_study'),
  slug: z.string(),
  title: z.string(),
  description: z.string(),
  signal_type: z.string().describe('The signal rule whose firings are the events.'),
  rule_version: z.string(),
  as_of: isoTime.nullable().describe('The hour boundary of event time of the last refresh; null before the first one.'),
  events: z.number().int().min(0).describe('Firings of the rule in point-in-time history up to `as_of`.'),
  disclaimer,
};

export const EventStudySummarySchema = named(
  'EventStudySummary',
  z.strictObject(EventStudyFields),
  'An event study (spec 2.9) without its distributions.',
);

export const EventStudySchema = named(
  'EventStudy',
  z.looseObject({
    ...EventStudyFields,
    horizons: z
      .array(QuantileSummarySchema)
      .describe(
        'Per horizon (15m … 7d): n, mean, median, quantiles, hit rate with its Wilson interval and the return distribution after the ' +
          'events, beside the baseline (unconditional returns of the same history) and the abnormal return (events minus baseline). ' +
          'Empty before the first refresh.',
      ),
  }),
  'An event study with its per-horizon distributions, as of the last hourly refresh in event time.',
);

export const EventStudyListSchema = listOf('EventStudyList', EventStudySummarySchema, { total: true });

import { z } from 'zod';
import { ANALOG_K_DEFAULT, ANALOG_K_MAX, ANALOG_MODEL_VERSION } from '../../processors/quant-engine/analogs/analogs.ts';
import { ANALOG_COMPONENTS } from '../../processors/quant-engine/analogs/vector.ts';
import { FEATURE_DEFINITIONS } from '../../processors/quant-engine/features/definitions.ts';
import { SNAPSHOT_GRID_MS } from '../../processors/quant-engine/features/features.ts';
import { MODEL_VERSIONS, SCALES } from '../../processors/quant-engine/scores/models.ts';
import { CONFIDENCE_LEVELS, DIVERGENCE_STATES, SCORE_NAMES } from '../../schemas/records/primitives.ts';
import { DATASET, isoTime, named, resourceHeader } from './common.ts';
import { SignalRuleDocSchema } from './signals.ts';

/**
 * The meta endpoints' bodies (spec 4.6): model documentation, service health and where the
 * WebSocket stream is. Also the thresholds health judges freshness by, so that the schema
 * descriptions and the checks state the same numbers.
 */

// ---- GET /v1/models ----

const numbersNamed = <const K extends string>(names: readonly K[], describe: (name: K) => string) =>
  z.strictObject(Object.fromEntries(names.map((n) => [n, z.number().describe(describe(n))])) as Record<K, z.ZodNumber>);

const ScoreDriverDocSchema = z.strictObject({
  name: z.string().describe('The driver, as in `score_details[].drivers[].name` of a snapshot.'),
  maxPoints: z.number().describe('Points the driver contributes at full strength, before the points of missing optional drivers are spread.'),
  definition: z.string().describe('How its input maps onto the driver\'s strength.'),
  required: z.boolean().describe('True: the score is null when this input is unavailable. False: the driver is left out and its points spread.'),
});

export const ScoreModelDocSchema = named(
  'ScoreModelDoc',
  z.strictObject({
    score: z.enum(SCORE_NAMES),
    modelVersion: z.string().describe('`<score>@<version>`, as in a snapshot\'s `model_versions`.'),
    measures: z.string().describe('What the score measures, and what its ends mean.'),
    inputs: z.array(z.string()).describe('Rule fields (features or side inputs) the score reads.'),
    drivers: z.array(ScoreDriverDocSchema).describe('The parts that sum to the score; their maximum points sum to 100.'),
    nullWhen: z.array(z.string()).describe('When the score is null.'),
    confidence: z.string().describe('How the confidence of the score (HIGH, MEDIUM, LOW) is decided.'),
  }),
  'The model of one score: what it measures, its drivers with their maximum points, its inputs, when it is null and how confident it is.',
);

const FEATURE_UNITS = [...new Set(Object.values(FEATURE_DEFINITIONS).map((d) => d.unit))] as [string, ...string[]];

export const FeatureDefinitionSchema = named(
  'FeatureDefinition',
  z.strictObject({
    name: z.string().describe('The feature: a key of a snapshot\'s `features` and a rule field of the scanner.'),
    unit: z
      .enum(FEATURE_UNITS)
      .describe('`fraction`: 0.05 means 5%; `ratio`: 1 means unchanged; `usd`; `usd_per_token`; `count`; `weighted_authors`: a sum of author weights.'),
    definition: z.string().describe('What it measures over which window, and when it is null.'),
  }),
  'One feature of a snapshot. Windows are trailing windows of event time ending at the snapshot time.',
);

const RegisteredModelSchema = z.strictObject({
  kind: z.enum(['score', 'features', 'signal_rule', 'analogs']),
  name: z.string().describe('The score name, `features`, the signal type, or `analogs`.'),
  version: z.string().describe('The version computed now; objects carry it in `model_versions` or `rule_version`.'),
});

const MODEL_NAMES = Object.keys(MODEL_VERSIONS) as (keyof typeof MODEL_VERSIONS)[];
const ModelVersionsSchema = z
  .strictObject(Object.fromEntries(MODEL_NAMES.map((k) => [k, z.string()])) as Record<keyof typeof MODEL_VERSIONS, z.ZodString>)
  .describe('The active model versions, as quant objects carry them in `model_versions`: each score, the features and the analogs.');

export const ModelsSchema = named(
  'Models',
  z.strictObject({
    ...resourceHeader('models'),
    modelVersions: ModelVersionsSchema,
    registeredModels: z
      .array(RegisteredModelSchema)
      .describe('Every model this service computes with, and its version: the seven scores, the feature set, each signal rule and the analog model.'),
    scores: z.strictObject({
      rules: z.array(z.string()).describe('Rules every score model follows.'),
      pointStep: z.number().describe('Driver contributions are multiples of this many points.'),
      scales: numbersNamed(Object.keys(SCALES) as (keyof typeof SCALES)[], () => 'Where a driver\'s mapping reaches full strength (or a threshold); the driver definitions say which.'),
      models: z.array(ScoreModelDocSchema).describe('One per score, in the order of the score names.'),
      divergenceStates: z.array(z.enum(DIVERGENCE_STATES)).describe('Values of a snapshot\'s `divergence_state`.'),
      divergenceStateRule: z.string().describe('How `divergence_state` follows from the divergence drivers.'),
    }),
    features: z.strictObject({
      version: z.string(),
      definitions: z.array(FeatureDefinitionSchema),
    }),
    signals: z.strictObject({
      rules: z.array(SignalRuleDocSchema).describe('Every signal rule that can fire, with its conditions, what ends it and its cooldown.'),
    }),
    analogs: z.strictObject({
      modelVersion: z.literal(ANALOG_MODEL_VERSION),
      components: z
        .array(z.enum(ANALOG_COMPONENTS))
        .describe('The components of the distance, in order. Each is standardised over the candidates; a missing one counts as the mean and lowers the confidence.'),
      distance: z.string().describe('How two snapshots are compared.'),
      outcomeHorizon: z.string().describe('The outcome reported for each analog.'),
      eligibility: z.array(z.string()).describe('Which historical snapshots may be analogs of a snapshot at time t.'),
      kDefault: z.literal(ANALOG_K_DEFAULT).describe('Analogs returned when `k` is not given.'),
      kMax: z.literal(ANALOG_K_MAX),
      confidence: z
        .strictObject({
          highMinN: z.number().int().describe('HIGH needs at least this many analogs,'),
          highMaxGap: z.number().describe('a gap of at most this,'),
          highMaxImputed: z.number().describe('and at most this share of imputed components.'),
          lowBelowN: z.number().int().describe('LOW with fewer analogs than this,'),
          lowAboveGap: z.number().describe('or a gap above this,'),
          lowAboveImputed: z.number().describe('or a share of imputed components above this. MEDIUM otherwise.'),
        })
        .describe(
          `Confidence (${CONFIDENCE_LEVELS.join(', ')}) of an analog summary. gap: the mean distance to the analogs over √${ANALOG_COMPONENTS.length}, ` +
            'the root-mean-square difference per component in standard deviations; imputed: the larger of the snapshot\'s share of missing components and the analogs\' mean share.',
        ),
    }),
  }),
  'Documentation of every model behind the quant objects: scores, features, signal rules, analogs, and the active versions.',
);

// ---- GET /v1/health ----

/** Freshness thresholds of the live dataset as a whole (any token), against the service clock. */
export const HEALTH_STALE_AFTER_MS = {
  /** Every token with events gets a snapshot per 5-minute grid step: three steps without one means the pipeline is behind. */
  snapshots: 3 * SNAPSHOT_GRID_MS,
  /** Posts about some token arrive every few minutes in a live world. */
  social: 15 * 60_000,
  /** Some token trades every few minutes in a live world. */
  market: 15 * 60_000,
} as const;

/** A provider that has not answered in this time counts as down. */
export const PROBE_TIMEOUT_MS = 2_000;

const minutes = (ms: number) => `${ms / 60_000} min`;

const ProviderHealthSchema = named(
  'ProviderHealth',
  z.strictObject({
    name: z
      .enum(['event_log', 'analytical_store'])
      .describe('`event_log`: the file log or Kafka the service runs on (probe: list its topics). `analytical_store`: DuckDB or ClickHouse (probe: a one-row query).'),
    status: z.enum(['ok', 'down']).describe(`\`down\` when the probe failed or took longer than ${PROBE_TIMEOUT_MS} ms.`),
    latencyMs: z.number().min(0).describe('How long the probe took to answer or to fail, in milliseconds.'),
    error: z.string().nullable().describe('What failed, as an error code; the details are in the service log. Null when ok.'),
  }),
  'One dependency of the service and whether it answers.',
);

const lag = (what: string) =>
  z.number().int().nullable().describe(`Service clock minus ${what}, in milliseconds; null when there is none yet.`);

const DatasetFreshnessSchema = named(
  'DatasetFreshness',
  z.strictObject({
    dataset: z.literal(DATASET),
    latestSnapshotAt: isoTime.nullable().describe('Event time of the newest token snapshot; null before the first.'),
    sourceLastEventAt: isoTime.nullable().describe('Event time of the newest social-activity event behind any snapshot; null before the first.'),
    marketLastAt: isoTime.nullable().describe('Event time of the newest market data behind any snapshot; null before the first.'),
    snapshotLagMs: lag('`latest_snapshot_at`'),
    sourceLagMs: lag('`source_last_event_at`'),
    marketLagMs: lag('`market_last_at`'),
    stale: z.boolean().describe('True when any of the three is missing or older than its threshold (`stale_after_ms`).'),
    staleReasons: z
      .array(z.string())
      .describe('Human-readable, one per late or missing part, e.g. "social activity is delayed: last post 42 min ago". Empty when fresh.'),
    staleAfterMs: z
      .strictObject({
        snapshots: z.literal(HEALTH_STALE_AFTER_MS.snapshots).describe(`${minutes(HEALTH_STALE_AFTER_MS.snapshots)}: three 5-minute snapshot steps.`),
        social: z.literal(HEALTH_STALE_AFTER_MS.social).describe(minutes(HEALTH_STALE_AFTER_MS.social)),
        market: z.literal(HEALTH_STALE_AFTER_MS.market).describe(minutes(HEALTH_STALE_AFTER_MS.market)),
      })
      .describe('The lag beyond which each part counts as stale, in milliseconds.'),
  }),
  'How current a dataset is, over all its tokens. Staleness does not make the service degraded: it answers, with late data.',
);

const ProcessingSchema = named(
  'Processing',
  z.strictObject({
    caughtUp: z.boolean().describe('Every stage is at most `caught_up_lag_records` behind its input, and no first start is still seeding its history (the log is not whole until then).'),
    caughtUpLagRecords: z.number().int().describe('The lag at or below which a stage counts as caught up: a processor commits its input only at its checkpoints, so its lag is never 0 for long while the feed runs.'),
    lagRecords: z.number().int().min(0).describe('Records not yet covered by every stage, summed: a processor counts the input its saved state does not cover, a projection the records whose rows are not stored.'),
    timeLeftSeconds: z
      .number()
      .min(0)
      .nullable()
      .describe(
        'Seconds until every stage is caught up: the records every stage is still to cover (its lag, and the records the processors upstream are still to write for it, at their rate of output so far) over the rate at which all stages together covered records in the last minute; smoothed over measurements. Null while a first start seeds its history, and in the first 10 s of a catch-up.',
      ),
    mostBehind: z.string().nullable().describe('The stage with the most records left to cover, counting those still to be written for it; null when none has any.'),
    stages: z
      .array(
        z.strictObject({
          name: z.string().describe('The stage\'s consumer group, e.g. `quant-engine` or `projection.tokens`.'),
          lagRecords: z.number().int().min(0),
          ratePerSecond: z.number().min(0).nullable().describe('Records it covered per second over the last minute; null before 10 s of measurements or when it covered none.'),
        }),
      )
      .describe('Every stage with its lag and rate.'),
    measuredAt: isoTime.describe('When the lags were read from the log (every 2 s).'),
  }),
  'How far the processors and projections are behind the log.',
);

export const HealthSchema = named(
  'Health',
  z.strictObject({
    ...resourceHeader('health'),
    status: z
      .enum(['ok', 'catching_up', 'degraded'])
      .describe(
        '`degraded` when a provider is down; the answer is then 503 with this same body. `catching_up` (200) while the processors or projections work through a backlog (a first start, from its seeding on, or a restart after downtime): answers are correct for the data processed so far, see `processing`. Stale data alone leaves it `ok`.',
      ),
    checkedAt: isoTime.describe('Service clock at the check; the lags are measured against it.'),
    startedAt: isoTime.describe('When the API started.'),
    uptimeSeconds: z.number().min(0).describe('Seconds since `started_at`.'),
    providers: z.array(ProviderHealthSchema),
    freshness: z
      .array(DatasetFreshnessSchema)
      .describe('One entry per dataset; freshness needs the analytical store, so the list is empty while it is down.'),
    processing: ProcessingSchema.nullable().describe('The lag of every stage; null until first measured, and in a process that does not measure it.'),
  }),
  'Service status, the health of its providers, the freshness of each dataset and how far processing is behind.',
);
export type Health = z.input<typeof HealthSchema>;
export type Processing = z.input<typeof ProcessingSchema>;

// ---- GET /v1/stream/info ----

/** The stream's limits (spec §8), which the WebSocket server enforces once it exists. */
export const STREAM_LIMITS = {
  maxSubscriptions: 20,
  maxTokensPerSubscription: 100,
  maxConnectionsPerKey: 10,
  maxClientMessages: 30,
  clientMessageWindowSec: 10,
  pingIntervalSec: 25,
} as const;

export const STREAM_EVENTS = ['signal.created', 'signal.ended', 'score.updated', 'cohort.convergence', 'narrative.shift'] as const;

export const StreamInfoSchema = named(
  'StreamInfo',
  z.strictObject({
    ...resourceHeader('stream_info'),
    available: z.boolean().describe('False while the realtime host is offline; REST and webhooks are unaffected.'),
    url: z
      .string()
      .nullable()
      .describe('The WebSocket URL to open, `<stream host>/v1/stream`; null while unavailable. Ask again before every connect and reconnect: the host can move.'),
    message: z.string().nullable().describe('Why the stream is unavailable; null when available.'),
    requiredScope: z.literal('stream:read').describe('The scope a key needs to connect.'),
    authentication: z.string().describe('How a WebSocket connection presents its key.'),
    events: z.array(z.enum(STREAM_EVENTS)).describe('Events a subscription can ask for. The `tokens` filter applies to token-scoped events.'),
    limits: z.strictObject({
      maxSubscriptions: z.literal(STREAM_LIMITS.maxSubscriptions).describe('Subscriptions per connection.'),
      maxTokensPerSubscription: z.literal(STREAM_LIMITS.maxTokensPerSubscription),
      maxConnectionsPerKey: z.literal(STREAM_LIMITS.maxConnectionsPerKey),
      maxClientMessages: z.literal(STREAM_LIMITS.maxClientMessages).describe('Client messages allowed per `client_message_window_sec`.'),
      clientMessageWindowSec: z.literal(STREAM_LIMITS.clientMessageWindowSec),
      pingIntervalSec: z
        .literal(STREAM_LIMITS.pingIntervalSec)
        .describe('The server sends a WebSocket ping and a `{"type":"ping"}` frame this often and closes connections that do not answer.'),
    }),
  }),
  'Where to open the WebSocket stream, whether it is up, and its limits. Beyond the spec, every `event` frame (and every ' +
    '`subscribed` answer) carries a `cursor`; a `subscribe` frame with `"resume": "<cursor>"` receives what the subscription ' +
    'missed from the log, then the live flow, with no gap and no duplicate. Cursors older than 24 h or past the log\'s retention ' +
    'are refused with VALIDATION (`body.resume`, `cursor_expired`), malformed ones with `invalid_cursor`: resync over REST. ' +
    'Sockets close with 4401 when the key is revoked and 4402 when a plan change leaves it without stream:read.',
);

import type { z } from 'zod';
import { ANALOG_K_DEFAULT, ANALOG_K_MAX, ANALOG_MODEL_VERSION, CONFIDENCE_RULES, SAME_TOKEN_WINDOW_MS } from '../../processors/quant-engine/analogs/analogs.ts';
import { ANALOG_COMPONENTS } from '../../processors/quant-engine/analogs/vector.ts';
import { FEATURE_DEFINITIONS, FEATURE_NAMES, FEATURE_VERSION } from '../../processors/quant-engine/features/definitions.ts';
import { DIVERGENCE_STATE_RULE, MODEL_VERSIONS, SCALES, SCORE_MODELS, SCORE_RULES, SCORE_STEP } from '../../processors/quant-engine/scores/models.ts';
import { signalRuleDocs } from '../../processors/quant-engine/signals/rules.ts';
import { formatAge } from '../../processors/quant-engine/snapshots/snapshots.ts';
import { datasetFreshness, type DatasetFreshness } from '../../projections/read-models/freshness.ts';
import { DIVERGENCE_STATES, SCORE_NAMES } from '../../schemas/records/primitives.ts';
import { defineRoute } from '../http/route.ts';
import { DATASET, header, iso } from '../schemas/common.ts';
import {
  HEALTH_STALE_AFTER_MS,
  HealthSchema,
  ModelsSchema,
  STREAM_EVENTS,
  STREAM_LIMITS,
  StreamInfoSchema,
  type Health,
} from '../schemas/meta.ts';
import { probeProvider } from '../services/provider-probe.ts';
import type { RouteDeps } from './deps.ts';
import type { RouteGroup } from './group.ts';

/** GET /v1/models, /v1/health and /v1/stream/info (spec 4.6): public, no key. */
export function metaRoutes({ log, store, logger, now, startedAt, streams, processing }: RouteDeps): RouteGroup {
  const documentation = modelsDocument();
  const models = defineRoute({
    method: 'GET',
    path: '/v1/models',
    operationId: 'getModels',
    tag: 'Meta',
    summary: 'Score, feature, signal and analog model documentation',
    description: 'The active model versions and how every score, feature, signal rule and the analog model is computed.',
    public: true,
    response: { schema: ModelsSchema, description: 'The model documentation.' },
    handler: () => documentation,
  });

  const health = defineRoute({
    method: 'GET',
    path: '/v1/health',
    operationId: 'getHealth',
    tag: 'Meta',
    summary: 'Service health',
    description:
      'Service status, each provider with the latency of its probe, and the freshness of the live dataset with human-readable stale reasons. ' +
      'Answers 200 when every provider is up, and 503 with the same body when one is down.',
    public: true,
    response: { schema: HealthSchema, description: 'The service is up; `freshness` says whether its data is current.' },
    statusOf: (result) => (result.status === 'degraded' ? 503 : 200),
    handler: async (): Promise<Health> => {
      const at = now();
      // The store's probe is the freshness read itself: one cheap query answers both.
      const [eventLog, analyticalStore] = await Promise.all([probeProvider('event_log', () => log.listTopics(), logger), probeProvider('analytical_store', () => datasetFreshness(store), logger)]);
      const providers = [eventLog.health, analyticalStore.health];
      const lag = processing?.() ?? null;
      return {
        ...header('health'),
        status: providers.some((p) => p.status !== 'ok') ? 'degraded' : lag !== null && !lag.caughtUp ? 'catching_up' : 'ok',
        checkedAt: iso(at),
        startedAt: iso(startedAt),
        uptimeSeconds: (at - startedAt) / 1000,
        providers,
        freshness: analyticalStore.value === null ? [] : [freshnessAt(analyticalStore.value, at)],
        processing: lag,
      };
    },
  });

  const stream = defineRoute({
    method: 'GET',
    path: '/v1/stream/info',
    operationId: 'getStreamInfo',
    tag: 'Meta',
    summary: 'Where to open the WebSocket stream',
    description: 'Call before every connect and reconnect: the realtime host can move. While `available` is false, `url` is null and `message` says why.',
    public: true,
    response: { schema: StreamInfoSchema, description: 'The stream address, or why it is unavailable, and its limits.' },
    handler: async () => {
      const url = (await streams?.currentUrl()) ?? null;
      return url === null
        ? { ...STREAM_INFO, available: false, url: null, message: 'The stream is not available: no stream instance is running; REST and webhooks are unaffected. Ask here again before connecting.' }
        : { ...STREAM_INFO, available: true, url, message: null };
    },
  });

  return { routes: [models, health, stream] };
}

function freshnessAt(f: DatasetFreshness, at: number): Health['freshness'][number] {
  const lag = (t: number | null) => (t === null ? null : at - t);
  const snapshotLagMs = lag(f.latestSnapshotAt);
  const sourceLagMs = lag(f.sourceLastEventAt);
  const marketLagMs = lag(f.marketLastAt);
  const staleReasons: string[] = [];
  const judge = (lagMs: number | null, limitMs: number, missing: string, late: (age: string) => string) => {
    if (lagMs === null) staleReasons.push(missing);
    else if (lagMs > limitMs) staleReasons.push(late(formatAge(lagMs)));
  };
  judge(snapshotLagMs, HEALTH_STALE_AFTER_MS.snapshots, 'no token snapshots yet', (age) => `snapshots are delayed: latest snapshot ${age} ago`);
  judge(sourceLagMs, HEALTH_STALE_AFTER_MS.social, 'no social activity yet', (age) => `social activity is delayed: last post ${age} ago`);
  judge(marketLagMs, HEALTH_STALE_AFTER_MS.market, 'no market data yet', (age) => `market data is delayed: last market update ${age} ago`);
  return {
    dataset: DATASET,
    latestSnapshotAt: iso(f.latestSnapshotAt),
    sourceLastEventAt: iso(f.sourceLastEventAt),
    marketLastAt: iso(f.marketLastAt),
    snapshotLagMs,
    sourceLagMs,
    marketLagMs,
    stale: staleReasons.length > 0,
    staleReasons,
    staleAfterMs: HEALTH_STALE_AFTER_MS,
  };
}

/** Built once: every part is read from the modules that compute with it. */
function modelsDocument(): z.input<typeof ModelsSchema> {
  const signalRules = signalRuleDocs();
  return {
    ...header('models'),
    modelVersions: MODEL_VERSIONS,
    registeredModels: [
      ...SCORE_NAMES.map((score) => ({ kind: 'score' as const, name: score, version: SCORE_MODELS[score].modelVersion })),
      { kind: 'features' as const, name: 'features', version: FEATURE_VERSION },
      ...signalRules.map((rule) => ({ kind: 'signal_rule' as const, name: rule.type, version: rule.ruleVersion })),
      { kind: 'analogs' as const, name: 'analogs', version: ANALOG_MODEL_VERSION },
    ],
    scores: {
      rules: [...SCORE_RULES],
      pointStep: SCORE_STEP,
      scales: SCALES,
      models: SCORE_NAMES.map((score) => SCORE_MODELS[score]),
      divergenceStates: [...DIVERGENCE_STATES],
      divergenceStateRule: DIVERGENCE_STATE_RULE,
    },
    features: {
      version: FEATURE_VERSION,
      definitions: FEATURE_NAMES.map((name) => ({ name, ...FEATURE_DEFINITIONS[name] })),
    },
    signals: { rules: signalRules },
    analogs: {
      modelVersion: ANALOG_MODEL_VERSION,
      components: [...ANALOG_COMPONENTS],
      distance: `Euclidean distance over the ${ANALOG_COMPONENTS.length} standardised components; the k nearest are the analogs, nearest first.`,
      outcomeHorizon: '24h: the return and the deepest drawdown over the 24 hours after each analog snapshot.',
      eligibility: [
        'Only snapshots whose 24h outcome had resolved at or before t.',
        `Never a snapshot of the same token within ±${SAME_TOKEN_WINDOW_MS / 3_600_000}h of t (the same episode).`,
      ],
      kDefault: ANALOG_K_DEFAULT,
      kMax: ANALOG_K_MAX,
      confidence: CONFIDENCE_RULES,
    },
  };
}

const STREAM_INFO = {
  ...header('stream_info'),
  requiredScope: 'stream:read' as const,
  authentication: 'Authorization: Bearer <key>, or ?key=<key> where headers are impossible (browsers), then with a key holding only stream:read.',
  events: [...STREAM_EVENTS],
  limits: STREAM_LIMITS,
};

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { createApi } from '../../../api/app.ts';
import { PROBE_TIMEOUT_MS } from '../../../api/schemas/meta.ts';
import { ENDPOINT_SCOPES, SCOPES, scopeOf } from '../../../api/scopes.ts';
import { loadConfig } from '../../../infra/config.ts';
import type { EventLog } from '../../../infra/log/port.ts';
import { openStore } from '../../../projections/open-store.ts';
import type { AnalyticalStore } from '../../../infra/store/port.ts';
import { columns, sql, table } from '../../../infra/store/sql-literal.ts';
import { ANALOG_COMPONENTS } from '../../../processors/quant-engine/analogs/vector.ts';
import { FEATURE_NAMES } from '../../../processors/quant-engine/features/definitions.ts';
import { MODEL_VERSIONS, SCORE_MODELS } from '../../../processors/quant-engine/scores/models.ts';
import { SIGNAL_RULES } from '../../../processors/quant-engine/signals/rules.ts';
import type { ProjectionTables } from '../../../projections/tables.ts';
import { latestSnapshots, type LatestSnapshotRow } from '../../../projections/tables/quant.ts';
import { SCORE_NAMES } from '../../../schemas/records/primitives.ts';
import type { QuantSnapshot } from '../../../schemas/records/quant-scores.ts';
import type { ApiWorld } from '../../helpers/api-world.ts';
import type { Codec } from '../../../schemas/codec.ts';
import { openEmbedded, silentLogger } from '../../helpers/runtime-fixture.ts';

/** The endpoints spec §4 and §5.3 name as public: no key, limited per client IP. */
const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/v1/health', '/v1/models', '/v1/stream/info', '/openapi.json']);

/** The endpoints of spec 4.1–4.3 and 4.6, as the document must list them. */
const SPEC_ENDPOINTS = [
  'GET /v1/quant/token/{token}',
  'GET /v1/quant/token/{token}/analogs',
  'GET /v1/quant/tokens',
  'POST /v1/quant/scan',
  'GET /v1/quant/signals',
  'GET /v1/quant/signals/{id}',
  'GET /v1/quant/users/{handle}',
  'GET /v1/quant/cohorts',
  'GET /v1/quant/cohorts/{id}',
  'GET /v1/quant/narratives',
  'GET /v1/quant/narratives/rotation',
  'GET /v1/quant/narratives/heatmap',
  'GET /v1/quant/narratives/{slug}',
  'GET /v1/key',
  'GET /v1/models',
  'GET /v1/health',
  'GET /v1/stream/info',
  'GET /openapi.json',
];

const maxOf = (values: (number | null)[]) => values.reduce<number | null>((m, v) => (v === null ? m : m === null ? v : Math.max(m, v)), null);
const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The public meta endpoints and the OpenAPI document. */
export function metaCases(world: () => ApiWorld): void {
  describe('meta', () => {
    it('documents every score with its drivers, every feature, every signal rule and the analog model, without a key', async () => {
      const res = await world().request('GET', '/v1/models', { key: null });
      expect(res.status).toBe(200);
      const { body } = res;
      expect(body.object).toBe('models');
      expect(body.model_versions).toEqual(MODEL_VERSIONS);
      expect(body.scores.models.map((m: { score: string }) => m.score)).toEqual([...SCORE_NAMES]);
      for (const model of body.scores.models) {
        const source = SCORE_MODELS[model.score as keyof typeof SCORE_MODELS];
        expect(model.model_version).toBe(source.modelVersion);
        expect(model.drivers.map((d: { name: string; max_points: number }) => [d.name, d.max_points])).toEqual(source.drivers.map((d) => [d.name, d.maxPoints]));
        expect(model.drivers.every((d: { definition: string }) => d.definition.length > 0)).toBe(true);
      }
      expect(body.features.definitions.map((f: { name: string }) => f.name)).toEqual(FEATURE_NAMES);
      expect(body.signals.rules.map((r: { type: string }) => r.type)).toEqual(SIGNAL_RULES.map((r) => r.type));
      expect(body.signals.rules.map((r: { rule_version: string }) => r.rule_version)).toEqual(SIGNAL_RULES.map((r) => `${r.name}@${r.version}`));
      expect(body.analogs).toMatchObject({ model_version: 'analog-v1.0', components: [...ANALOG_COMPONENTS], k_default: 40, k_max: 100 });
      expect(body.registered_models.map((m: { kind: string; version: string }) => `${m.kind}:${m.version}`)).toEqual([
        ...SCORE_NAMES.map((score) => `score:${MODEL_VERSIONS[score]}`),
        `features:${MODEL_VERSIONS.features}`,
        ...SIGNAL_RULES.map((r) => `signal_rule:${r.name}@${r.version}`),
        `analogs:${MODEL_VERSIONS.analogs}`,
      ]);
    });

    it('reports its providers up and the freshness the store holds, measured against its clock', async () => {
      const res = await world().request('GET', '/v1/health', { key: null });
      expect(res.status).toBe(200);
      const { body } = res;
      expect(body).toMatchObject({ object: 'health', status: 'ok' });
      expect(body.providers.map((p: { name: string; status: string; error: unknown }) => [p.name, p.status, p.error])).toEqual([
        ['event_log', 'ok', null],
        ['analytical_store', 'ok', null],
      ]);
      expect(Date.parse(body.checked_at) - Date.parse(body.started_at)).toBeCloseTo(body.uptime_seconds * 1000, 3);

      const rows = await world().store.query<LatestSnapshotRow>(sql`SELECT ${columns(latestSnapshots)} FROM ${table(latestSnapshots)}`);
      const freshness = rows.map((r) => (JSON.parse(r.snapshot) as QuantSnapshot).freshness);
      const expected = {
        latestSnapshotAt: maxOf(rows.map((r) => r.ts)),
        sourceLastEventAt: maxOf(freshness.map((f) => f.sourceLastEventAt)),
        marketLastAt: maxOf(freshness.map((f) => f.marketLastAt)),
      };
      expect(expected.latestSnapshotAt).not.toBeNull();
      const [live] = body.freshness;
      expect(body.freshness).toHaveLength(1);
      expect(live).toMatchObject({
        dataset: 'live',
        latest_snapshot_at: isoOrNull(expected.latestSnapshotAt),
        source_last_event_at: isoOrNull(expected.sourceLastEventAt),
        market_last_at: isoOrNull(expected.marketLastAt),
      });
      const checkedAt = Date.parse(body.checked_at);
      expect(live.snapshot_lag_ms).toBe(checkedAt - expected.latestSnapshotAt!);
      expect(live.source_lag_ms).toBe(checkedAt - expected.sourceLastEventAt!);
      expect(live.market_lag_ms).toBe(checkedAt - expected.marketLastAt!);
      const late = [
        live.snapshot_lag_ms > live.stale_after_ms.snapshots,
        live.source_lag_ms > live.stale_after_ms.social,
        live.market_lag_ms > live.stale_after_ms.market,
      ].filter(Boolean).length;
      expect(live.stale_reasons).toHaveLength(late);
      expect(live.stale).toBe(late > 0);
    });

    it('answers 503 with the health body, naming the provider that is down', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'tqa-health-'));
      const { log, codec } = await openEmbedded(join(dir, 'log'));
      const store = await openStore(loadConfig({ TQA_DATA_DIR: dir }), silentLogger);
      const matchesDocument = healthValidator(world().openapi);
      try {
        await store.close();
        const storeDown = await healthOf(log, codec, store);
        expect(storeDown.status).toBe(503);
        expect(matchesDocument(storeDown.body), JSON.stringify(storeDown.body)).toBe(true);
        expect(storeDown.body.status).toBe('degraded');
        expect(storeDown.body.providers).toEqual([
          expect.objectContaining({ name: 'event_log', status: 'ok', error: null }),
          expect.objectContaining({ name: 'analytical_store', status: 'down', error: 'STORE_CLOSED' }),
        ]);
        expect(storeDown.body.freshness).toEqual([]);

        // A store that never answers is down once its probe times out.
        const hanging = Object.create(store, { query: { value: () => new Promise<never>(() => {}) } }) as AnalyticalStore<ProjectionTables>;
        const storeHangs = await healthOf(log, codec, hanging);
        expect(storeHangs.status).toBe(503);
        expect(storeHangs.body.providers[1]).toMatchObject({ name: 'analytical_store', status: 'down', error: 'TIMEOUT' });
        expect(storeHangs.body.providers[1].latency_ms).toBeGreaterThanOrEqual(PROBE_TIMEOUT_MS - 1);

        // The file log's directory gone: listing its topics fails.
        await log.close();
        await rm(join(dir, 'log'), { recursive: true, force: true });
        const bothDown = await healthOf(log, codec, store);
        expect(bothDown.status).toBe(503);
        expect(matchesDocument(bothDown.body)).toBe(true);
        expect(bothDown.body.providers[0]).toMatchObject({ name: 'event_log', status: 'down', error: 'ENOENT' });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('says where the stream is: not available yet, with its scope, events and limits', async () => {
      const res = await world().request('GET', '/v1/stream/info', { key: null });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'stream_info', dataset: 'live', livemode: true, available: false, url: null, required_scope: 'stream:read' });
      expect(res.body.message).toMatch(/not available/);
      expect(Object.keys(SCOPES)).toContain(res.body.required_scope);
      expect(res.body.events).toEqual(['signal.created', 'signal.ended', 'score.updated', 'cohort.convergence', 'narrative.shift']);
      // Spec §8.
      expect(res.body.limits).toEqual({
        max_subscriptions: 20,
        max_tokens_per_subscription: 100,
        max_connections_per_key: 10,
        max_client_messages: 30,
        client_message_window_sec: 10,
        ping_interval_sec: 25,
      });
    });

    it('serves a valid OpenAPI 3.1 document without a key, listing every endpoint with the scope it needs', async () => {
      const res = await fetch(`${world().base}/openapi.json`);
      expect(res.status).toBe(200);
      const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, Record<string, unknown>>>; 'x-scopes': unknown };
      const result = await new Validator().validate(doc as never);
      expect(result, JSON.stringify(result.errors ?? null).slice(0, 2000)).toMatchObject({ valid: true });
      expect(doc.openapi).toBe('3.1.0');
      expect(doc['x-scopes']).toEqual(SCOPES);

      const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, template: path.replace(/\{([^}]+)\}/g, ':$1'), op })),
      );
      expect(operations.map((o) => `${o.method} ${o.path}`)).toEqual(expect.arrayContaining(SPEC_ENDPOINTS));
      for (const { method, path, template, op } of operations) {
        const scope = scopeOf(method, template);
        if (PUBLIC_PATHS.has(path)) {
          expect(op.security, `${method} ${path} is public`).toEqual([]);
          expect(op['x-required-scope']).toBeUndefined();
        } else {
          expect(scope, `${method} ${path} has a scope in api/scopes.ts`).not.toBeNull();
          expect(op['x-required-scope'], `${method} ${path}`).toBe(scope);
          expect(op.security).toEqual([{ bearerKey: [scope] }, { headerKey: [scope] }]);
        }
      }
      // Every keyed endpoint of the spec sections served here is in the scope table.
      const keyed = SPEC_ENDPOINTS.filter((e) => !PUBLIC_PATHS.has(e.split(' ')[1]));
      for (const endpoint of keyed) {
        const [method, path] = endpoint.split(' ');
        expect(ENDPOINT_SCOPES.some((e) => e.method === method && e.path === path.replace(/\{([^}]+)\}/g, ':$1')), endpoint).toBe(true);
      }
    });
  });
}

/** GET /v1/health of an API over the given providers, on a socket of its own. */
async function healthOf(log: EventLog, codec: Codec, store: AnalyticalStore<ProjectionTables>): Promise<{ status: number; body: any }> {
  const api = createApi({ log, codec, store, logger: silentLogger, startedAt: Date.now() });
  const server: Server = api.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/health`);
    return { status: res.status, body: await res.json() };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await api.close();
  }
}

/** Checks a body against the document's Health schema, which a 503 of GET /v1/health carries too. */
function healthValidator(openapi: Record<string, unknown>): (body: unknown) => boolean {
  const ajv = new Ajv2020({ strict: false });
  // ajv-formats is CommonJS: under ESM its plugin is the `default` of the default import.
  ajvFormats.default(ajv);
  ajv.addSchema(openapi, 'openapi.json');
  const validate = ajv.compile({ $ref: 'openapi.json#/components/schemas/Health' });
  return (body) => validate(body);
}

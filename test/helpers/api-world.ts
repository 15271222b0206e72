import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { expect } from 'vitest';
import { createApi, type Api } from '../../api/app.ts';
import type { CliCommand } from '../../cli/command.ts';
import { keysCommand } from '../../cli/commands/keys.ts';
import { teamsCommand } from '../../cli/commands/teams.ts';
import { loadConfig, type Config } from '../../infra/config.ts';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import type { Codec } from '../../schemas/codec.ts';
import { openStore } from '../../projections/open-store.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { PROJECTIONS } from '../../projections/index.ts';
import { startLiveProjections, type ProjectionSet } from '../../projections/runtime/runner.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import { SCOPE_NAMES } from '../../api/scopes.ts';
import { runCommand } from './cli.ts';
import { startLiveStream, type LiveStream } from './live-stream.ts';
import { runQuantToEnd } from './pipeline.ts';
import { openEmbedded, silentLogger } from './runtime-fixture.ts';
import { waitFor } from '../../infra/wait.ts';
import { ROOT } from './project-files.ts';
import { loadSecretBox, SecretBox } from '../../webhooks/secret-box.ts';

/**
 * One simulated world served by the real API over a real socket, for the e2e suite: three
 * days of the simulated market and social world, the quant engine and the projections run
 * to its end, live projections left running (so keys created through control events are
 * applied while the API serves), and an HTTP client that checks every response against the
 * /openapi.json the server itself serves. The API is configured as the api role configures it.
 */

export type Plan = 'free' | 'pro' | 'team';

export interface ApiResponse {
  status: number;
  headers: Headers;
  // Tests read response bodies freely; the OpenAPI check has already validated their shape.
  body: any;
}

export interface RequestOptions {
  /** The key to send as a bearer token; defaults to keys.team, null sends none. */
  key?: string | null;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is (with contentType, default application/json). */
  rawBody?: string;
  contentType?: string;
}

export interface ApiWorld {
  base: string;
  store: AnalyticalStore<ProjectionTables>;
  /** Event time where the seeded history ends; the API's clock starts there. */
  endMs: number;
  keys: { team: string; free: string; pro: string };
  /** A key made with `tqa keys create`, which returns once the key works. */
  createKey(plan: Plan, scopes: readonly string[], name?: string, teamId?: string): Promise<{ id: string; key: string }>;
  /** A team made with `tqa teams create`; returns its id. */
  createTeam(name: string): Promise<string>;
  request(method: string, path: string, options?: RequestOptions): Promise<ApiResponse>;
  expectError(res: ApiResponse, status: number, code: string): void;
  /** The world's data dir, config, log and codec, for roles a test runs beside the API. */
  dir: string;
  config: Config;
  log: FileEventLog;
  codec: Codec;
  /** The served OpenAPI document. */
  openapi: Record<string, any>;
  stop(): Promise<void>;
}

export const WORLD = { seed: 4242, days: 3, endMs: Date.UTC(2026, 3, 1), tokens: 40, authors: 300 } as const;

const RATE_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

export interface ApiWorldOptions {
  /** Serve the webhook writes, trusting this certificate (a test receiver's) and private addresses. */
  webhookReceiverCa?: string;
  /** Also run the public-events processor live and the WebSocket stream it feeds, which /v1/stream/info then points at. */
  stream?: boolean;
}

export async function startApiWorld(options: ApiWorldOptions = {}): Promise<ApiWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-api-'));
  const config: Config = loadConfig({ TQA_DATA_DIR: dir });
  const { log, codec } = await openEmbedded(dir);
  await seedHistory({ log, codec, dataDir: dir, seed: WORLD.seed, days: WORLD.days, endMs: WORLD.endMs, tokens: WORLD.tokens, authors: WORLD.authors });
  await runQuantToEnd(dir, log, codec);
  const store = await openStore(config, silentLogger);
  const projections = startLiveProjections({ config, projections: PROJECTIONS, log, codec, store, logger: silentLogger });
  await waitFor(() => projections.caughtUp(), 'the live projections', 240_000);
  const stream = options.stream ? await startLiveStream(dir, log, codec, store) : null;

  const clockStart = Date.now();
  const consoleDir = join(ROOT, 'dist', 'console');
  // Webhooks as the api role configures them. With a receiver's CA, deliveries reach a local
  // HTTPS receiver; without one there is no DNS: a host name never resolves here.
  const webhooks = options.webhookReceiverCa === undefined
    ? { codec, secrets: await loadSecretBox(config), policy: { allowPrivate: false }, resolve: async (host: string) => Promise.reject(new Error(`no DNS in the test world: ${host}`)) }
    : { codec, secrets: new SecretBox(randomBytes(32)), policy: { allowPrivate: true }, ca: options.webhookReceiverCa };
  const api = createApi({ log, codec, store, logger: silentLogger, startedAt: WORLD.endMs, now: () => WORLD.endMs + (Date.now() - clockStart), consoleDir, webhooks, streams: stream?.directory });
  const server = api.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const world = new World(dir, config, log, codec, store, projections, stream, api, server, base);
  await world.init();
  return world;
}

class World implements ApiWorld {
  readonly endMs = WORLD.endMs;
  keys = { team: '', free: '', pro: '' };
  openapi: Record<string, any> = {};
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    readonly dir: string,
    readonly config: Config,
    readonly log: FileEventLog,
    readonly codec: Codec,
    readonly store: AnalyticalStore<ProjectionTables>,
    private readonly projections: ProjectionSet,
    private readonly stream: LiveStream | null,
    private readonly api: Api,
    private readonly server: Server,
    readonly base: string,
  ) {
    // ajv-formats is CommonJS: under ESM its plugin is the `default` of the default import.
    ajvFormats.default(this.ajv);
  }

  async init(): Promise<void> {
    const res = await fetch(`${this.base}/openapi.json`);
    expect(res.status).toBe(200);
    this.openapi = (await res.json()) as Record<string, any>;
    this.ajv.addSchema(this.openapi, 'openapi.json');
    this.keys = {
      team: (await this.createKey('team', SCOPE_NAMES, 'team test key')).key,
      pro: (await this.createKey('pro', SCOPE_NAMES, 'pro test key')).key,
      free: (await this.createKey('free', SCOPE_NAMES, 'free test key')).key,
    };
  }

  async createKey(plan: Plan, scopes: readonly string[], name = `test ${plan}`, teamId?: string): Promise<{ id: string; key: string }> {
    const team = teamId === undefined ? [] : ['--team', teamId];
    return JSON.parse(await this.cli(keysCommand, ['create', '--plan', plan, '--scopes', scopes.join(','), '--name', name, '--json', ...team])) as { id: string; key: string };
  }

  async createTeam(name: string): Promise<string> {
    return (JSON.parse(await this.cli(teamsCommand, ['create', '--name', name, '--json'])) as { id: string }).id;
  }

  private cli(command: CliCommand, args: string[]): Promise<string> {
    return runCommand(command, this.config, args);
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? this.keys.team : options.key;
    if (key !== null) headers.Authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['Content-Type'] = options.contentType ?? 'application/json';
    const res = await fetch(this.base + path, { method, headers, body });
    const text = await res.text();
    const parsed: unknown = text === '' ? undefined : JSON.parse(text);
    expect(res.headers.get('x-request-id'), 'X-Request-Id').toMatch(/^req_[0-9a-f]+$/);
    for (const h of RATE_HEADERS) expect(res.headers.get(h), `${h} on ${method} ${path}`).not.toBeNull();
    this.checkAgainstOpenApi(method, path, res.status, parsed);
    return { status: res.status, headers: res.headers, body: parsed };
  }

  expectError(res: ApiResponse, status: number, code: string): void {
    expect({ status: res.status, code: res.body?.error?.code }, JSON.stringify(res.body)).toEqual({ status, code });
    expect(res.body.error.message).toEqual(expect.any(String));
    expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
    if (code === 'VALIDATION') expect(res.body.error.details.issues.length).toBeGreaterThan(0);
  }

  /** Validates a body against the document's schema for the operation and status; an undocumented status fails. */
  private checkAgainstOpenApi(method: string, path: string, status: number, body: unknown): void {
    const template = this.templateOf(path.split('?')[0]);
    const op = template && this.openapi.paths[template][method.toLowerCase()];
    // Unknown paths and wrong methods have no operation; their bodies are the shared error responses.
    if (op && status === 304) {
      expect(op.responses['304'], `${method} ${template} documents 304`).toBeDefined();
      expect(body, `${method} ${path} → 304 has no body`).toBeUndefined();
      return;
    }
    const pointer = op
      ? this.responsePointer(template!, method.toLowerCase(), op, status)
      : `#/components/responses/${status === 405 ? 'METHOD_NOT_ALLOWED' : status === 404 ? 'NOT_FOUND' : status === 429 ? 'RATE_LIMITED' : 'INTERNAL'}/content/application~1json/schema`;
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi.json${pointer}` });
      this.validators.set(pointer, validate);
    }
    if (!validate(body)) {
      expect.fail(`${method} ${path} → ${status}: body does not match ${pointer}: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
    }
  }

  private responsePointer(template: string, method: string, op: Record<string, any>, status: number): string {
    const response = op.responses[String(status)];
    expect(response, `${method.toUpperCase()} ${template} documents status ${status}`).toBeDefined();
    const escape = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');
    if (typeof response.$ref === 'string') return `${response.$ref}/content/application~1json/schema`;
    return `#/paths/${escape(template)}/${method}/responses/${status}/content/application~1json/schema`;
  }

  /** The document's path template for a concrete path; literal segments win over parameters. */
  private templateOf(path: string): string | undefined {
    const candidates = Object.keys(this.openapi.paths).filter((t) =>
      new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
    );
    const params = (t: string) => (t.match(/\{/g) ?? []).length;
    return candidates.sort((a, b) => params(a) - params(b))[0];
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.api.close();
    await this.stream?.stop();
    await this.projections.stop();
    await this.store.close();
    await this.log.close();
    await rm(this.dir, { recursive: true, force: true });
  }
}

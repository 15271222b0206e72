import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket, type ClientOptions } from 'ws';
import { keysCommand } from '../../cli/commands/keys.ts';
import { appendEvent } from '../../projections/control-events.ts';
import { loadConfig, type Config } from '../../infra/config.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { sql, table } from '../../infra/store/sql-literal.ts';
import { openStore } from '../../projections/open-store.ts';
import { startProjections, type ProjectionSet } from '../../projections/runtime/runner.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import { tokens } from '../../presenters/tokens-table.ts';
import { tokensProjection } from '../../projections/tokens.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { PublicEvent, TokenMeta } from '../../schemas/records.ts';
import { runCommand } from '../helpers/cli.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * What the stream's end-to-end tests share: a data dir with an embedded log, the store with
 * keys and tokens applied by their live projections, public events appended as the
 * public-events processor would, and a `ws` client that records what it receives.
 */
export interface StreamWorld {
  dir: string;
  config: Config;
  log: FileEventLog;
  codec: Codec;
  store: AnalyticalStore<ProjectionTables>;
  /** A key made with `tqa keys create`, which works as soon as the command returns. */
  createKey(scopes: readonly string[]): Promise<{ id: string; key: string }>;
  publish(...events: PublicEvent[]): Promise<void>;
  close(): Promise<void>;
}

export const TOKENS = [
  { tokenId: 'tk_alpha', symbol: 'ALPHA' },
  { tokenId: 'tk_beta', symbol: 'BETA' },
];

export async function openStreamWorld(): Promise<StreamWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-stream-'));
  const config = loadConfig({ TQA_DATA_DIR: dir });
  const { log, codec } = await openEmbedded(dir);
  const store = await openStore(config, silentLogger);
  const projections: ProjectionSet = startProjections([tokensProjection], { log, codec, store, logger: silentLogger, deadLetters: 'produce' });
  for (const t of TOKENS) {
    const meta: TokenMeta = { ...t, ts: Date.UTC(2026, 5, 1), name: t.symbol, chain: 'base', address: `0x${t.symbol.toLowerCase().padEnd(40, '0')}`, logoUrl: null, status: 'active', narrative: 'ai', sourceUrl: null };
    await appendEvent(log, codec, TOPICS.tokens.name, t.tokenId, meta);
  }
  await waitFor(async () => (await store.query(sql`SELECT 1 AS x FROM ${table(tokens)}`)).length === TOKENS.length, 'tokens projected');
  return {
    dir,
    config,
    log,
    codec,
    store,
    async createKey(scopes) {
      return JSON.parse(await runCommand(keysCommand, config, ['create', '--plan', 'team', '--scopes', scopes.join(','), '--name', 'stream test', '--json'])) as { id: string; key: string };
    },
    async publish(...events) {
      const topic = TOPICS.publicEvents.name;
      const records = await Promise.all(events.map(async (e) => ({ key: e.tokenId ?? 'none', value: await codec.encode(topic, e), timestamp: e.ts })));
      await log.append(topic, records);
    },
    async close() {
      await projections.stop();
      await store.close();
      await log.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

let seq = 0;
/** A public event with an id that grows with each call. */
export function publicEvent(type: PublicEvent['type'], tokenId: string | null, extra: Partial<PublicEvent> = {}, padding = 0): PublicEvent {
  return {
    eventId: `ev_${(++seq).toString(16).padStart(24, '0')}`,
    type,
    ts: Date.UTC(2026, 5, 1) + seq,
    dataset: 'live',
    tokenId,
    ownerKeyId: null,
    teamId: null,
    data: JSON.stringify({ object: 'event_data', seq, token_id: tokenId, padding: 'x'.repeat(padding) }),
    ...extra,
  };
}

/** A `ws` client that records every frame it receives and how it closed. */
export class Client {
  readonly frames: any[] = [];
  closed: { code: number; reason: string } | null = null;
  constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => this.frames.push(JSON.parse(String(data))));
    socket.on('close', (code, reason) => (this.closed = { code, reason: String(reason) }));
  }
  static async open(url: string, as: string | null, options: ClientOptions = {}, query = ''): Promise<Client> {
    const socket = new WebSocket(url + query, { ...options, headers: { ...options.headers, ...(as === null ? {} : { Authorization: `Bearer ${as}` }) } });
    const client = new Client(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    await client.next((f) => f.type === 'welcome');
    return client;
  }
  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }
  next(match: (frame: any) => boolean, what = 'a frame'): Promise<any> {
    return waitFor(() => this.frames.find(match), what);
  }
  of(type: string): any[] {
    return this.frames.filter((f) => f.type === type);
  }
  ids(): string[] {
    return this.of('event').map((f) => f.id as string);
  }
  async subscribe(events: string[], tokens: string[] = [], resume?: string): Promise<any> {
    const ref = `r${++seq}`;
    this.send({ type: 'subscribe', id: ref, events, tokens, ...(resume === undefined ? {} : { resume }) });
    return this.next((f) => f.ref === ref, 'the subscribe answer');
  }
  close(): void {
    this.socket.close();
  }
}

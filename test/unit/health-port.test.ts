import type { Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatchUpMonitor } from '../../cli/catch-up.ts';
import { startHealthPort } from '../../cli/health-port.ts';
import { loadConfig } from '../../infra/config.ts';
import type { EventLog } from '../../infra/log/port.ts';
import { StoreError } from '../../infra/store/errors.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { openStore } from '../../projections/open-store.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';

/** GET /healthz of `tqa start` over real HTTP, a file log and a DuckDB store. */
describe('the health port', () => {
  let dir: string;
  let log: EventLog;
  let store: AnalyticalStore;
  const servers: Server[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-healthz-'));
    ({ log } = await openEmbedded(join(dir, 'log')));
    store = await openStore(loadConfig({ TQA_DATA_DIR: dir }), silentLogger);
  });
  afterAll(async () => {
    for (const server of servers) server.close();
    await store.close();
    await log.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function healthPort(holds: AnalyticalStore | undefined | (() => Promise<AnalyticalStore>)): Promise<string> {
    const catchUp = new CatchUpMonitor({ log, logger: silentLogger });
    const store = typeof holds === 'function' ? holds : () => (holds === undefined ? undefined : Promise.resolve(holds));
    const server = await startHealthPort({ port: 0, roles: ['processors'], log, store, catchUp, logger: silentLogger });
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('answers 200 while the log and the store the process holds answer, naming the roles', async () => {
    const response = await fetch(`${await healthPort(store)}/healthz`);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ status: 'ok', roles: ['processors'], processing: null });
    expect(body.providers).toEqual([
      expect.objectContaining({ name: 'event_log', status: 'ok', error: null }),
      expect.objectContaining({ name: 'analytical_store', status: 'ok', error: null }),
    ]);
  });

  it('probes only the log in a process that holds no store', async () => {
    const body = await (await fetch(`${await healthPort(undefined)}/healthz`)).json();
    expect(body.providers.map((p: { name: string }) => p.name)).toEqual(['event_log']);
  });

  it('reports the store down when the store its roles need cannot be opened', async () => {
    const unreachable = () => Promise.reject(new StoreError('STORE_UNAVAILABLE', 'connect ECONNREFUSED', true));
    const response = await fetch(`${await healthPort(unreachable)}/healthz`);
    expect(response.status).toBe(503);
    expect((await response.json()).providers[1]).toMatchObject({ name: 'analytical_store', status: 'down', error: 'STORE_UNAVAILABLE' });
  });

  it('answers 503 naming the provider that is down, and 404 elsewhere', async () => {
    const closed = await openStore(loadConfig({ TQA_DATA_DIR: join(dir, 'closed') }), silentLogger);
    await closed.close();
    const base = await healthPort(closed);
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(503);
    const body = await response.json();
    expect(body.status).toBe('down');
    expect(body.providers[1]).toMatchObject({ name: 'analytical_store', status: 'down', error: 'STORE_CLOSED' });
    expect((await fetch(`${base}/v1/health`)).status).toBe(404);
  });
});

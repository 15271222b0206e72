import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClickHouseServer, type ClickHouseServer } from '../../infra/peers/clickhouse-server.ts';
import { expectSameOutputs, KafkaWorlds, runThroughStoreOutage, runWithoutFaults, type World } from './crash-recovery.scenario.ts';

/** How long the store stays down: long enough for every retry and back-off path to run many times. */
const OUTAGE_MS = 60_000;

describe('the ClickHouse server killed for a minute during a catch-up, on the Kafka protocol broker', () => {
  let worlds: KafkaWorlds;
  let server: ClickHouseServer;

  beforeAll(async () => {
    [worlds, server] = await Promise.all([KafkaWorlds.start(), startClickHouseServer()]);
  });
  afterAll(async () => {
    await Promise.all([worlds?.close(), server?.stop()]);
  });

  /** A world on a broker of its own and a database of its own on the one server. */
  async function seededWorld(database: string): Promise<World> {
    const env = { TQA_STORE: 'clickhouse', CLICKHOUSE_URL: server.url, CLICKHOUSE_DATABASE: database };
    return (await worlds.seeded({ killCheckpointMs: 0, standby: false, env })).world;
  }

  it('answers 503 naming the store while it is down, keeps every role running, and then stores exactly the fault-free rows', async () => {
    const reference = await runWithoutFaults(await seededWorld('reference'));
    expect(reference.tables.latest_snapshots.length).toBeGreaterThan(0);
    const outage = await runThroughStoreOutage(await seededWorld('outage'), server, OUTAGE_MS);

    expect(outage.projectionsDoneAtKill, 'the store went down after the projections had stored everything').toBe(false);
    expect(outage.healthDuring.body.status).toBe('degraded');
    expect(outage.healthDuring.body.providers.find((p) => p.name === 'analytical_store')?.status).toBe('down');
    expect(outage.healthDuring.body.providers.find((p) => p.name === 'event_log')?.status).toBe('ok');
    expect(outage.engineDoneDuring, 'the engine needs no store: it finishes while the store is down').toBe(true);
    expect(outage.runningAfter).toEqual(['engine', 'projections', 'api']);
    expect(outage.healthAfter.body.providers.every((p) => p.status === 'ok')).toBe(true);
    // The API made its demo key in the outage run only: an acknowledged write stored once the store was back.
    const { api_keys: referenceKeys, ...referenceTables } = reference.tables;
    const { api_keys: keys, ...tables } = outage.outputs.tables;
    expect([referenceKeys.length, keys.length]).toEqual([0, 1]);
    expectSameOutputs({ ...outage.outputs, tables }, { ...reference, tables: referenceTables });
  }, 900_000);
});

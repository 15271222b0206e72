import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import { freePorts } from '../../infra/peers/clickhouse-server.ts';
import { waitFor } from '../../infra/wait.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { RoleProcesses } from '../helpers/role-processes.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';
import { mountTmpfs, type TestDisk } from '../helpers/tmpfs.ts';

/**
 * `tqa start` (every role, as `npm start` runs it) on a disk that fills while its world runs
 * live at 60×: the service stays up and answers; the feed, the stages' checkpoints and the
 * consumers' commits fail with ENOSPC and try again; once space returns the feed goes on and
 * every stage catches up. The disk is a tmpfs mounted for the test (the suite runs as root, as
 * CI does), filled by a file written until the disk refuses more.
 */

const processes = new RoleProcesses();
let disk: TestDisk;
let dataDir: string;
let env: NodeJS.ProcessEnv;
let base: string;
/** The service's log opened from here, closed after the test. */
let reader: FileEventLog | undefined;

async function health(): Promise<{ status: string } | undefined> {
  try {
    return (await (await fetch(`${base}/v1/health`)).json()) as { status: string };
  } catch {
    return undefined; // not listening yet
  }
}

/** Writes `file` until the disk has no room left; returns the bytes written. */
async function fillDisk(file: string): Promise<number> {
  const handle = await open(file, 'w');
  const chunk = Buffer.alloc(1024 * 1024, 1);
  let written = 0;
  try {
    for (;;) written += (await handle.write(chunk)).bytesWritten;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    return written;
  } finally {
    await handle.close();
  }
}

/** The JSON log lines of a process's stderr, the last one only once it is whole. */
function logLines(stderr: string): { msg: string; err?: { code?: string } }[] {
  return stderr
    .slice(0, stderr.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; err?: { code?: string } });
}

/** Records appended to the feed's market topic so far, over its partitions. */
async function marketEnd(log: FileEventLog): Promise<number> {
  return (await log.endOffsets(TOPICS.market.name)).reduce((sum, p) => sum + p.offset, 0);
}

beforeAll(async () => {
  disk = await mountTmpfs('1g');
  dataDir = join(disk.dir, 'data');
  const [port, streamPort] = await freePorts(2);
  base = `http://127.0.0.1:${port}`;
  env = {
    ...process.env,
    TQA_DATA_DIR: dataDir,
    PORT: String(port),
    STREAM_PORT: String(streamPort),
    TQA_SIM: 'auto',
    TQA_SIM_DAYS: '0.1',
    TQA_SIM_SPEED: '60',
    TQA_LOG: 'embedded',
    TQA_STORE: 'duckdb',
    LOG_LEVEL: 'info',
  };
});

afterAll(async () => {
  await processes.stopAll();
  await reader?.close();
  await disk?.remove();
});

describe('tqa start on a disk that fills', () => {
  it('stays up while the disk is full, and goes on and catches up once space returns, its log whole', async () => {
    const service = processes.start(['start'], env);
    await waitFor(async () => (await health())?.status === 'ok', 'the first start to catch up', 180_000);
    // The service's log, read from here as another process of the data dir would.
    const log = (reader = await FileEventLog.open({ dir: dataDir, fsync: 'never', segmentBytes: 256 * 1024, logger: silentLogger }));

    const filler = join(disk.dir, 'filler');
    expect(await fillDisk(filler)).toBeGreaterThan(0);
    // The feed meets it in an append or in saving its state, whichever comes first.
    const feedFailure = await waitFor(() => logLines(service.stderr()).find((line) => line.msg.startsWith('simulated live feed failed')), 'the feed to meet the full disk', 60_000);
    expect(feedFailure.err?.code).toBe('ENOSPC');

    // Full: the API still answers from what it has.
    const key = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
    const tokens = await fetch(`${base}/v1/quant/tokens?limit=5`, { headers: { Authorization: `Bearer ${key}` } });
    expect(tokens.status).toBe(200);
    expect(((await tokens.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    const endWhileFull = await marketEnd(log);

    await rm(filler);
    await waitFor(async () => (await marketEnd(log)) > endWhileFull && (await health())?.status === 'ok', 'the feed to go on and every stage to catch up', 180_000);
    expect(await processes.stop(service, 'SIGTERM')).toBe(0);

    // Every partition of every topic reads whole to its end: no torn or missing record.
    for (const topic of await log.listTopics()) {
      const ends = await log.endOffsets(topic);
      const starts = await log.startOffsets(topic);
      const records = await readTopic(log, topic);
      const expected = ends.reduce((sum, e, i) => sum + e.offset - starts[i].offset, 0);
      expect({ topic, records: records.length }).toEqual({ topic, records: expected });
    }
  }, 480_000);
});

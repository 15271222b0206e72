import { spawn, type ChildProcess } from 'node:child_process';
import { access, constants, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { aptInstall, peerStop, signalGroup } from './peer-process.ts';
import { waitFor } from '../wait.ts';

export interface ClickHouseServer {
  /** HTTP interface, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Kills the server with SIGKILL, as a crash of its machine would; its data stays for restart(). */
  kill(): Promise<void>;
  /** Starts the killed server again on the same ports and data, and waits until it answers. */
  restart(): Promise<void>;
  /** Stops the server and deletes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts a private clickhouse-server (Debian's 18.16 package, or a newer `clickhouse`
 * binary) on free loopback ports, with config, data and logs in a new temp directory.
 * Installs the package with apt when the machine has no server binary. ClickHouse runs
 * as root without complaint, so no user switch is needed. The server sits behind a small
 * shell guard that stops it when our stdin pipe closes, so it dies with this process even
 * when its parent (a test runner, `tqa peers`) is killed.
 */
export async function startClickHouseServer(): Promise<ClickHouseServer> {
  const command = await serverCommand();
  // Another process may take a port between our probe and the server's bind: try again.
  for (let attempt = 1; ; attempt++) {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-clickhouse-'));
    try {
      return await startIn(dir, command);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      if (attempt >= 3 || !(err instanceof EarlyExit)) throw err;
    }
  }
}

class EarlyExit extends Error {}

async function startIn(dir: string, command: string[]): Promise<ClickHouseServer> {
  const [httpPort, tcpPort] = await freePorts(2);
  for (const sub of ['data', 'tmp', 'user_files', 'format_schemas', 'log']) await mkdir(join(dir, sub));
  await writeFile(join(dir, 'config.xml'), serverConfig(dir, httpPort, tcpPort));
  await writeFile(join(dir, 'users.xml'), USERS);
  const url = `http://127.0.0.1:${httpPort}`;
  let running = await launch(dir, command, url);
  return {
    url,
    async kill() {
      signalGroup(running.child, 'SIGKILL');
      await running.stop();
    },
    async restart() {
      running = await launch(dir, command, url);
    },
    async stop() {
      await running.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs the server configured in `dir` and resolves once it answers on `url`. */
async function launch(dir: string, command: string[], url: string): Promise<{ child: ChildProcess; stop: () => Promise<void> }> {
  // The shell lives exactly as long as the server (`wait`), so its exit reports the server's.
  // A watcher stops the server once our stdin pipe closes (stop() or our death); it reads the
  // pipe through fd 3 because background jobs get /dev/null as stdin.
  const guard = [
    'exec 3<&0',
    '"$@" 3<&- & k=$!',
    '(cat <&3 >/dev/null; kill $k 2>/dev/null) & c=$!',
    'exec 3<&-',
    'wait $k; s=$?',
    'kill $c 2>/dev/null',
    'exit $s',
  ].join('\n');
  const child = spawn('sh', ['-c', guard, 'clickhouse-guard', ...command, `--config-file=${join(dir, 'config.xml')}`], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  const stop = peerStop(child, { onExit: 'SIGKILL', escalate: { signal: 'SIGKILL', afterMs: 15_000 } });
  try {
    await waitFor(async () => {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new EarlyExit(`clickhouse-server exited during start-up: ${await errorLogTail(dir)}`);
      }
      return answersSelectOne(url);
    }, `clickhouse-server to answer SELECT 1 on ${url}`, 60_000);
    return { child, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function answersSelectOne(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/?query=SELECT%201`, { signal: AbortSignal.timeout(1_000) });
    return response.ok && (await response.text()).trim() === '1';
  } catch {
    return false;
  }
}

async function errorLogTail(dir: string): Promise<string> {
  const text = await readFile(join(dir, 'log', 'server.err.log'), 'utf8').catch(() => '(no error log)');
  return text.slice(-2000);
}

export function freePorts(count: number): Promise<number[]> {
  const one = (): Promise<{ port: number; close: () => Promise<void> }> =>
    new Promise((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        if (address === null || typeof address === 'string') return reject(new Error('no port assigned'));
        resolve({ port: address.port, close: () => new Promise((done) => server.close(() => done())) });
      });
    });
  // Hold all sockets open until every port is known, so the ports differ.
  return (async () => {
    const held = [];
    for (let i = 0; i < count; i++) held.push(await one());
    await Promise.all(held.map((h) => h.close()));
    return held.map((h) => h.port);
  })();
}

function xmlText(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function serverConfig(dir: string, httpPort: number, tcpPort: number): string {
  const path = (sub: string): string => xmlText(join(dir, sub) + '/');
  // <yandex> is the root 18.16 knows; newer servers still accept it.
  return `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>${xmlText(join(dir, 'log', 'server.log'))}</log>
    <errorlog>${xmlText(join(dir, 'log', 'server.err.log'))}</errorlog>
    <size>10M</size>
    <count>1</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <path>${path('data')}</path>
  <tmp_path>${path('tmp')}</tmp_path>
  <user_files_path>${path('user_files')}</user_files_path>
  <format_schema_path>${path('format_schemas')}</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <keep_alive_timeout>3</keep_alive_timeout>
  <max_concurrent_queries>50</max_concurrent_queries>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
</yandex>
`;
}

const USERS = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>2000000000</max_memory_usage>
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks>
        <ip>127.0.0.1</ip>
        <ip>::1</ip>
      </networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default></default>
  </quotas>
</yandex>
`;

/** The argv that runs a server: Debian's clickhouse-server, or the multi-tool `clickhouse server`. */
async function serverCommand(): Promise<string[]> {
  const found = await findServerCommand();
  if (found) return found;
  await aptInstall('clickhouse-server');
  const installed = await findServerCommand();
  if (!installed) throw new Error('no clickhouse-server binary after apt-get install clickhouse-server');
  return installed;
}

async function findServerCommand(): Promise<string[] | undefined> {
  // /usr/sbin is where Debian puts the server and is often missing from a non-root PATH.
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/bin', '/usr/local/bin'].filter(Boolean);
  for (const dir of dirs) {
    if (await isExecutable(join(dir, 'clickhouse-server'))) return [join(dir, 'clickhouse-server')];
  }
  for (const dir of dirs) {
    if (await isExecutable(join(dir, 'clickhouse'))) return [join(dir, 'clickhouse'), 'server'];
  }
  return undefined;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

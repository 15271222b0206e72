import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { aptInstall, peerStop, signalGroup } from './peer-process.ts';
import { waitFor } from '../wait.ts';

const run = promisify(execFile);

export interface MockBroker {
  /** bootstrap address, host:port */
  brokers: string;
  /**
   * Freezes the broker (SIGSTOP): connections stay open but nothing is answered, as with a
   * broker hung or cut off by the network. The mock keeps nothing across a restart, so this is
   * how a test takes a broker away and gives it back with its log.
   */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/**
 * Starts librdkafka's mock cluster through kcat: a real Kafka-protocol broker (one node,
 * topics auto-created with 4 partitions, nothing persisted). Installs kcat with apt when the
 * machine lacks it. The broker runs under a small shell guard that kills it once our stdin
 * closes, so it dies with this process even when that is killed.
 *
 * What librdkafka 2.0.2's mock does not do like Kafka: no CreateTopics, ListGroups or
 * DescribeGroups; InitProducerId fails for kafkajs (no idempotent producer); it keeps only
 * about 5 MB per partition, dropping the oldest records; after a member leaves a group it
 * waits (session timeout - 1 s) before re-balancing, and refuses commits meanwhile.
 */
export async function startMockBroker(): Promise<MockBroker> {
  await ensureKcat();
  // `cat` returns when the pipe from this process closes (stop() or our death); the trap
  // then takes kcat down with it. A new process group lets stop() signal all three at once.
  // Only kcat keeps stderr open: its end says kcat is gone (see reportUnexpectedEnd).
  const guard = 'kcat "$@" & k=$!; exec 2>/dev/null; trap \'kill $k 2>/dev/null\' EXIT; cat >/dev/null';
  const child = spawn(
    'sh',
    // -E: kcat's own consumer of the mock would otherwise end kcat, mock and all, on its first
    // error, such as the request timed out by a freeze (pause()) longer than 60 s.
    ['-c', guard, 'mock-broker', '-b', 'localhost:1', '-X', 'test.mock.num.brokers=1', '-E', '-C', '-t', 'keepalive', '-o', 'end', '-u'],
    { stdio: ['pipe', 'ignore', 'pipe'], detached: true },
  );
  // A mock broker has nothing to flush: its group is signalled as soon as the pipe is closed.
  const stop = peerStop(child, { onExit: 'SIGTERM', escalate: { signal: 'SIGTERM', afterMs: 0 } });

  let stopping = (): void => undefined;
  try {
    const brokers = await bootstrapAddress(child);
    stopping = reportUnexpectedEnd(child, brokers);
    await waitUntilServing(brokers);
    const resume = () => signalGroup(child, 'SIGCONT');
    // A frozen broker would not see its pipe close nor take SIGTERM.
    return { brokers, pause: () => signalGroup(child, 'SIGSTOP'), resume, stop: () => (stopping(), resume(), stop()) };
  } catch (err) {
    stopping();
    await stop();
    throw err;
  }
}

/** Reads stderr until librdkafka names the mock's address, then keeps draining it so kcat never blocks on a full pipe. */
function bootstrapAddress(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString('utf8');
      // notice level: "replaced with HOST:PORT"; debug=mock: "bootstrap.servers=HOST:PORT"
      const match = /(?:replaced with |bootstrap\.servers=)(\d+\.\d+\.\d+\.\d+:\d+)/.exec(seen);
      if (match) {
        child.removeListener('exit', onExit);
        child.stderr?.removeListener('data', onData);
        resolve(match[1]);
      } else if (seen.length > 64 * 1024) {
        seen = seen.slice(-1024);
      }
    };
    const onExit = (code: number | null): void =>
      reject(new Error(`kcat mock broker exited (code ${code}) before naming its address: ${seen.slice(-2000)}`));
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', reject);
  });
}

/**
 * Keeps draining kcat's stderr (so it never blocks on a full pipe) and, should kcat end while
 * no stop was asked for, writes the end of what it said to this process's stderr: a test then
 * fails on refused connections, and this says where they came from. Returns what stop() calls
 * first.
 */
function reportUnexpectedEnd(child: ChildProcess, brokers: string): () => void {
  let stopping = false;
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString('utf8')).slice(-4_000)));
  child.stderr?.once('end', () => {
    if (!stopping) process.stderr.write(`the kcat mock broker at ${brokers} ended by itself; the last it wrote:\n${tail}\n`);
  });
  return () => (stopping = true);
}

async function waitUntilServing(brokers: string): Promise<void> {
  const admin = new Kafka({ clientId: 'mock-broker-probe', brokers: [brokers], logLevel: logLevel.NOTHING }).admin();
  try {
    await waitFor(async () => {
      try {
        await admin.connect();
        await admin.fetchTopicMetadata();
        return true;
      } catch {
        return false;
      }
    }, 'the kcat mock broker to serve metadata');
  } finally {
    await admin.disconnect();
  }
}

async function ensureKcat(): Promise<void> {
  if (await hasKcat()) return;
  await aptInstall('kcat');
  if (!(await hasKcat())) throw new Error('kcat is still missing after apt-get install kcat');
}

async function hasKcat(): Promise<boolean> {
  try {
    await run('kcat', ['-V']);
    return true;
  } catch {
    return false;
  }
}

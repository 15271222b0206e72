// The HTTP load generator of `npm run bench -- api`, run as a child process (bench/api.ts forks
// it) so that the client does not share the server's event loop. It answers each load spec
// received over IPC with the latencies and statuses it measured.
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface LoadSpec {
  base: string;
  method: 'GET' | 'POST';
  /** Requests cycle through these paths and keys (null: no key). */
  paths: string[];
  keys: (string | null)[];
  /** Request bodies, cycled through with the paths; none for a GET. */
  bodies?: string[];
  connections: number;
  warmupMs: number;
  durationMs: number;
  /** Requests per second over all connections; unset: as fast as the server answers. */
  rate?: number;
}

export interface LoadResult {
  latenciesMs: number[];
  statuses: Record<string, number>;
  /** Requests that got no answer (connection errors). */
  failures: number;
  elapsedMs: number;
}

async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const url = new URL(spec.base);
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  let sent = 0;
  const send = (): Promise<number> => {
    const i = sent++;
    const key = spec.keys[i % spec.keys.length];
    const headers: Record<string, string> = key === null ? {} : { Authorization: `Bearer ${key}` };
    const body = spec.bodies?.[i % spec.bodies.length];
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    return new Promise((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: spec.paths[i % spec.paths.length], method: spec.method, agent, headers }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      });
      req.once('error', reject);
      req.end(body);
    });
  };

  const latenciesMs: number[] = [];
  const statuses: Record<string, number> = {};
  let failures = 0;
  // Paced connections send one request per interval, from a common start; late ones go at once.
  const interval = spec.rate === undefined ? 0 : (spec.connections / spec.rate) * 1000;
  const connection = async (from: number, until: number, record: boolean, offset: number) => {
    for (let k = 0; ; k++) {
      const due = from + offset + k * interval;
      if (due >= until) return;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const started = performance.now();
      if (started >= until) return;
      try {
        const status = await send();
        if (record) {
          latenciesMs.push(performance.now() - started);
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      } catch {
        if (record) failures++;
      }
    }
  };
  const phase = (ms: number, record: boolean) => {
    const from = performance.now();
    return Promise.all(Array.from({ length: spec.connections }, (_, c) => connection(from, from + ms, record, (c * interval) / spec.connections)));
  };

  await phase(spec.warmupMs, false);
  const start = performance.now();
  await phase(spec.durationMs, true);
  const elapsedMs = performance.now() - start;
  agent.destroy();
  return { latenciesMs, statuses, failures, elapsedMs };
}

process.on('message', (spec: LoadSpec) => {
  runLoad(spec).then(
    (result) => process.send!(result),
    (err: unknown) => {
      process.stderr.write(`load generator failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
});

import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LoadResult, LoadSpec } from './api-load.ts';

/**
 * The HTTP load of the API benchmarks: the forked load generator (bench/api-load.ts), so the
 * client never shares the server's event loop, and what its results say.
 */
export class LoadClient {
  private readonly child: ChildProcess = fork(new URL('./api-load.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'] });

  run(spec: LoadSpec): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`load generator exited with code ${code}`));
      this.child.once('exit', onExit);
      this.child.once('message', (result) => {
        this.child.off('exit', onExit);
        resolve(result as LoadResult);
      });
      this.child.send(spec);
    });
  }

  close(): void {
    this.child.kill();
  }
}

export interface Stats {
  rps: number;
  p50: number;
  p99: number;
  /** Answers other than 2xx, and requests without an answer. */
  errors: number;
  statuses: string;
}

/** The sample at quantile `q` (0–1) of `values`, the nearest rank below. */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export function summarise(result: LoadResult): Stats {
  const sorted = [...result.latenciesMs].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
  const ok = Object.entries(result.statuses).reduce((n, [status, count]) => (status.startsWith('2') ? n + count : n), 0);
  return {
    rps: sorted.length / (result.elapsedMs / 1000),
    p50: at(0.5),
    p99: at(0.99),
    errors: sorted.length - ok + result.failures,
    statuses: Object.entries(result.statuses)
      .map(([status, count]) => `${status}×${count}`)
      .join(' '),
  };
}

/** Serves `handler` on a free loopback port; returns its base URL. */
export async function listen(handler: RequestListener, servers: Server[]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { DEMO_KEY_FILE } from '../../api/demo-key.ts';
import type { CreateBacktestBody } from '../../api/schemas/research.ts';
import type { Config } from '../../infra/config.ts';
import type { BacktestResult } from '../../research/backtest/run.ts';
import { UsageError } from '../../projections/usage-error.ts';

/**
 * A backtest through the running service's API, for when the embedded store is held by it
 * (DuckDB lets one process open the file): POST the request, then poll the run, reporting
 * its progress. The service's research role runs the same engine over the same store.
 */

export interface RemoteOptions {
  config: Config;
  /** Base URL; default http://localhost:PORT. */
  api?: string;
  /** The API key; default TQA_API_KEY, then the demo key file of the data dir. */
  key?: string;
  onProgress: (scanned: number, total: number) => void;
}

async function keyOf(options: RemoteOptions): Promise<string> {
  const key = options.key ?? options.config.TQA_API_KEY ?? (await readFile(join(options.config.TQA_DATA_DIR, DEMO_KEY_FILE), 'utf8').catch(() => undefined));
  if (key === undefined || key.trim() === '') throw new UsageError('the store is held by the running service: give an API key (--key or TQA_API_KEY) to run the backtest through it');
  return key.trim();
}

export async function backtestThroughApi(body: CreateBacktestBody, options: RemoteOptions): Promise<{ runId: string; result: BacktestResult }> {
  const base = (options.api ?? `http://localhost:${options.config.PORT}`).replace(/\/+$/, '');
  const headers = { Authorization: `Bearer ${await keyOf(options)}`, 'Content-Type': 'application/json' };
  const posted = await fetch(`${base}/v1/quant/backtests`, { method: 'POST', headers, body: JSON.stringify(body) });
  const queued = (await posted.json()) as { id?: string; error?: { code: string; message: string } };
  if (posted.status !== 202 || queued.id === undefined) throw new Error(`the API refused the backtest: ${posted.status} ${queued.error?.code ?? ''} ${queued.error?.message ?? ''}`);
  const location = posted.headers.get('location') ?? `/v1/quant/backtests/${queued.id}`;
  for (;;) {
    const res = await fetch(base + location, { headers });
    const run = (await res.json()) as { status: string; reason: string | null; progress: { scanned: number; total: number } | null; result: BacktestResult | null };
    if (res.status !== 200) throw new Error(`GET ${location} answered ${res.status}`);
    if (run.progress) options.onProgress(run.progress.scanned, run.progress.total);
    if (run.status === 'done' && run.result) return { runId: queued.id, result: run.result };
    if (run.status === 'failed' || run.status === 'canceled') throw new Error(`run ${queued.id} ${run.status}: ${run.reason ?? ''}`);
    await delay(200);
  }
}

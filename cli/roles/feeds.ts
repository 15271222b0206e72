import { setTimeout as delay } from 'node:timers/promises';
import { loadSimState } from '../../infra/feeds/sim/state-store.ts';
import { runLive, seedHistory } from '../../infra/feeds/sim/runner.ts';
import type { Role } from './role.ts';

/** How long a live feed that failed waits before it starts again. */
const LIVE_RETRY_MS = 5_000;

/** The simulated feed (TQA_SIM=auto): seeds a history on a data dir without one, then runs it live. */
export const feedsRole: Role = {
  name: 'feeds',
  async start({ config, logger, services }) {
    if (config.TQA_SIM !== 'auto') return { stop: async () => undefined };
    const abort = new AbortController();
    const { log, codec } = services;
    const dataDir = config.TQA_DATA_DIR;
    const feed = (async () => {
      if (!(await loadSimState(dataDir))) {
        logger.info({ days: config.TQA_SIM_DAYS, seed: config.TQA_SIM_SEED }, 'empty data dir: seeding simulated history');
        const seeded = await seedHistory({
          log,
          codec,
          dataDir,
          seed: config.TQA_SIM_SEED,
          days: config.TQA_SIM_DAYS,
          endMs: Date.now(),
          signal: abort.signal,
        });
        logger.info({ records: seeded.records, byTopic: seeded.byTopic }, 'simulated history seeded');
      }
      // runLive returns once aborted; a write it failed (a full disk) may succeed later: it starts
      // again from its last saved state, and the records since come again with the same ids,
      // which every consumer absorbs.
      for (;;) {
        const failure = await runLive({ log, codec, dataDir, speed: config.TQA_SIM_SPEED, signal: abort.signal }).then(() => null, (err: unknown) => err);
        if (failure === null || abort.signal.aborted) return;
        logger.error({ err: failure, retryInMs: LIVE_RETRY_MS }, 'simulated live feed failed; it starts again from its last saved state');
        await delay(LIVE_RETRY_MS, undefined, { signal: abort.signal }).catch(() => undefined);
      }
    })().catch((err: unknown) => logger.error({ err }, 'simulated feed stopped'));
    return {
      stop: async () => {
        abort.abort();
        await feed;
      },
    };
  },
};

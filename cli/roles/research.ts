import { join } from 'node:path';
import { PLANS } from '../../api/plans.ts';
import { storeHistory } from '../../research/history/store.ts';
import { BacktestRunner } from '../../research/runner/backtest-runner.ts';
import { EventStudyRefresher } from '../../research/runner/event-study-refresher.ts';
import type { Role } from './role.ts';

/**
 * Research: runs the backtests queued on control.backtests, one at a time, recording their
 * progress and results on research.backtest-runs, and refreshes the event studies each hour
 * of event time onto research.event-studies. It reads history from the process's store; `tqa
 * start` runs it on a thread of its own (cli/roles/index.ts), off the API's event loop.
 */
export const researchRole: Role = {
  name: 'research',
  async start({ config, logger, services, store }) {
    const history = storeHistory(await store());
    const { log, codec } = services;
    const runner = new BacktestRunner({ log, codec, history, logger, concurrentRunsOf: (plan) => PLANS[plan].features.concurrentBacktests });
    const studies = new EventStudyRefresher({ log, codec, history, logger, checkpointFile: join(config.TQA_DATA_DIR, 'state', 'event-studies.v8') });
    await runner.start();
    await studies.start();
    logger.info('research runner started');
    return {
      stop: async () => {
        await runner.stop();
        await studies.stop();
      },
    };
  },
};

import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { EventLoopTurns } from '../../infra/event-loop/turns.ts';

/** The runs on one thread share its budget, so a message from another thread waits for one run's stretch, not for every run's. */

const BUDGET_MS = 4;

/** Busy for longer than the budget, as a run decoding records is. */
const spin = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('EventLoopTurns', () => {
  it('lets the loop poll for messages between the stretches of two runs that yielded together', async () => {
    const { port1, port2 } = new MessageChannel();
    const log: string[] = [];
    port2.on('message', () => log.push('message'));
    const run = async (name: string) => {
      const turns = new EventLoopTurns(BUDGET_MS, 1);
      for (let i = 0; i < 5; i++) {
        spin(BUDGET_MS + 1);
        log.push(name);
        // Answered in the loop's next poll for messages, as a store read asked by the API is.
        port1.postMessage(i);
        const turn = turns.due();
        if (turn) await turn;
      }
    };
    try {
      // Both begin in one turn of the loop's check phase, where their yields come back to.
      await new Promise((resolve) => setImmediate(() => resolve(Promise.all([run('a'), run('b')]))));
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      port1.close();
    }
    const stretches = log.filter((entry) => entry !== 'message');
    expect(stretches).toHaveLength(10);
    // After the turn both began in, every stretch follows a message handled since the one before it.
    expect(log.slice(0, 2)).toEqual(['a', 'b']);
    log.forEach((entry, i) => {
      if (i > 1 && entry !== 'message') expect(log[i - 1]).toBe('message');
    });
  });
});

import { describe, expect, it, vi } from 'vitest';
import { warnWhileStopping, type Role, type RoleContext } from '../../cli/roles/role.ts';
import type { Logger } from '../../infra/logging.ts';
import { together } from '../../cli/roles/together.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';

/** A role that writes what happens to it to `events`, and fails its start when told to. */
function recorded(name: string, events: string[], failStart = false): Role {
  return {
    name,
    async start(ctx) {
      if (failStart) throw new Error(`${name} cannot start`);
      events.push(`start ${name} as ${String((ctx.logger.bindings() as { part?: string }).part)}`);
      return { stop: async () => void events.push(`stop ${name}`) };
    },
  };
}

const ctx = { logger: silentLogger } as unknown as RoleContext;

describe('roles started together', () => {
  it('starts the parts consumer first and stops them producer first, each with its own logger', async () => {
    const events: string[] = [];
    const role = together('processors', [recorded('engine', events), recorded('events', events)]);
    const running = await role.start(ctx);
    await running.stop();
    expect(role.name).toBe('processors');
    expect(events).toEqual(['start events as events', 'start engine as engine', 'stop engine', 'stop events']);
  });

  it('stops the parts already started when one cannot start, and fails with its error', async () => {
    const events: string[] = [];
    const role = together('processors', [recorded('engine', events, true), recorded('events', events)]);
    await expect(role.start(ctx)).rejects.toThrow('engine cannot start');
    expect(events).toEqual(['start events as events', 'stop events']);
  });

  it('starts the parts at once when asked, each with its own logger, and still stops them producer first', async () => {
    const events: string[] = [];
    let bothBegan!: () => void;
    const everyStartBegan = new Promise<void>((resolve) => (bothBegan = resolve));
    let began = 0;
    // A start that completes only once the other has begun: one after the other, this never ends.
    const waitsForTheOther = (name: string): Role => ({
      name,
      async start(startCtx) {
        if (++began === 2) bothBegan();
        await everyStartBegan;
        return recorded(name, events).start(startCtx);
      },
    });
    const running = await together('processors', [waitsForTheOther('engine'), waitsForTheOther('events')], { startAtOnce: true }).start(ctx);
    await running.stop();
    expect(events.slice(0, 2).sort()).toEqual(['start engine as engine', 'start events as events']);
    expect(events.slice(2)).toEqual(['stop engine', 'stop events']);
  });

  it('stops the parts that started when one of those started at once cannot, and fails with its error', async () => {
    const events: string[] = [];
    const role = together('processors', [recorded('engine', events, true), recorded('events', events)], { startAtOnce: true });
    await expect(role.start(ctx)).rejects.toThrow('engine cannot start');
    expect(events).toEqual(['start events as events', 'stop events']);
  });

  it('stops peers at once when asked: each stop may wait for the others to begin theirs', async () => {
    const began: string[] = [];
    let allBegan!: () => void;
    const everyStopBegan = new Promise<void>((resolve) => (allBegan = resolve));
    // Members of one group: a member's leave completes only once the others leave too.
    const member = (name: string): Role => ({
      name,
      start: async () => ({
        async stop() {
          began.push(name);
          if (began.length === 2) allBegan();
          await everyStopBegan;
        },
      }),
    });
    const running = await together('outcomes', [member('thread 1'), member('thread 2')], { stopAtOnce: true }).start(ctx);
    await running.stop();
    expect(began.sort()).toEqual(['thread 1', 'thread 2']);
  });

  it('warns every 30 s while a stop is not done, and no more once it is', async () => {
    vi.useFakeTimers();
    try {
      const warned: number[] = [];
      const logger = { warn: (fields: { stoppingForMs: number }) => void warned.push(fields.stoppingForMs) } as unknown as Logger;
      let done!: () => void;
      const stopping = warnWhileStopping({ stop: () => new Promise<void>((resolve) => (done = resolve)) }, logger).stop();
      await vi.advanceTimersByTimeAsync(65_000);
      done();
      await stopping;
      await vi.advanceTimersByTimeAsync(60_000);
      expect(warned).toEqual([30_000, 60_000]);
    } finally {
      vi.useRealTimers();
    }
  });
});

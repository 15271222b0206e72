import { describe, expect, it } from 'vitest';
import type { Role, RoleContext } from '../../cli/roles/role.ts';
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
});

import { describe, expect, it } from 'vitest';
import { Reopenable } from '../../infra/reopenable.ts';

describe('Reopenable', () => {
  it('opens once and keeps it, opens again after a failure, and tells what it holds without opening', async () => {
    let opens = 0;
    let down = true;
    const connection = new Reopenable(async () => {
      opens++;
      if (down) throw new Error('connect ECONNREFUSED');
      return `connection ${opens}`;
    });
    expect(await connection.opened()).toBeUndefined();
    expect(opens).toBe(0);
    await expect(connection.get()).rejects.toThrow('ECONNREFUSED');
    expect(await connection.opened()).toBeUndefined();
    down = false;
    expect(await connection.get()).toBe('connection 2');
    expect(await connection.get()).toBe('connection 2');
    expect(opens).toBe(2);
    connection.replace('shared');
    expect(await connection.get()).toBe('shared');
    expect(await connection.opened()).toBe('shared');
  });
});

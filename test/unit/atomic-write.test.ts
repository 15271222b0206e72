import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileAtomic } from '../../infra/fs/atomic-write.ts';

describe('createFileAtomic', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-atomic-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the file whole with its mode, and leaves no temporary file', async () => {
    await createFileAtomic(join(dir, 'key'), 'secret\n', { mode: 0o600 });
    expect(await readFile(join(dir, 'key'), 'utf8')).toBe('secret\n');
    expect((await stat(join(dir, 'key'))).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['key']);
  });

  it('refuses a file that exists with EEXIST and leaves it as it was', async () => {
    await createFileAtomic(join(dir, 'key'), 'first\n');
    await expect(createFileAtomic(join(dir, 'key'), 'second\n')).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(join(dir, 'key'), 'utf8')).toBe('first\n');
    expect(await readdir(dir)).toEqual(['key']);
  });
});

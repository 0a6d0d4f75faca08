import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InfraError } from '../../infra/errors.js';
import { withStartLock } from '../../infra/start-lock.js';

describe('one `neon infra up` at a time per data directory', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'neon-start-lock-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const lock = (): string => join(dir, 'infra-up.lock');

  it('runs two calls one after the other, the second once the first has finished', async () => {
    const order: string[] = [];
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    const first = withStartLock(dir, 5_000, async () => {
      order.push('first starts');
      expect((await readFile(lock(), 'utf8')).trim()).toBe(String(process.pid));
      await firstHolds;
      order.push('first ends');
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = withStartLock(dir, 5_000, async () => {
      order.push('second starts');
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(order).toEqual(['first starts']);
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(['first starts', 'first ends', 'second starts']);
    await expect(readFile(lock(), 'utf8')).rejects.toThrow();
  });

  it('takes over the lock of a holder that has died, and releases it after a failure', async () => {
    await writeFile(lock(), '424242');
    const dead = (pid: number): boolean => pid !== 424242;
    await expect(
      withStartLock(
        dir,
        5_000,
        () => {
          throw new Error('the start failed');
        },
        dead,
      ),
    ).rejects.toThrow('the start failed');
    await expect(readFile(lock(), 'utf8')).rejects.toThrow();
  });

  it('gives up with a clear error while a live holder keeps it', async () => {
    await writeFile(lock(), '424242');
    const error = await withStartLock(
      dir,
      600,
      () => Promise.resolve('ran'),
      () => true,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InfraError);
    expect((error as InfraError).code).toBe('instance_conflict');
    expect((error as InfraError).message).toContain('pid 424242');
    expect((await readFile(lock(), 'utf8')).trim()).toBe('424242');
  });
});

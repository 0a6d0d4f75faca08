import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { InfraError } from './errors.js';
import { processAlive } from './process-control.js';

/** How often a waiting `up` looks at the lock again. */
const POLL_MS = 200;

/**
 * One `neon infra up` at a time per data directory. Two at once each find no node ready and launch
 * one: the second Elasticsearch fails on the first's node lock, but only after its pid has replaced
 * the first's in the pid file and instance record, and `infra down` then cannot find the node still
 * running. So a second `up` waits for the first to finish (and then finds its services running), and
 * takes over a lock whose holder has died. It gives up after `waitMs` with a clear error.
 */
export async function withStartLock<T>(
  dataDir: string,
  waitMs: number,
  run: () => Promise<T>,
  isAlive: (pid: number) => boolean = processAlive,
): Promise<T> {
  const path = join(dataDir, 'infra-up.lock');
  await mkdir(dataDir, { recursive: true });
  const deadline = Date.now() + waitMs;
  for (;;) {
    const taken = await open(path, 'wx').catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
      throw error;
    });
    if (taken !== undefined) {
      await taken.writeFile(String(process.pid));
      await taken.close();
      break;
    }
    const text = (await readFile(path, 'utf8').catch(() => '')).trim();
    const holder = Number(text);
    // An empty file is a lock being written this instant: its holder is alive.
    if (text !== '' && (!Number.isInteger(holder) || holder <= 0 || !isAlive(holder))) {
      await rm(path, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new InfraError(
        'instance_conflict',
        `another \`neon infra up\` (pid ${text || 'unknown'}) has been starting the services in ${dataDir} for more than ${Math.round(waitMs / 1000)} s`,
        `Wait for it to finish, or stop it; ${path} is its lock.`,
      );
    }
    await sleep(POLL_MS);
  }
  try {
    return await run();
  } finally {
    await rm(path, { force: true });
  }
}

/**
 * The development data (`../shared/data` next to the repository, or NEON_DEV_DATA) is read at run
 * time only and never copied into the project. A fresh clone has none: callers skip with the
 * reason this module gives.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPOSITORY_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** The development data folder, or undefined when it is absent. */
export function devDataDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = env.NEON_DEV_DATA ?? join(REPOSITORY_ROOT, '..', 'shared', 'data');
  return existsSync(dir) ? dir : undefined;
}

/** A sub-folder of the development data (e.g. `realtimeqa`), or undefined when absent. */
export function devDataPath(relative: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const base = devDataDir(env);
  if (base === undefined) return undefined;
  const path = join(base, relative);
  return existsSync(path) ? path : undefined;
}

export function missingDevDataMessage(relative: string): string {
  return `development data ${relative} not found (set NEON_DEV_DATA or place it at ../shared/data); skipped`;
}

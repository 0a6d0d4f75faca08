import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { InfraError } from '../errors.js';

const run = promisify(execFile);

export interface RunAs {
  user: string;
  uid: number;
  gid: number;
}

async function lookupIds(user: string): Promise<RunAs | undefined> {
  try {
    const uid = Number((await run('id', ['-u', user])).stdout.trim());
    const gid = Number((await run('id', ['-g', user])).stdout.trim());
    return { user, uid, gid };
  } catch {
    return undefined;
  }
}

/**
 * Elasticsearch refuses to run as root. When we are root we run it as a dedicated system account
 * (created here on first use, no login shell, no home); otherwise it runs as the current user.
 */
export async function elasticsearchRunAs(user: string): Promise<RunAs | undefined> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const existing = await lookupIds(user);
  if (existing) return existing;
  try {
    await run('useradd', [
      '--system',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      '--user-group',
      user,
    ]);
  } catch (error) {
    throw new InfraError(
      'user_setup_failed',
      `could not create the system user "${user}" that Elasticsearch runs as: ${(error as Error).message.split('\n')[0]}`,
      'Create it yourself (useradd --system neon-es) or set NEON_ES_USER to an existing non-root account.',
      { cause: error },
    );
  }
  const created = await lookupIds(user);
  if (!created) throw new InfraError('user_setup_failed', `user "${user}" still does not exist after useradd`);
  return created;
}

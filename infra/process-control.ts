import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

export interface DetachedProcessOptions {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** stdout and stderr are appended here; the launcher shows its tail when start-up fails. */
  logFile: string;
  uid?: number;
  gid?: number;
}

/**
 * Starts a server process that outlives the CLI: its own process group, no pipes back to us (a pipe
 * would tie its lifetime to ours), output to a log file.
 */
export function spawnDetached(options: DetachedProcessOptions): Promise<number> {
  const log = openSync(options.logFile, 'a');
  try {
    const child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', log, log],
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        child.unref();
        resolve(child.pid!);
      });
    });
  } finally {
    closeSync(log);
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else, which still means alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The process's command line, or undefined when it is gone (Linux /proc). */
export async function processCommandLine(pid: number): Promise<string | undefined> {
  try {
    return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

/**
 * True when `pid` is alive and its command line contains `marker` — guards against a recycled pid
 * being mistaken for our server (and against signalling a stranger's process).
 */
export async function isOurProcess(pid: number, marker: string): Promise<boolean> {
  if (!processAlive(pid)) return false;
  const commandLine = await processCommandLine(pid);
  return commandLine !== undefined && commandLine.includes(marker);
}

export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!processAlive(pid)) return true;
    await sleep(100);
  }
  return !processAlive(pid);
}

/** SIGTERM, a grace period for a clean shutdown, then SIGKILL. Resolves how it ended. */
export async function stopProcess(pid: number, graceMs: number): Promise<'stopped' | 'killed' | 'not_running'> {
  if (!processAlive(pid)) return 'not_running';
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return 'not_running';
  }
  if (await waitForExit(pid, graceMs)) return 'stopped';
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return 'stopped';
  }
  await waitForExit(pid, 10_000);
  return 'killed';
}

/**
 * The lines of a log that explain a failure: its error lines when it has any (a JVM's stack trace
 * says less than the one line before it), else its last `lines` non-empty lines.
 */
export async function explainFromLog(path: string, lines = 15): Promise<string> {
  const tail = await tailFile(path, 400);
  const errors = tail
    .split('\n')
    .filter((line) => /\b(ERROR|FATAL)\b|fatal exception|Exception:/.test(line) && !/^\s+at /.test(line));
  if (errors.length === 0) return tail.split('\n').slice(-lines).join('\n');
  return errors
    .slice(0, 6)
    .map((line) => (line.length > 600 ? `${line.slice(0, 600)}…` : line))
    .join('\n');
}

/** The last `lines` non-empty lines of a log file, for error messages. */
export async function tailFile(path: string, lines = 15): Promise<string> {
  try {
    const text = await readFile(path, 'utf8');
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(-lines)
      .join('\n');
  } catch {
    return '(no log yet)';
  }
}

import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  explainFromLog,
  isOurProcess,
  processAlive,
  processCommandLine,
  spawnDetached,
  stopProcess,
  tailFile,
} from '../../infra/process-control.js';

let dir: string;
const started: number[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'neon-process-'));
});

afterEach(async () => {
  // Kill each detached process group, so a failed test leaves no `sleep 30` behind.
  for (const pid of started.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await rm(dir, { recursive: true, force: true });
});

async function start(command: string, args: string[]): Promise<{ pid: number; logFile: string }> {
  const logFile = join(dir, 'process.log');
  const pid = await spawnDetached({ command, args, cwd: dir, env: { PATH: process.env.PATH }, logFile });
  started.push(pid);
  return { pid, logFile };
}

/** Polls until the file contains `text` (the process reached a known point), or gives up. */
async function waitForLog(path: string, text: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const content = await readFile(path, 'utf8').catch(() => '');
    if (content.includes(text)) return;
    await sleep(25);
  }
  throw new Error(`${path} never contained ${JSON.stringify(text)}`);
}

/** The pid of a process that has already exited and been reaped. */
function deadPid(): number {
  const result = spawnSync('true');
  expect(result.status).toBe(0);
  return result.pid;
}

describe('spawnDetached, isOurProcess and stopProcess', () => {
  it('starts a process that can be recognised and stopped with SIGTERM', async () => {
    const { pid } = await start('sleep', ['30']);
    expect(pid).toBeGreaterThan(0);
    expect(processAlive(pid)).toBe(true);
    expect(await processCommandLine(pid)).toBe('sleep 30');
    expect(await isOurProcess(pid, 'sleep')).toBe(true);
    expect(await isOurProcess(pid, 'kafka.Kafka')).toBe(false);

    expect(await stopProcess(pid, 5000)).toBe('stopped');
    expect(processAlive(pid)).toBe(false);
    expect(await isOurProcess(pid, 'sleep')).toBe(false);
  });

  it('sends the output to the log file and runs in the given directory', async () => {
    const { pid, logFile } = await start('sh', ['-c', 'echo "out in $(pwd)"; echo "err line" >&2; sleep 30']);
    await waitForLog(logFile, 'err line');
    const log = await readFile(logFile, 'utf8');
    expect(log).toContain(`out in ${dir}`);
    expect(log).toContain('err line');
    expect(await stopProcess(pid, 5000)).toBe('stopped');
  });

  it('rejects when the command does not exist', async () => {
    await expect(
      spawnDetached({
        command: join(dir, 'no-such-program'),
        args: [],
        cwd: dir,
        env: {},
        logFile: join(dir, 'missing.log'),
      }),
    ).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reports not_running for a pid that has exited', async () => {
    const pid = deadPid();
    expect(processAlive(pid)).toBe(false);
    expect(await isOurProcess(pid, 'true')).toBe(false);
    expect(await stopProcess(pid, 300)).toBe('not_running');
  });

  it('kills a process that ignores SIGTERM once the grace period is over', async () => {
    const { pid, logFile } = await start('bash', ['-c', 'trap "" TERM; echo trap-set; sleep 30']);
    await waitForLog(logFile, 'trap-set');
    expect(await stopProcess(pid, 300)).toBe('killed');
    expect(processAlive(pid)).toBe(false);
  });
});

describe('explainFromLog and tailFile', () => {
  it('prefers the ERROR lines over the tail, without stack frames', async () => {
    const log = join(dir, 'server.log');
    await writeFile(
      log,
      [
        '[2025-01-01 00:00:00,000] INFO starting (kafka.Kafka$)',
        '[2025-01-01 00:00:01,000] ERROR Exiting Kafka due to fatal exception (kafka.Kafka$)',
        'java.lang.RuntimeException: Address already in use',
        '\tat kafka.network.Acceptor.openServerSocket(SocketServer.scala:700)',
        '    at kafka.Kafka.main(Kafka.scala:112)',
        '[2025-01-01 00:00:02,000] INFO shutting down (kafka.Kafka$)',
        '[2025-01-01 00:00:03,000] INFO shut down completed (kafka.Kafka$)',
        '',
      ].join('\n'),
    );
    expect(await explainFromLog(log)).toBe(
      [
        '[2025-01-01 00:00:01,000] ERROR Exiting Kafka due to fatal exception (kafka.Kafka$)',
        'java.lang.RuntimeException: Address already in use',
      ].join('\n'),
    );
  });

  it('falls back to the last lines when nothing looks like an error', async () => {
    const log = join(dir, 'server.log');
    const lines = Array.from({ length: 30 }, (_, i) => `INFO line ${i + 1}`);
    await writeFile(log, `${lines.join('\n')}\n\n`);
    expect(await explainFromLog(log, 3)).toBe('INFO line 28\nINFO line 29\nINFO line 30');
    expect((await explainFromLog(log)).split('\n')).toEqual(lines.slice(-15));
  });

  it('truncates very long error lines and keeps at most six', async () => {
    const log = join(dir, 'server.log');
    const long = `ERROR ${'x'.repeat(1000)}`;
    await writeFile(log, [long, ...Array.from({ length: 10 }, (_, i) => `ERROR number ${i}`)].join('\n'));
    const explained = (await explainFromLog(log)).split('\n');
    expect(explained).toHaveLength(6);
    expect(explained[0]).toBe(`${long.slice(0, 600)}…`);
    expect(explained[5]).toBe('ERROR number 4');
  });

  it('says so when there is no log yet', async () => {
    expect(await tailFile(join(dir, 'absent.log'))).toBe('(no log yet)');
    expect(await explainFromLog(join(dir, 'absent.log'))).toBe('(no log yet)');
  });

  it('tailFile skips blank lines', async () => {
    const log = join(dir, 'server.log');
    await writeFile(log, 'a\n\n  \nb\nc\n\n');
    expect(await tailFile(log, 2)).toBe('b\nc');
  });
});

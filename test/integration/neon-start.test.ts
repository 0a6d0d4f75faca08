import { spawn } from 'node:child_process';
import { describe, expect, inject, it } from 'vitest';
import { kafkaClusterReady, elasticsearchReady } from '../../infra/readiness.js';

/**
 * `neon start` as a user runs it: a real subprocess. With the local launchers as the run's source,
 * their servers are already up, so start must reuse them, prove them with its self-check, wait for
 * a signal, and leave running what it did not start. With other sources it starts (and afterwards
 * stops) local servers of its own on the default ports.
 */

const brokers = inject('kafkaBrokers');
const url = inject('elasticsearchUrl');
const port = (value: string): string => value.split(':').at(-1)!.replace(/\D.*$/, '');

interface StartRun {
  output: () => string;
  running: () => boolean;
  exited: Promise<number | null>;
  kill: (signal: NodeJS.Signals) => void;
}

function runStart(args: string[]): StartRun {
  let output = '';
  let running = true;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/neon.ts', 'start', ...args], {
    env:
      inject('infrastructureSource') === 'local'
        ? { ...process.env, NEON_KAFKA_PORT: port(brokers[0]!), NEON_ES_PORT: port(url) }
        : process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return {
    output: () => output,
    running: () => running,
    exited: new Promise((resolve) =>
      child.once('exit', (code) => {
        running = false;
        resolve(code);
      }),
    ),
    kill: (signal) => child.kill(signal),
  };
}

describe('neon start', () => {
  it('says what it is, proves both services with a round trip, and exits with --once', async () => {
    const run = runStart(['--once']);
    expect(await run.exited).toBe(0);
    const output = run.output();
    expect(output).toContain('embedded one-process mode is not built yet');
    expect(output).toMatch(/kafka: produced and consumed a record in \d+ ms/);
    expect(output).toMatch(/elasticsearch: indexed and found a document in \d+ ms/);
    expect((await kafkaClusterReady(brokers)).ready).toBe(true);
  });

  it('stays up until SIGTERM, then exits cleanly without stopping servers it did not start', async () => {
    const run = runStart([]);
    await expect.poll(() => run.output(), { timeout: 60_000, interval: 200 }).toContain('press Ctrl-C to stop');
    // It must really wait: signal listeners alone do not keep Node alive.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(run.running()).toBe(true);
    run.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect((await kafkaClusterReady(brokers)).ready).toBe(true);
    expect((await elasticsearchReady(url)).ready).toBe(true);
  });
});

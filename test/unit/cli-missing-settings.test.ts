import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runNeon } from '../../devkit/cli-process.js';

/**
 * A setting the user has not given is bad usage (exit 2, one line naming what to set), never an
 * "unexpected failure" with a stack trace. These runs need no server: each command must stop before
 * it reaches one.
 */
const dir = mkdtempSync(join(tmpdir(), 'neon-missing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const articles = join(dir, 'articles.jsonl');
writeFileSync(
  articles,
  `${JSON.stringify({ url: 'https://example.org/a', title: 'A', text: 'x'.repeat(200), published_at: '2025-01-01T00:00:00Z' })}\n`,
);

/** The test run's environment without anything that would pick a service, a token or a cluster. */
function bareEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const unset = new Set(['NEON_INTAKE_TOKEN', 'NEON_INTAKE_TOKENS', 'NEON_API_URL', 'KAFKA_BROKERS', 'ES_URL']);
  const kept = Object.entries(process.env).filter(([name]) => !unset.has(name));
  return { ...Object.fromEntries(kept), NEON_DATA_DIR: dir, ...extra };
}

/** Runs `neon <args>` to its end; a run that outlives `ms` (waiting on a server) is killed and fails. */
async function neonOnce(
  args: string[],
  env: NodeJS.ProcessEnv,
  ms = 45_000,
): Promise<{ code: number | null; output: string }> {
  const run = runNeon(args, env);
  const timer = setTimeout(() => run.kill('SIGKILL'), ms);
  const code = await run.exited.finally(() => clearTimeout(timer));
  return { code, output: run.output() };
}

function expectUsageError(run: { code: number | null; output: string }, names: RegExp): void {
  expect(run.output).toMatch(names);
  expect(run.output).not.toMatch(/unexpected failure/);
  expect(run.output).not.toMatch(/^\s+at /m);
  expect(run.code).toBe(2);
}

describe('commands missing a setting', () => {
  it('neon replay --api without NEON_INTAKE_TOKEN says to set it', async () => {
    const run = await neonOnce(['replay', articles, '--api', 'http://127.0.0.1:9'], bareEnv());
    expectUsageError(run, /NEON_INTAKE_TOKEN/);
  }, 60_000);

  it('neon ingest --api without NEON_INTAKE_TOKEN says to set it', async () => {
    const run = await neonOnce(['ingest', articles, '--api', 'http://127.0.0.1:9'], bareEnv());
    expectUsageError(run, /NEON_INTAKE_TOKEN/);
  }, 60_000);

  it('neon intake refuses a --port that is not a port before it connects to anything', async () => {
    const run = await neonOnce(
      ['intake', '--port', 'eighty'],
      bareEnv({ NEON_INTAKE_TOKENS: 'a-token', KAFKA_BROKERS: '127.0.0.1:9' }),
    );
    expectUsageError(run, /--port must be a port number/);
  }, 60_000);
});

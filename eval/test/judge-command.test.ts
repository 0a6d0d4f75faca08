import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `npm run eval -- judge …` as a process, with only the environment given (no NEON_LLM_*, no OPENAI_API_KEY). */
function runJudge(env: Record<string, string>, ...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'eval/run.ts', 'judge', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('npm run eval -- judge', () => {
  it('without an endpoint, says which variables it needs and exits with status 2 before any work', () => {
    // Development data and Elasticsearch pointed nowhere: the judge must not get as far as either.
    const result = runJudge({ NEON_DEV_DATA: '/nonexistent', ES_URL: 'http://127.0.0.1:1' }, '--questions', '3');
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('the judge needs an OpenAI-compatible chat endpoint');
    for (const variable of ['NEON_LLM_URL', 'NEON_LLM_MODEL', 'NEON_LLM_KEY', 'OPENAI_API_KEY']) {
      expect(result.stderr).toContain(variable);
    }
    expect(result.stderr).toContain('Nothing was run');
  });

  it('with an endpoint configured wrongly, lists the problems and exits with status 2', () => {
    const result = runJudge({ NEON_LLM_URL: 'not a url', NEON_DEV_DATA: '/nonexistent' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('NEON_LLM_URL: must be an http(s) URL');
  });
});

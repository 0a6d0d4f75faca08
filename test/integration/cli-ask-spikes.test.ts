import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { freshIndex } from '../../devkit/fresh-names.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const prefix = freshIndex('cli');

/** Runs the CLI as a user would, against the test run's Kafka and Elasticsearch. */
async function neon(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('npx', ['tsx', 'bin/neon.ts', ...args], {
      cwd: root,
      env: {
        ...process.env,
        KAFKA_BROKERS: inject('kafkaBrokers').join(','),
        ES_URL: inject('elasticsearchUrl'),
        NEON_EMBEDDER: 'hashing',
        NEON_INDEX_PREFIX: prefix,
        NEON_EMBEDDINGS_DIMENSIONS: '384',
      },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('neon ask and neon spikes on the command line', () => {
  it('refuses bad arguments with exit code 2 and every problem', async () => {
    const bad = await neon(['ask', 'x', '--strategy', 'psychic', '-k', '0', '--date', 'soon', '--no-link']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/strategy/);
    expect(bad.stderr).toMatch(/k/);
    expect(bad.stderr).toMatch(/date/);
    const spikes = await neon(['spikes', '--state', 'sideways']);
    expect(spikes.code).toBe(2);
    expect(spikes.stderr).toMatch(/--state must be one of open, ended, all/);
  });

  it('answers in JSON with the answer and the retrieved items, even from empty datastores', async () => {
    const asked = await neon(['ask', 'who won the election', '--date', '2024-11-06', '--json', '--no-link']);
    expect(asked.code).toBe(0);
    const body = JSON.parse(asked.stdout) as { answer: string; items: unknown[]; citations: unknown[]; model: null };
    expect(body).toMatchObject({ items: [], citations: [], model: null });
    expect(body.answer).toBe('Nothing was found about "who won the election" published as of November 6, 2024.');
  });
});

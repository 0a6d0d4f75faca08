import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  findService,
  readRunRecord,
  removeRunRecord,
  runRecordPath,
  writeRunRecord,
} from '../../bin/commands/service-client.js';
import { UsageError } from '../../infra/cli-errors.js';

const dataDir = mkdtempSync(join(tmpdir(), 'neon-run-record-'));
const env = { NEON_DATA_DIR: dataDir } as NodeJS.ProcessEnv;
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('finding the running neon-stream', () => {
  it('prefers --api, then NEON_API_URL, with NEON_API_KEY, and refuses a URL that is not http(s)', () => {
    expect(findService('http://10.0.0.5:8080/', { ...env, NEON_API_KEY: 'k1' })).toMatchObject({
      url: 'http://10.0.0.5:8080',
      from: '--api',
      apiKey: 'k1',
    });
    expect(findService(undefined, { ...env, NEON_API_URL: 'https://neon.example' })).toMatchObject({
      url: 'https://neon.example',
      from: 'NEON_API_URL',
    });
    expect(() => findService('ftp://x', env)).toThrow(UsageError);
  });

  it('finds a running neon start by its record (user-only), ignores a dead one, and yields to a cluster', () => {
    expect(findService(undefined, env)).toBeUndefined();
    writeRunRecord(
      {
        pid: process.pid,
        url: 'http://127.0.0.1:8080',
        mode: 'embedded',
        intake_token: 'tok',
        started_at: new Date().toISOString(),
      },
      env,
    );
    expect(statSync(runRecordPath(env)).mode & 0o777).toBe(0o600);
    expect(findService(undefined, env)).toMatchObject({ url: 'http://127.0.0.1:8080', intakeToken: 'tok' });
    // Pointing at a cluster means talking to it directly, whatever runs locally.
    expect(findService(undefined, { ...env, KAFKA_BROKERS: '127.0.0.1:9092' })).toBeUndefined();
    removeRunRecord(process.pid, env);
    expect(readRunRecord(env)).toBeUndefined();
    // A record left by a process that is gone does not count.
    writeRunRecord({ pid: 2 ** 22 + 17, url: 'http://x', mode: 'embedded', intake_token: 't', started_at: '' }, env);
    expect(readRunRecord(env)).toBeUndefined();
  });
});

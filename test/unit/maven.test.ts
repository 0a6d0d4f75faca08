import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InfraError } from '../../infra/errors.js';
import { copyArtifact, copyRuntimeDependencies } from '../../infra/maven.js';
import { MAVEN_DEPENDENCY_PLUGIN } from '../../infra/versions.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'neon-maven-'));
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(dir, { recursive: true, force: true });
});

async function rejectionOf(promise: Promise<unknown>): Promise<InfraError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InfraError);
  return error as InfraError;
}

/** A stand-in `mvn`: records its arguments and working directory, prints `body`'s output. */
async function fakeMaven(body: string): Promise<string> {
  const script = join(dir, 'mvn');
  await writeFile(
    script,
    `#!/bin/sh\nprintf '%s\\n' "$@" > "${join(dir, 'args.txt')}"\npwd > "${join(dir, 'cwd.txt')}"\n${body}\n`,
  );
  await chmod(script, 0o755);
  return script;
}

describe('copyArtifact', () => {
  it('rejects with maven_missing when the Maven binary does not exist', async () => {
    vi.stubEnv('NEON_MVN', '/nonexistent/mvn');
    const error = await rejectionOf(copyArtifact('org.example:thing:1.0:zip', dir, 'the thing'));
    expect(error.code).toBe('maven_missing');
    expect(error.message).toContain('`/nonexistent/mvn`');
    expect(error.message).toContain('the thing');
    expect(error.hint).toContain('Install Maven');
  });

  it('rejects with download_failed carrying the exit code and the last output line', async () => {
    vi.stubEnv(
      'NEON_MVN',
      await fakeMaven(
        [
          'echo "[INFO] Scanning for projects..."',
          'echo ""',
          'echo "[ERROR] Could not resolve org.example:thing:1.0"',
          'echo "[ERROR] Network is unreachable (connect failed)"',
          'exit 1',
        ].join('\n'),
      ),
    );
    const error = await rejectionOf(copyArtifact('org.example:thing:1.0:zip', dir, 'the thing'));
    expect(error.code).toBe('download_failed');
    expect(error.message).toContain('downloading the thing with Maven failed (exit 1)');
    expect(error.message).toContain('[ERROR] Network is unreachable (connect failed)');
    expect(error.message.trimEnd().endsWith('[ERROR] Network is unreachable (connect failed)')).toBe(true);
  });

  it('keeps only the last 12 non-empty output lines', async () => {
    vi.stubEnv('NEON_MVN', await fakeMaven('i=1; while [ $i -le 20 ]; do echo "line $i"; i=$((i+1)); done; exit 3'));
    const error = await rejectionOf(copyArtifact('g:a:1', dir, 'stuff'));
    expect(error.code).toBe('download_failed');
    expect(error.message).toContain('(exit 3)');
    expect(error.message).toContain('line 20');
    expect(error.message).toContain('line 9');
    expect(error.message).not.toMatch(/line 8\b/);
  });

  it('passes batch, quiet, strict-checksum flags and the coordinates to Maven', async () => {
    vi.stubEnv('NEON_MVN', await fakeMaven('exit 0'));
    const out = join(dir, 'out');
    await copyArtifact('org.example:thing:1.0:zip', out, 'the thing');
    const args = (await readFile(join(dir, 'args.txt'), 'utf8')).trimEnd().split('\n');
    expect(args).toEqual([
      '-B',
      '-q',
      '-C',
      '-ntp',
      `${MAVEN_DEPENDENCY_PLUGIN}:copy`,
      '-Dartifact=org.example:thing:1.0:zip',
      `-DoutputDirectory=${out}`,
    ]);
  });
});

describe('copyRuntimeDependencies', () => {
  it('runs Maven in the project directory', async () => {
    vi.stubEnv('NEON_MVN', await fakeMaven('exit 0'));
    await copyRuntimeDependencies(dir, join(dir, 'lib'), 'the jars');
    expect((await readFile(join(dir, 'cwd.txt'), 'utf8')).trim()).toBe(dir);
    const args = (await readFile(join(dir, 'args.txt'), 'utf8')).trimEnd().split('\n');
    expect(args).toContain(`${MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies`);
    expect(args).toContain('-DincludeScope=runtime');
    expect(args).toContain(`-DoutputDirectory=${join(dir, 'lib')}`);
  });
});

import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashFile, verifyFileHash, verifyJarsAgainstPins } from '../../infra/checksums.js';
import { InfraError } from '../../infra/errors.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const sha512 = (text: string): string => createHash('sha512').update(text).digest('hex');

async function rejectionOf(promise: Promise<unknown>): Promise<InfraError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InfraError);
  return error as InfraError;
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'neon-checksums-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('hashFile', () => {
  it('matches node:crypto for sha256 and sha512', async () => {
    const file = join(dir, 'hello.txt');
    await writeFile(file, 'hello, neon\n');
    expect(await hashFile(file, 'sha256')).toBe(sha256('hello, neon\n'));
    expect(await hashFile(file, 'sha512')).toBe(sha512('hello, neon\n'));
  });

  it('hashes the empty file to the well-known digest', async () => {
    const file = join(dir, 'empty');
    await writeFile(file, '');
    expect(await hashFile(file, 'sha256')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('hashes a file larger than one read chunk', async () => {
    const content = 'x'.repeat(300_000) + 'end';
    const file = join(dir, 'big');
    await writeFile(file, content);
    expect(await hashFile(file, 'sha256')).toBe(sha256(content));
  });
});

describe('verifyFileHash', () => {
  it('accepts the right hash, in either case', async () => {
    const file = join(dir, 'a.zip');
    await writeFile(file, 'zip bytes');
    await expect(verifyFileHash(file, 'sha512', sha512('zip bytes'))).resolves.toBeUndefined();
    await expect(verifyFileHash(file, 'sha512', sha512('zip bytes').toUpperCase())).resolves.toBeUndefined();
  });

  it('rejects a mismatch with checksum_mismatch naming the file and both hashes', async () => {
    const file = join(dir, 'a.zip');
    await writeFile(file, 'zip bytes');
    const wrong = sha256('other bytes');
    const error = await rejectionOf(verifyFileHash(file, 'sha256', wrong));
    expect(error.code).toBe('checksum_mismatch');
    expect(error.message).toBe(`a.zip failed verification: sha256 is ${sha256('zip bytes')}, expected ${wrong}`);
  });
});

describe('verifyJarsAgainstPins', () => {
  const jars = { 'kafka_2.13-3.9.1.jar': 'kafka jar', 'slf4j-api-1.7.36.jar': 'slf4j jar' };
  const pins: Record<string, string> = Object.fromEntries(
    Object.entries(jars).map(([name, content]) => [name, sha256(content)]),
  );

  beforeEach(async () => {
    for (const [name, content] of Object.entries(jars)) await writeFile(join(dir, name), content);
  });

  it('passes on exactly the pinned set, ignoring non-jar files', async () => {
    await writeFile(join(dir, 'README.txt'), 'not a jar');
    await expect(verifyJarsAgainstPins(dir, pins)).resolves.toBeUndefined();
  });

  it('fails for a missing jar', async () => {
    await rm(join(dir, 'slf4j-api-1.7.36.jar'));
    const error = await rejectionOf(verifyJarsAgainstPins(dir, pins));
    expect(error.code).toBe('checksum_mismatch');
    expect(error.message).toContain('missing: slf4j-api-1.7.36.jar; unexpected: none');
  });

  it('fails for an extra jar', async () => {
    await writeFile(join(dir, 'evil-1.0.jar'), 'surprise');
    const error = await rejectionOf(verifyJarsAgainstPins(dir, pins));
    expect(error.code).toBe('checksum_mismatch');
    expect(error.message).toContain('missing: none; unexpected: evil-1.0.jar');
  });

  it('fails for a jar with the wrong hash', async () => {
    await writeFile(join(dir, 'kafka_2.13-3.9.1.jar'), 'tampered kafka jar');
    const error = await rejectionOf(verifyJarsAgainstPins(dir, pins));
    expect(error.code).toBe('checksum_mismatch');
    expect(error.message).toContain('kafka_2.13-3.9.1.jar failed verification');
    expect(error.message).toContain(`expected ${sha256('kafka jar')}`);
  });
});

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { InfraError } from './errors.js';

export type HashAlgorithm = 'sha256' | 'sha512';

export async function hashFile(path: string, algorithm: HashAlgorithm): Promise<string> {
  const hash = createHash(algorithm);
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function verifyFileHash(path: string, algorithm: HashAlgorithm, expected: string): Promise<void> {
  const actual = await hashFile(path, algorithm);
  if (actual !== expected.toLowerCase()) {
    throw new InfraError(
      'checksum_mismatch',
      `${basename(path)} failed verification: ${algorithm} is ${actual}, expected ${expected}`,
      'The download is corrupt or not the pinned release; it was discarded. Run the command again; if it persists, check your Maven mirror.',
    );
  }
}

/**
 * Checks that a directory holds exactly the jars of a pinned list, each with its SHA-256. Extra or
 * missing files fail too: a silently different classpath is as bad as a corrupt jar.
 */
export async function verifyJarsAgainstPins(dir: string, pins: Readonly<Record<string, string>>): Promise<void> {
  const present = (await readdir(dir)).filter((name) => name.endsWith('.jar'));
  const missing = Object.keys(pins).filter((name) => !present.includes(name));
  const unexpected = present.filter((name) => !(name in pins));
  if (missing.length > 0 || unexpected.length > 0) {
    throw new InfraError(
      'checksum_mismatch',
      `resolved jars differ from the pinned list (missing: ${missing.join(', ') || 'none'}; unexpected: ${unexpected.join(', ') || 'none'})`,
      'Maven resolved a different dependency set than the one pinned in infra/kafka/kafka-jars.lock.ts.',
    );
  }
  for (const name of present) await verifyFileHash(join(dir, name), 'sha256', pins[name]!);
}

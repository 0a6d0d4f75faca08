import { basename } from 'node:path';
import { hashFile } from '../checksums.js';
import { InfraError } from '../errors.js';

/**
 * Fails unless `file` has the pinned SHA-256. Called before anything from the file is used or cached,
 * so a corrupt or substituted download never lands in the cache. `source` names where it came from, for
 * the hint.
 */
export async function requirePinnedSha256(file: string, expected: string, source: string): Promise<void> {
  const actual = await hashFile(file, 'sha256');
  if (actual === expected.toLowerCase()) return;
  throw new InfraError(
    'checksum_mismatch',
    `${basename(file)} failed verification: sha256 is ${actual}, expected ${expected}`,
    `The download from ${source} is not the pinned release; nothing was cached. Check that source (or its mirror), or update infra/k8s-validation/pins.ts deliberately.`,
  );
}

/**
 * `npx tsx infra/models/pin-embedding-models.ts`: downloads the jar of every model in
 * `processors/embed/model-pins.ts` at its pinned version and prints the SHA-256 of the jar and of
 * the two files taken from it, to paste into the pins after a version change. Review the diff:
 * this trusts whatever Maven serves today, which is exactly what the pins exist to check later.
 */
import extractZip from 'extract-zip';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_MODEL_PINS, mavenCoordinates } from '../../processors/embed/model-pins.js';
import { hashFile } from '../checksums.js';
import { copyArtifact } from '../maven.js';

const scratch = await mkdtemp(join(tmpdir(), 'neon-model-pins-'));
try {
  for (const pin of Object.values(LOCAL_MODEL_PINS)) {
    const dir = join(scratch, pin.name);
    await copyArtifact(mavenCoordinates(pin), dir, pin.name);
    const jar = join(dir, `${pin.artifactId}-${pin.version}.jar`);
    await extractZip(jar, { dir: join(dir, 'unpacked') });
    process.stdout.write(
      [
        `${pin.name} (${mavenCoordinates(pin)})`,
        `  jarSha256:       '${await hashFile(jar, 'sha256')}'`,
        `  onnxSha256:      '${await hashFile(join(dir, 'unpacked', pin.onnxEntry), 'sha256')}'`,
        `  tokenizerSha256: '${await hashFile(join(dir, 'unpacked', pin.tokenizerEntry), 'sha256')}'`,
        '',
      ].join('\n'),
    );
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}

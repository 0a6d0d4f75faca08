/**
 * `npx tsx infra/models/pin-embedding-models.ts [name…]`: downloads the jar of every model in
 * `processors/embed/model-pins.ts` (or only those named) at its pinned version and prints the
 * SHA-256 of the jar and of the two files taken from it, and the jar's size, to paste into the pins
 * after a version change or for a new model. Review the diff: this trusts whatever Maven serves
 * today, which is exactly what the pins exist to check later.
 */
import extractZip from 'extract-zip';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_MODEL_PINS, mavenCoordinates, type LocalModelPin } from '../../processors/embed/model-pins.js';
import { hashFile } from '../checksums.js';
import { copyArtifact } from '../maven.js';

const pins: readonly LocalModelPin[] = Object.values(LOCAL_MODEL_PINS);
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !pins.some((pin) => pin.name === name));
if (unknown.length > 0) {
  process.stderr.write(`no pin named ${unknown.join(', ')}; pins: ${pins.map((p) => p.name).join(', ')}\n`);
  process.exit(2);
}

const scratch = await mkdtemp(join(tmpdir(), 'neon-model-pins-'));
try {
  for (const pin of pins.filter((p) => wanted.length === 0 || wanted.includes(p.name))) {
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
        `  approximateMegabytes: ${Math.round((await stat(jar)).size / 1e6)}`,
        '',
      ].join('\n'),
    );
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}

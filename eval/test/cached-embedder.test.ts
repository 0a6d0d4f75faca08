import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CachedEmbedder, textKey, vectorCacheDir } from '../cached-embedder.js';
import type { Embedder } from '../../processors/embed/embedder.js';
import { HashingEmbedder } from '../../processors/embed/hashing-embedder.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'neon-cached-embedder-'));
  dirs.push(dir);
  return dir;
}

/** A model that prefixes queries (as instruction-tuned retrieval models do) and records every call. */
class RecordingEmbedder implements Embedder {
  readonly dimensions = 16;
  readonly calls: { texts: string[]; purpose: string | undefined }[] = [];
  closed = false;
  readonly #hashing = new HashingEmbedder(16);
  constructor(readonly model = 'org/test-model') {}
  async embed(texts: readonly string[], purpose?: 'document' | 'query'): Promise<Float32Array[]> {
    this.calls.push({ texts: [...texts], purpose });
    return this.#hashing.embed(texts.map((t) => (purpose === 'query' ? `query: ${t}` : t)));
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

describe('CachedEmbedder', () => {
  it('embeds each new text once, in input order, and reads repeated ones back without a call', async () => {
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner, freshDir());
    const direct = await new HashingEmbedder(16).embed(['a b', 'c d', 'e f']);
    const first = await cached.embed(['a b', 'c d', 'a b']);
    expect(inner.calls).toEqual([{ texts: ['a b', 'c d'], purpose: undefined }]);
    expect(first.map((v) => Array.from(v))).toEqual([direct[0], direct[1], direct[0]].map((v) => Array.from(v!)));
    const second = await cached.embed(['e f', 'c d']);
    expect(inner.calls[1]).toEqual({ texts: ['e f'], purpose: undefined });
    expect(second.map((v) => Array.from(v))).toEqual([direct[2], direct[1]].map((v) => Array.from(v!)));
    expect(cached.stats).toEqual({ hits: 2, misses: 3 });
    await cached.close();
    expect(inner.closed).toBe(true);
  });

  it('keeps vectors across instances on disk: a rerun embeds nothing it embedded before', async () => {
    const root = freshDir();
    const before = new CachedEmbedder(new RecordingEmbedder(), root);
    const vectors = await before.embed(['one', 'two']);
    await before.close();
    const inner = new RecordingEmbedder();
    const after = new CachedEmbedder(inner, root);
    const again = await after.embed(['two', 'one', 'three']);
    expect(inner.calls).toEqual([{ texts: ['three'], purpose: undefined }]);
    expect(Array.from(again[0]!)).toEqual(Array.from(vectors[1]!));
    expect(Array.from(again[1]!)).toEqual(Array.from(vectors[0]!));
    await after.close();
  });

  it('keys by purpose and passes the purpose on: a query never gets a document vector', async () => {
    const root = freshDir();
    const inner = new RecordingEmbedder();
    const cached = new CachedEmbedder(inner, root);
    const [asDocument] = await cached.embed(['who won'], 'document');
    const [asQuery] = await cached.embed(['who won'], 'query');
    expect(inner.calls).toEqual([
      { texts: ['who won'], purpose: 'document' },
      { texts: ['who won'], purpose: 'query' },
    ]);
    expect(Array.from(asQuery!)).not.toEqual(Array.from(asDocument!));
    const [queryAgain] = await cached.embed(['who won'], 'query');
    expect(Array.from(queryAgain!)).toEqual(Array.from(asQuery!));
    // No purpose is a document's, as the embedders take it.
    const [unnamed] = await cached.embed(['who won']);
    expect(Array.from(unnamed!)).toEqual(Array.from(asDocument!));
    expect(inner.calls).toHaveLength(2);
    await cached.close();
    const model = encodeURIComponent('org/test-model');
    expect(readdirSync(join(root, model)).sort()).toEqual(['document-16d', 'query-16d']);
  });

  it('keys by model: another model under the same root starts empty', async () => {
    const root = freshDir();
    const first = new CachedEmbedder(new RecordingEmbedder('model-a'), root);
    await first.embed(['x']);
    await first.close();
    const inner = new RecordingEmbedder('model-b');
    const second = new CachedEmbedder(inner, root);
    await second.embed(['x']);
    expect(inner.calls).toHaveLength(1);
    await second.close();
  });

  it('refuses an embedder that answers with the wrong number of vectors', async () => {
    const inner = new RecordingEmbedder();
    inner.embed = async () => [];
    const cached = new CachedEmbedder(inner, freshDir());
    await expect(cached.embed(['a'])).rejects.toThrow(/0 vectors for 1 texts/);
    await cached.close();
  });

  it('keys texts by the SHA-256 of their UTF-8 bytes, under <NEON_CACHE_DIR>/vectors', () => {
    expect(textKey('abc').toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(vectorCacheDir({ NEON_CACHE_DIR: '/srv/neon' })).toBe('/srv/neon/vectors');
  });
});

/**
 * An Embedder that remembers on disk: each vector is kept under the model, the purpose
 * (`document` or `query`: some models prepend an instruction to queries) and the SHA-256 of the
 * text, so a rerun of an evaluation or benchmark embeds only the texts it has not embedded before.
 * Only for development runs: the product's stages embed every record once and need no cache.
 *
 * Stored under `<cache dir>/vectors/<model>/<purpose>-<dimensions>d/` (the product's cache dir:
 * `NEON_CACHE_DIR`, else the default of `schemas/local-infra-config.ts`), as float32 segments
 * written atomically (`eval/vector-store.ts`).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Embedder, EmbeddingPurpose } from '../processors/embed/embedder.js';
import { defaultDirectories } from '../schemas/local-infra-config.js';
import { VectorStore, type VectorStoreOptions } from './vector-store.js';

/** `<NEON_CACHE_DIR or the default cache dir>/vectors`. */
export function vectorCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.NEON_CACHE_DIR ?? defaultDirectories(env).cacheDir, 'vectors');
}

export interface VectorCacheStats {
  /** Texts answered from the cache (memory or disk). */
  hits: number;
  /** Texts the wrapped embedder was asked for. */
  misses: number;
}

export class CachedEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  readonly callShape?: { textsPerCall: number; callsAtOnce: number };
  readonly stats: VectorCacheStats = { hits: 0, misses: 0 };
  readonly #inner: Embedder;
  readonly #root: string;
  readonly #options: VectorStoreOptions;
  readonly #stores = new Map<string, VectorStore>();

  /** `root`: the folder of all models' vectors, e.g. `vectorCacheDir()`. */
  constructor(inner: Embedder, root: string, options: VectorStoreOptions = {}) {
    this.#inner = inner;
    this.model = inner.model;
    this.dimensions = inner.dimensions;
    if (inner.callShape) this.callShape = inner.callShape;
    this.#root = root;
    this.#options = options;
  }

  /** Where the vectors of one purpose go: the model name escaped so that `org/model` stays one folder. */
  folder(purpose: EmbeddingPurpose): string {
    return join(this.#root, encodeURIComponent(this.model), `${purpose}-${this.dimensions}d`);
  }

  /**
   * One vector per text, in input order: cached ones read back, the others embedded in one call to
   * the wrapped embedder (each distinct text once) and stored. An absent purpose is a document's,
   * as the embedders treat it, and is passed on absent.
   */
  async embed(texts: readonly string[], purpose?: EmbeddingPurpose): Promise<Float32Array[]> {
    const store = this.#store(purpose ?? 'document');
    const keys = texts.map(textKey);
    const vectors: (Float32Array | undefined)[] = keys.map((key) => store.get(key));
    const missing = new Map<string, { text: string; key: Buffer; at: number[] }>();
    vectors.forEach((vector, i) => {
      if (vector !== undefined) {
        this.stats.hits += 1;
        return;
      }
      const id = keys[i]!.toString('hex');
      const entry = missing.get(id);
      if (entry) entry.at.push(i);
      else missing.set(id, { text: texts[i]!, key: keys[i]!, at: [i] });
    });
    if (missing.size > 0) {
      const wanted = [...missing.values()];
      this.stats.misses += wanted.length;
      const texts = wanted.map((w) => w.text);
      const fresh = await this.#inner.embed(texts, purpose);
      if (fresh.length !== wanted.length) {
        throw new Error(`${this.model} returned ${fresh.length} vectors for ${wanted.length} texts`);
      }
      wanted.forEach((w, j) => {
        const vector = fresh[j]!;
        store.put(w.key, vector);
        w.at.forEach((i, n) => (vectors[i] = n === 0 ? vector : vector.slice()));
      });
      // A repeated text counts as a hit after its first occurrence.
      this.stats.hits += wanted.reduce((sum, w) => sum + w.at.length - 1, 0);
    }
    return vectors as Float32Array[];
  }

  /** Writes what is not yet on disk (also done every few thousand vectors and on close). */
  flush(): void {
    for (const store of this.#stores.values()) store.flush();
  }

  /** Writes the cache and closes the wrapped embedder. */
  async close(): Promise<void> {
    try {
      for (const store of this.#stores.values()) store.close();
      this.#stores.clear();
    } finally {
      await this.#inner.close();
    }
  }

  #store(purpose: EmbeddingPurpose): VectorStore {
    let store = this.#stores.get(purpose);
    if (!store) {
      store = VectorStore.open(this.folder(purpose), this.dimensions, this.#options);
      this.#stores.set(purpose, store);
    }
    return store;
  }
}

/** SHA-256 of the text's UTF-8 bytes. */
export function textKey(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

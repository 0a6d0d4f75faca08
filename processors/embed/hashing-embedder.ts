import { createHash } from 'node:crypto';
import { assertEmbeddingPurpose, type Embedder, type EmbeddingPurpose } from './embedder.js';
import { normalizeInPlace } from './normalize-vector.js';

/**
 * FOR UNIT TESTS ONLY: not a language model. Signed feature hashing of lower-cased words and word
 * pairs, so texts that share words get similar vectors and everything is deterministic, instant and
 * offline. Its model name, `hashing-test-only`, is stored beside every vector it makes, so an index
 * filled by it can never pass for one built with a real model; nothing selects it by default.
 */
export const HASHING_MODEL_NAME = 'hashing-test-only';

export class HashingEmbedder implements Embedder {
  readonly model = HASHING_MODEL_NAME;

  constructor(readonly dimensions = 384) {
    if (!Number.isInteger(dimensions) || dimensions < 2) throw new RangeError('dimensions must be an integer ≥ 2');
  }

  /** Queries and documents alike: the purpose is ignored. */
  async embed(texts: readonly string[], purpose: EmbeddingPurpose = 'document'): Promise<Float32Array[]> {
    assertEmbeddingPurpose(purpose);
    return texts.map((text) => this.#vector(text));
  }

  async close(): Promise<void> {}

  #vector(text: string): Float32Array {
    const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    // An empty text still gets a direction (a fixed feature), never a zero vector.
    const features =
      words.length === 0 ? ['\u0000empty'] : [...words, ...words.slice(1).map((w, i) => `${words[i]!} ${w}`)];
    const vector = new Float32Array(this.dimensions);
    for (const feature of features) {
      const digest = createHash('sha256').update(feature).digest();
      const index = digest.readUInt32BE(0) % this.dimensions;
      vector[index] = vector[index]! + ((digest[4]! & 1) === 0 ? 1 : -1);
    }
    // Opposite signs can cancel to zero; fall back to the first feature's slot.
    if (normalizeInPlace(vector) === undefined) {
      vector[createHash('sha256').update(features[0]!).digest().readUInt32BE(0) % this.dimensions] = 1;
    }
    return vector;
  }
}

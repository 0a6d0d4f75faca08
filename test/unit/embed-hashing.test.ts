import { describe, expect, it } from 'vitest';
import { HashingEmbedder } from '../../processors/embed/hashing-embedder.js';
import { cosine } from '../../processors/embed/normalize-vector.js';

describe('HashingEmbedder (unit tests only)', () => {
  const embedder = new HashingEmbedder(256);

  it('is deterministic across instances', async () => {
    const [a] = await embedder.embed(['Floods close roads in Valencia']);
    const [b] = await new HashingEmbedder(256).embed(['Floods close roads in Valencia']);
    expect([...a!]).toEqual([...b!]);
  });

  it('makes unit vectors of the configured length, also for empty and symbol-only text', async () => {
    const vectors = await embedder.embed(['', '!!! ???', 'a b', 'word word']);
    for (const v of vectors) {
      expect(v).toHaveLength(256);
      expect(Math.sqrt(v.reduce((s, x) => s + x * x, 0))).toBeCloseTo(1, 6);
    }
  });

  it('puts texts that share words closer than texts that do not', async () => {
    const [a, b, c] = await embedder.embed([
      'the election results in Ohio were delayed',
      'Ohio election results delayed again',
      'a recipe for lemon cake with almonds',
    ]);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!));
  });

  it('carries a model name that cannot be mistaken for a real model', () => {
    expect(embedder.model).toBe('hashing-test-only');
  });

  it('refuses a useless length', () => {
    expect(() => new HashingEmbedder(1)).toThrow(RangeError);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_SLOT,
  MERSENNE_31,
  MinHasher,
  estimateJaccard,
  isEmptySignature,
} from '../../processors/dedupe/minhash.js';

const P = BigInt(MERSENNE_31);

/** Two sorted shingle sets with `shared` common and `own` private elements each. */
function pairWith(shared: number, own: number, offset = 0): [Uint32Array, Uint32Array] {
  const common = Array.from({ length: shared }, (_, i) => offset + i * 7919);
  const a = Array.from({ length: own }, (_, i) => offset + 50_000_000 + i * 104_729);
  const b = Array.from({ length: own }, (_, i) => offset + 90_000_000 + i * 15_485_863);
  return [Uint32Array.from([...common, ...a]).sort(), Uint32Array.from([...common, ...b]).sort()];
}

describe('MinHasher permutations', () => {
  const hasher = new MinHasher(16);

  it('computes (a·x + b) mod (2^31 − 1) exactly, checked against BigInt', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }), (i, x) => {
        const { a, b } = hasher.coefficients(i);
        expect(a).toBeGreaterThanOrEqual(1);
        expect(a).toBeLessThan(MERSENNE_31);
        expect(hasher.hash(i, x)).toBe(Number((BigInt(a) * BigInt(x) + BigInt(b)) % P));
      }),
      { numRuns: 2000 },
    );
    for (const x of [0, 1, 0xffff, 0x10000, MERSENNE_31 - 1, MERSENNE_31, 2 ** 32 - 1]) {
      const { a, b } = hasher.coefficients(3);
      expect(hasher.hash(3, x)).toBe(Number((BigInt(a) * BigInt(x) + BigInt(b)) % P));
    }
  });

  it('is injective on values below p (a is invertible mod p)', () => {
    const seen = new Set<number>();
    for (let x = 0; x < 20_000; x++) seen.add(hasher.hash(5, x * 104_729));
    expect(seen.size).toBe(20_000);
  });

  it('draws the same coefficients from the same seed on every replica, different ones from another seed', () => {
    const again = new MinHasher(16);
    const other = new MinHasher(16, 12345);
    for (let i = 0; i < 16; i++) expect(again.coefficients(i)).toEqual(hasher.coefficients(i));
    expect(other.coefficients(0)).not.toEqual(hasher.coefficients(0));
  });

  it('refuses a non-positive number of permutations', () => {
    expect(() => new MinHasher(0)).toThrow(RangeError);
    expect(() => new MinHasher(2.5)).toThrow(RangeError);
  });
});

describe('signatures', () => {
  const hasher = new MinHasher(24);

  it('holds in slot i the minimum of h_i over the set', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { minLength: 1, maxLength: 50 }), (xs) => {
        const sig = hasher.signature(Uint32Array.from(xs).sort());
        for (let i = 0; i < 24; i++) expect(sig[i]).toBe(Math.min(...xs.map((x) => hasher.hash(i, x))));
      }),
      { numRuns: 200 },
    );
  });

  it('does not depend on the order of the shingles, and reuses a given buffer', () => {
    const xs = Uint32Array.from([9, 2, 77, 4_000_000_000, 31]);
    const buffer = new Uint32Array(24);
    const sig = hasher.signature(xs, buffer);
    expect(sig).toBe(buffer);
    expect([...hasher.signature(Uint32Array.from([...xs].reverse()))]).toEqual([...sig]);
    expect(() => hasher.signature(xs, new Uint32Array(3))).toThrow(RangeError);
  });

  it('marks an empty set with EMPTY_SLOT everywhere', () => {
    const sig = hasher.signature(new Uint32Array(0));
    expect([...sig].every((v) => v === EMPTY_SLOT)).toBe(true);
    expect(isEmptySignature(sig)).toBe(true);
    expect(isEmptySignature(hasher.signature(Uint32Array.of(1)))).toBe(false);
  });

  it('estimates Jaccard similarity without bias', () => {
    const wide = new MinHasher(512);
    for (const [shared, own, expected] of [
      [300, 150, 0.5],
      [100, 200, 0.2],
      [400, 50, 0.8],
    ] as const) {
      const [a, b] = pairWith(shared, own);
      // 512 slots: standard error sqrt(J(1 − J)/512) ≤ 0.023; 0.08 is about 3.5 of them.
      expect(Math.abs(estimateJaccard(wide.signature(a), wide.signature(b)) - expected)).toBeLessThan(0.08);
    }
    const [a] = pairWith(10, 10);
    expect(estimateJaccard(hasher.signature(a), hasher.signature(a))).toBe(1);
  });
});

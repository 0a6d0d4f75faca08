/**
 * MinHash signatures of shingle sets. Permutation i is the universal hash
 * h_i(x) = (a_i·x + b_i) mod p with p = 2^31 − 1 (a Mersenne prime), so for a shingle set S the
 * probability that min h_i(A) = min h_i(B) is (close to) the Jaccard similarity of A and B.
 *
 * The coefficients come from a fixed seed, so every replica and every restart computes the same
 * signature for the same text: band keys written by one process are found by another.
 *
 * This is the hot path of dedupe (every shingle × every permutation), so it avoids BigInt: a 32-bit
 * shingle x is split into 16-bit halves, x = x_hi·2^16 + x_lo, and with the precomputed
 * c_i = a_i·2^16 mod p, a_i·x ≡ c_i·x_hi + a_i·x_lo (mod p). Both products are below 2^47, so the
 * sum is exact in a double and one Mersenne reduction y mod p = (y mod 2^31) + ⌊y / 2^31⌋ (folded
 * once more) finishes it: about 4 ns per shingle and permutation on one core.
 */

/** p = 2^31 − 1. */
export const MERSENNE_31 = 0x7fffffff;
const TWO_POW_31 = 0x80000000;
const TWO_POW_16 = 0x10000;

/** Signature slot value of an empty set; larger than any hash value (all are < p). */
export const EMPTY_SLOT = 0xffffffff;

/** The seed every replica uses unless told otherwise. Changing it invalidates every stored band key. */
export const DEFAULT_MINHASH_SEED = 0x6e656f6e;

/** y mod p for 0 ≤ y < 2^53. */
function reduceMersenne31(y: number): number {
  const high = Math.floor(y / TWO_POW_31);
  const r = y - high * TWO_POW_31 + high;
  return r >= MERSENNE_31 ? r - MERSENNE_31 : r;
}

/** splitmix32: a small, well-mixed PRNG to draw the coefficients from a seed. */
function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class MinHasher {
  /** a_i ∈ [1, p), b_i ∈ [0, p), c_i = a_i·2^16 mod p. */
  private readonly a: Float64Array;
  private readonly b: Float64Array;
  private readonly c: Float64Array;
  /** Scratch minima, reused: doubles keep the comparison loop free of int/double conversions. */
  private readonly mins: Float64Array;

  constructor(
    readonly numHashes: number,
    readonly seed: number = DEFAULT_MINHASH_SEED,
  ) {
    if (!Number.isInteger(numHashes) || numHashes < 1) {
      throw new RangeError(`numHashes must be a positive integer, got ${numHashes}`);
    }
    const next = splitmix32(seed);
    this.a = new Float64Array(numHashes);
    this.b = new Float64Array(numHashes);
    this.c = new Float64Array(numHashes);
    this.mins = new Float64Array(numHashes);
    for (let i = 0; i < numHashes; i++) {
      const a = 1 + (next() % (MERSENNE_31 - 1));
      this.a[i] = a;
      this.b[i] = next() % MERSENNE_31;
      this.c[i] = reduceMersenne31(a * TWO_POW_16);
    }
  }

  /** The coefficients of permutation i (for checking the arithmetic against an exact reference). */
  coefficients(i: number): { a: number; b: number } {
    const a = this.a[i];
    const b = this.b[i];
    if (a === undefined || b === undefined) throw new RangeError(`no permutation ${i}`);
    return { a, b };
  }

  /** h_i(x) for one shingle x. */
  hash(i: number, x: number): number {
    const a = this.a[i];
    const b = this.b[i];
    const c = this.c[i];
    if (a === undefined || b === undefined || c === undefined) throw new RangeError(`no permutation ${i}`);
    const u = x >>> 0;
    return reduceMersenne31(c * (u >>> 16) + a * (u & 0xffff) + b);
  }

  /**
   * The signature of a shingle set: slot i holds min over x of h_i(x), or {@link EMPTY_SLOT} for
   * every slot when the set is empty. Pass `out` to reuse a buffer.
   */
  signature(shingles: Uint32Array, out: Uint32Array = new Uint32Array(this.numHashes)): Uint32Array {
    const k = this.numHashes;
    if (out.length !== k) throw new RangeError(`signature buffer must have ${k} slots, got ${out.length}`);
    const { a, b, c } = this;
    const mins = this.mins;
    mins.fill(EMPTY_SLOT);
    for (let s = 0; s < shingles.length; s++) {
      const x = shingles[s]!;
      const xHigh = x >>> 16;
      const xLow = x & 0xffff;
      for (let i = 0; i < k; i++) {
        const h = reduceMersenne31(c[i]! * xHigh + a[i]! * xLow + b[i]!);
        if (h < mins[i]!) mins[i] = h;
      }
    }
    out.set(mins);
    return out;
  }
}

/** The share of equal slots: an unbiased estimate of the Jaccard similarity of the two sets. */
export function estimateJaccard(a: Uint32Array, b: Uint32Array): number {
  if (a.length !== b.length) throw new RangeError(`signatures differ in length: ${a.length} vs ${b.length}`);
  if (a.length === 0) return 0;
  let equal = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i] && a[i] !== EMPTY_SLOT) equal++;
  return equal / a.length;
}

/** True when the signature is that of an empty set (it must not be banded: all empty sets would collide). */
export function isEmptySignature(signature: Uint32Array): boolean {
  return signature.length === 0 || signature[0] === EMPTY_SLOT;
}

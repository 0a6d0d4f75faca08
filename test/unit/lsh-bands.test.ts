import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bandKeyLabel,
  bandKeys,
  bandsNeeded,
  candidateProbability,
  chooseBandPlan,
} from '../../processors/dedupe/lsh-bands.js';
import { EMPTY_SLOT, MinHasher } from '../../processors/dedupe/minhash.js';
import { bruteForceSimilarPairs, exactSimilarPairs, lshSimilarPairs, pairKey } from '../../devkit/similarity-join.js';

/** Sets with Jaccard exactly shared / (shared + 2·own), disjoint from other pairs by `offset`. */
function pairWith(shared: number, own: number, offset: number): [Uint32Array, Uint32Array] {
  const base = offset * 1_000_003;
  const common = Array.from({ length: shared }, (_, i) => (base + i * 7919) >>> 0);
  const a = Array.from({ length: own }, (_, i) => (base + 50_000_000 + i * 104_729) >>> 0);
  const b = Array.from({ length: own }, (_, i) => (base + 90_000_000 + i * 15_485_863) >>> 0);
  return [Uint32Array.from([...common, ...a]).sort(), Uint32Array.from([...common, ...b]).sort()];
}

function shareABand(a: Float64Array, b: Float64Array): boolean {
  return [...a].some((key, i) => key === b[i]);
}

describe('S-curve and plan', () => {
  it('computes 1 − (1 − s^r)^b', () => {
    expect(candidateProbability(0.5, { bands: 30, rows: 3 })).toBeCloseTo(1 - (7 / 8) ** 30, 12);
    expect(candidateProbability(1, { bands: 5, rows: 4 })).toBe(1);
    expect(candidateProbability(0, { bands: 5, rows: 4 })).toBe(0);
  });

  it('chooses 30 bands × 3 rows for the threshold 0.5, with P(0.5) ≥ 0.98', () => {
    const plan = chooseBandPlan(0.5);
    expect(plan).toEqual({ bands: 30, rows: 3 });
    expect(candidateProbability(0.5, plan)).toBeGreaterThanOrEqual(0.98);
    expect(candidateProbability(0.1, plan)).toBeLessThanOrEqual(0.05);
  });

  it('meets the recall target with the fewest bands at every threshold', () => {
    for (let t = 0.3; t <= 0.95; t += 0.05) {
      const plan = chooseBandPlan(t);
      expect(candidateProbability(t, plan)).toBeGreaterThanOrEqual(0.98);
      expect(candidateProbability(t, { bands: plan.bands - 1, rows: plan.rows })).toBeLessThan(0.98);
      expect(plan.bands * plan.rows).toBeLessThanOrEqual(1024);
    }
    expect(bandsNeeded(0.5, 3, 0.98)).toBe(30);
    expect(() => chooseBandPlan(0)).toThrow(RangeError);
    expect(() => chooseBandPlan(1.5)).toThrow(RangeError);
  });
});

describe('bandKeys', () => {
  const plan = { bands: 4, rows: 3 };

  it('gives equal keys for equal bands and different keys for a changed band', () => {
    const sig = Uint32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const changed = Uint32Array.from(sig);
    changed[4] = 99;
    const a = bandKeys(sig, plan);
    const b = bandKeys(changed, plan);
    expect(a).toHaveLength(4);
    expect([a[0], a[2], a[3]]).toEqual([b[0], b[2], b[3]]);
    expect(a[1]).not.toBe(b[1]);
  });

  it('never lets equal slot values in different bands share a key', () => {
    const keys = bandKeys(new Uint32Array(12).fill(7), plan);
    expect(new Set(keys).size).toBe(4);
    expect(bandKeyLabel(keys[2]!)).toMatch(/^2:[0-9a-f]{8}$/);
  });

  it('gives an empty set no keys and refuses a short signature', () => {
    expect(bandKeys(new Uint32Array(12).fill(EMPTY_SLOT), plan)).toHaveLength(0);
    expect(() => bandKeys(new Uint32Array(11), plan)).toThrow(RangeError);
  });
});

describe('the S-curve holds for real signatures', () => {
  const plan = { bands: 30, rows: 3 };
  const hasher = new MinHasher(90);
  const trials = 300;

  function candidateRate(shared: number, own: number): number {
    let hits = 0;
    for (let trial = 0; trial < trials; trial++) {
      const [a, b] = pairWith(shared, own, trial + 1);
      const ka = bandKeys(hasher.signature(a), plan);
      const kb = bandKeys(Uint32Array.from(hasher.signature(b)), plan);
      if (shareABand(ka, kb)) hits++;
    }
    return hits / trials;
  }

  it('finds pairs at Jaccard 0.5 about 98 % of the time', () => {
    // Expected 0.982; 300 trials put 3 standard errors at about 0.023.
    expect(candidateRate(100, 50)).toBeGreaterThan(0.95);
  });

  it('rarely makes a candidate of a pair at Jaccard 0.1', () => {
    // Expected 0.030.
    expect(candidateRate(20, 90)).toBeLessThan(0.08);
  });
});

describe('similarity joins over a batch', () => {
  const hasher90 = new MinHasher(90);
  const plan90 = { bands: 30, rows: 3 };
  /** Random sets over a small universe, with planted near copies so pairs above 0.5 exist. */
  const batch = fc
    .array(fc.uniqueArray(fc.integer({ min: 0, max: 300 }), { minLength: 0, maxLength: 40 }), {
      minLength: 2,
      maxLength: 25,
    })
    .map((lists) =>
      lists.flatMap((list, i) => {
        const set = Uint32Array.from(list).sort();
        return i % 4 === 0 ? [set, Uint32Array.from(list.slice(0, Math.ceil(list.length * 0.8))).sort()] : [set];
      }),
    );

  it('finds exactly the brute-force pairs with the prefix filter', () => {
    fc.assert(
      fc.property(batch, fc.constantFrom(0.3, 0.5, 0.8), (sets, t) => {
        expect(exactSimilarPairs(sets, t).pairs).toEqual(bruteForceSimilarPairs(sets, t).pairs);
      }),
      { numRuns: 150 },
    );
  });

  it('finds with LSH only true pairs, and the identical ones always', () => {
    fc.assert(
      fc.property(batch, (sets) => {
        const keys = sets.map((s) => bandKeys(hasher90.signature(s), plan90));
        const lsh = lshSimilarPairs(sets, keys, 0.5).pairs;
        const truth = bruteForceSimilarPairs(sets, 0.5).pairs;
        const truthKeys = new Set(truth.map((p) => pairKey(p.a, p.b, sets.length)));
        for (const p of lsh) expect(truthKeys.has(pairKey(p.a, p.b, sets.length))).toBe(true);
        const lshKeys = new Set(lsh.map((p) => pairKey(p.a, p.b, sets.length)));
        for (const p of truth) if (p.similarity === 1) expect(lshKeys.has(pairKey(p.a, p.b, sets.length))).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});

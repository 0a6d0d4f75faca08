/**
 * All pairs of a batch of shingle sets with Jaccard ≥ threshold, two ways: by LSH band keys (what
 * the streaming filter does, here over a whole batch), and exactly by prefix filtering. Measurement
 * only (bench/dedupe.ts, eval/dedupe-quality.ts): the dedupe stage uses the streaming filter.
 *
 * The exact join is the All-Pairs prefix filter (Bayardo et al., WWW 2007): order shingles by how
 * rare they are; if |x ∩ y| ≥ o, the first |x| − o + 1 shingles of x and the first |y| − o + 1 of y
 * share one. J(x, y) ≥ t implies |x ∩ y| ≥ ⌈t·|x|⌉ and ≥ ⌈t·|y|⌉, so indexing each set's first
 * |x| − ⌈t·|x|⌉ + 1 shingles misses no pair at or above t, and every candidate is then verified
 * with the real Jaccard. Unlike LSH it has no false negatives, and because prefixes hold the rarest
 * shingles it inspects few candidates.
 */
import { fmix32, jaccard } from '../processors/dedupe/trigram-shingles.js';

export interface SimilarPair {
  /** Indices into the batch, a < b. */
  a: number;
  b: number;
  similarity: number;
}

export interface JoinResult {
  pairs: SimilarPair[];
  /** Distinct pairs whose real Jaccard was computed. */
  candidates: number;
}

/** Smallest overlap a pair at or above threshold can have, given one set's size (rounded down for safety). */
function minimumOverlap(size: number, threshold: number): number {
  return Math.max(1, Math.ceil(threshold * size - 1e-9));
}

/** Every pair sharing at least one band key, verified with the real Jaccard. */
export function lshSimilarPairs(
  sets: readonly Uint32Array[],
  keys: readonly Float64Array[],
  threshold: number,
): JoinResult {
  if (sets.length !== keys.length) throw new RangeError('one key list per set is needed');
  const buckets = new Map<number, number[]>();
  keys.forEach((list, i) => {
    for (const key of list) {
      const bucket = buckets.get(key);
      if (bucket === undefined) buckets.set(key, [i]);
      else bucket.push(i);
    }
  });
  const n = sets.length;
  const seen = new Set<number>();
  const pairs: SimilarPair[] = [];
  for (const bucket of buckets.values()) {
    for (let x = 0; x < bucket.length; x++) {
      for (let y = x + 1; y < bucket.length; y++) {
        const a = bucket[x]!;
        const b = bucket[y]!;
        const pairKey = a * n + b;
        if (seen.has(pairKey)) continue;
        seen.add(pairKey);
        const similarity = jaccard(sets[a]!, sets[b]!);
        if (similarity >= threshold) pairs.push({ a, b, similarity });
      }
    }
  }
  return { pairs: sortPairs(pairs), candidates: seen.size };
}

/** Open-addressing map from shingle to rank, in typed arrays (a JS Map of 10^7 entries takes minutes). */
class RankTable {
  private readonly keys: Uint32Array;
  private readonly values: Int32Array;
  private readonly mask: number;

  constructor(size: number) {
    let capacity = 16;
    while (capacity < size * 2) capacity *= 2;
    this.keys = new Uint32Array(capacity);
    this.values = new Int32Array(capacity).fill(-1);
    this.mask = capacity - 1;
  }

  set(key: number, value: number): void {
    let slot = fmix32(key) & this.mask;
    while (this.values[slot] !== -1 && this.keys[slot] !== key) slot = (slot + 1) & this.mask;
    this.keys[slot] = key;
    this.values[slot] = value;
  }

  /** The rank, or -1 when absent. */
  get(key: number): number {
    let slot = fmix32(key) & this.mask;
    for (let value = this.values[slot]!; value !== -1; value = this.values[slot]!) {
      if (this.keys[slot] === key) return value;
      slot = (slot + 1) & this.mask;
    }
    return -1;
  }
}

/**
 * The global order of shingles, rarest first, then by value, for the shingles found in two or more
 * sets. A shingle of a single set never makes a candidate, so those are all "rarest" and need no
 * rank: they only count towards the prefix length.
 */
function sharedShingleRanks(sets: readonly Uint32Array[]): { table: RankTable; size: number } {
  let total = 0;
  for (const set of sets) total += set.length;
  const all = new Uint32Array(total);
  let at = 0;
  for (const set of sets) {
    all.set(set, at);
    at += set.length;
  }
  all.sort();
  // count·2^32 + value sorts by count, then value, in one typed-array sort.
  const shared: number[] = [];
  for (let i = 0; i < all.length;) {
    let j = i + 1;
    while (j < all.length && all[j] === all[i]) j++;
    if (j - i > 1) shared.push((j - i) * 0x100000000 + all[i]!);
    i = j;
  }
  const order = Float64Array.from(shared).sort();
  const table = new RankTable(order.length);
  order.forEach((key, position) => table.set(key % 0x100000000, position));
  return { table, size: order.length };
}

/** Every pair with Jaccard ≥ threshold, exactly (prefix filtering, then the real Jaccard). */
export function exactSimilarPairs(sets: readonly Uint32Array[], threshold: number): JoinResult {
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError(`threshold must be in (0, 1], got ${threshold}`);
  const { table, size } = sharedShingleRanks(sets);
  // Each set's prefix as ranks of shared shingles (its unique shingles come first in the order and
  // fill part of the prefix without ever matching), then postings rank → sets in ascending order.
  const prefixes = sets.map((set) => {
    const ranks: number[] = [];
    for (const x of set) {
      const r = table.get(x);
      if (r >= 0) ranks.push(r);
    }
    const unique = set.length - ranks.length;
    const prefix = set.length - minimumOverlap(set.length, threshold) + 1;
    return Uint32Array.from(ranks)
      .sort()
      .subarray(0, Math.max(0, prefix - unique));
  });
  const start = new Uint32Array(size + 1);
  for (const prefix of prefixes) for (const r of prefix) start[r + 1]!++;
  for (let r = 0; r < size; r++) start[r + 1]! += start[r]!;
  const fill = start.slice(0, size);
  const postings = new Uint32Array(start[size]!);
  prefixes.forEach((prefix, i) => {
    for (const r of prefix) postings[fill[r]!++] = i;
  });

  const lastProbe = new Int32Array(sets.length).fill(-1);
  const pairs: SimilarPair[] = [];
  let candidates = 0;
  prefixes.forEach((prefix, i) => {
    const set = sets[i]!;
    for (const r of prefix) {
      // Postings hold sets in ascending order: the ones before i are the pairs not yet seen.
      for (let k = start[r]!; k < start[r + 1]!; k++) {
        const j = postings[k]!;
        if (j >= i) break;
        if (lastProbe[j] === i) continue;
        lastProbe[j] = i;
        candidates++;
        const similarity = jaccard(sets[j]!, set);
        if (similarity >= threshold) pairs.push({ a: j, b: i, similarity });
      }
    }
  });
  return { pairs: sortPairs(pairs), candidates };
}

/** Every pair compared: the O(n²) baseline. */
export function bruteForceSimilarPairs(sets: readonly Uint32Array[], threshold: number): JoinResult {
  const pairs: SimilarPair[] = [];
  for (let a = 0; a < sets.length; a++) {
    for (let b = a + 1; b < sets.length; b++) {
      const similarity = jaccard(sets[a]!, sets[b]!);
      if (similarity >= threshold) pairs.push({ a, b, similarity });
    }
  }
  return { pairs, candidates: (sets.length * (sets.length - 1)) / 2 };
}

function sortPairs(pairs: SimilarPair[]): SimilarPair[] {
  return pairs.sort((x, y) => x.a - y.a || x.b - y.b);
}

/** A number naming the unordered pair, for set operations on pair lists over n items. */
export function pairKey(a: number, b: number, n: number): number {
  return a < b ? a * n + b : b * n + a;
}

/**
 * The windowed state of dedupe: LSH band key → chunks, chunk id → {shingles, t, payload}.
 *
 * Candidates come from shared band keys and are confirmed with the exact trigram Jaccard, so the
 * index never reports a pair below the threshold; it misses a pair above it only when MinHash puts
 * it in no common band (probability 1 − P(s), see lsh-bands.ts).
 *
 * Time is event time: the window ends at the largest t seen, and entries older than that minus the
 * window are evicted, so memory is bounded by how much arrives within one window, whatever the
 * total. A chunk older than the window is compared with what is still held but not stored.
 *
 * Replay-safe: an id that is already held is never a duplicate (of itself or anything else), and
 * adding it again changes nothing.
 *
 * Two chunks of the same group (the same article) are never duplicates of each other: the
 * end-aligned last window of an article can repeat most of the window before it, and a corrected
 * version of an article repeats the previous version; neither is syndication.
 *
 * {@link NearDuplicateStore} is the seam for a shared store (e.g. keyed by band across replicas).
 */

import { jaccard } from './trigram-shingles.js';

export type DedupeDecision = { kind: 'unique' } | { kind: 'duplicate'; of: string; similarity: number };

/** What the index needs to know about a chunk. */
export interface IndexCandidate {
  readonly id: string;
  /** Chunks of the same group (article id) are never compared with each other. */
  readonly group: string;
  /** Event time, ms since the epoch. */
  readonly t: number;
  /** Sorted, repeat-free shingle hashes (trigram-shingles.ts). */
  readonly shingles: Uint32Array;
  /** LSH band keys of the shingles' MinHash signature (lsh-bands.ts). */
  readonly bandKeys: Float64Array;
}

export interface IndexSize {
  chunks: number;
  bandKeys: number;
}

export interface NearDuplicateStore<P> {
  readonly threshold: number;
  readonly windowMs: number;
  has(id: string): boolean;
  get(id: string): P | undefined;
  /** Moves event time forward to `t` (never back) and evicts what fell out of the window. */
  advance(t: number): void;
  /** The earliest-registered held chunk with Jaccard ≥ threshold, or unique. Changes nothing. */
  findDuplicate(candidate: IndexCandidate): DedupeDecision;
  /** Holds the chunk as a survivor. False when it is already held or older than the window. */
  add(candidate: IndexCandidate, payload: P): boolean;
  size(): IndexSize;
}

interface Entry<P> {
  readonly id: string;
  readonly group: string;
  readonly t: number;
  readonly seq: number;
  readonly shingles: Uint32Array;
  readonly bandKeys: Float64Array;
  readonly payload: P;
}

export interface NearDuplicateIndexOptions {
  /** Jaccard similarity at or above which a chunk is a near-duplicate, in (0, 1]. */
  threshold: number;
  /** How far back in event time survivors are held, ms. */
  windowMs: number;
}

/** Binary min-heap of entries by (t, seq): the next entry to evict is always on top. */
class EvictionHeap<P> {
  private readonly items: Entry<P>[] = [];

  get length(): number {
    return this.items.length;
  }

  peek(): Entry<P> | undefined {
    return this.items[0];
  }

  push(entry: Entry<P>): void {
    const items = this.items;
    items.push(entry);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): Entry<P> | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < items.length && before(items[left]!, items[smallest]!)) smallest = left;
      if (right < items.length && before(items[right]!, items[smallest]!)) smallest = right;
      if (smallest === i) break;
      [items[i], items[smallest]] = [items[smallest]!, items[i]!];
      i = smallest;
    }
    return top;
  }
}

function before<P>(a: Entry<P>, b: Entry<P>): boolean {
  return a.t < b.t || (a.t === b.t && a.seq < b.seq);
}

export class NearDuplicateIndex<P> implements NearDuplicateStore<P> {
  readonly threshold: number;
  readonly windowMs: number;
  private readonly byId = new Map<string, Entry<P>>();
  private readonly buckets = new Map<number, Entry<P>[]>();
  private readonly heap = new EvictionHeap<P>();
  private maxT = -Infinity;
  private nextSeq = 0;

  constructor(options: NearDuplicateIndexOptions) {
    if (!(options.threshold > 0 && options.threshold <= 1)) {
      throw new RangeError(`threshold must be in (0, 1], got ${options.threshold}`);
    }
    if (!(options.windowMs > 0)) throw new RangeError(`windowMs must be positive, got ${options.windowMs}`);
    this.threshold = options.threshold;
    this.windowMs = options.windowMs;
  }

  /** Entries with t below this are outside the window. */
  watermark(): number {
    return this.maxT - this.windowMs;
  }

  /** Largest event time seen, or -Infinity before the first. */
  latest(): number {
    return this.maxT;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): P | undefined {
    return this.byId.get(id)?.payload;
  }

  /** Held chunks in registration order. */
  *entries(): IterableIterator<{ id: string; t: number; payload: P }> {
    for (const entry of this.byId.values()) yield { id: entry.id, t: entry.t, payload: entry.payload };
  }

  advance(t: number): void {
    if (!(t > this.maxT)) return;
    this.maxT = t;
    const watermark = this.watermark();
    for (let top = this.heap.peek(); top !== undefined && top.t < watermark; top = this.heap.peek()) {
      this.heap.pop();
      this.remove(top);
    }
  }

  findDuplicate(candidate: IndexCandidate): DedupeDecision {
    if (this.byId.has(candidate.id)) return { kind: 'unique' };
    const watermark = this.watermark();
    const checked = new Set<Entry<P>>();
    let best: Entry<P> | undefined;
    let bestSimilarity = 0;
    for (const key of candidate.bandKeys) {
      const bucket = this.buckets.get(key);
      if (bucket === undefined) continue;
      for (const entry of bucket) {
        if (checked.has(entry)) continue;
        checked.add(entry);
        if (entry.group === candidate.group || entry.t < watermark) continue;
        if (best !== undefined && entry.seq > best.seq) continue;
        const similarity = jaccard(candidate.shingles, entry.shingles);
        if (similarity >= this.threshold) {
          best = entry;
          bestSimilarity = similarity;
        }
      }
    }
    return best === undefined ? { kind: 'unique' } : { kind: 'duplicate', of: best.id, similarity: bestSimilarity };
  }

  add(candidate: IndexCandidate, payload: P): boolean {
    this.advance(candidate.t);
    if (this.byId.has(candidate.id) || candidate.t < this.watermark()) return false;
    const entry: Entry<P> = {
      id: candidate.id,
      group: candidate.group,
      t: candidate.t,
      seq: this.nextSeq++,
      shingles: candidate.shingles,
      bandKeys: candidate.bandKeys,
      payload,
    };
    this.byId.set(entry.id, entry);
    for (const key of entry.bandKeys) {
      const bucket = this.buckets.get(key);
      if (bucket === undefined) this.buckets.set(key, [entry]);
      else bucket.push(entry);
    }
    this.heap.push(entry);
    return true;
  }

  size(): IndexSize {
    return { chunks: this.byId.size, bandKeys: this.buckets.size };
  }

  private remove(entry: Entry<P>): void {
    if (this.byId.get(entry.id) !== entry) return;
    this.byId.delete(entry.id);
    for (const key of entry.bandKeys) {
      const bucket = this.buckets.get(key);
      if (bucket === undefined) continue;
      const at = bucket.indexOf(entry);
      if (at >= 0) bucket.splice(at, 1);
      if (bucket.length === 0) this.buckets.delete(key);
    }
  }
}

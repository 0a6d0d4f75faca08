/**
 * Trigram shingles of a chunk's plain text, as 32-bit hashes in a sorted Uint32Array, and their
 * Jaccard similarity: the "trigram representations and Jaccard similarity" of NEON §2.1 step 4.
 *
 * Word trigrams are the default. The paper does not say which trigrams it means; word trigrams are
 * the selective choice for news: two unrelated English chunks share almost no word trigrams
 * (Jaccard ≈ 0), whereas they share many character trigrams ("the", "ing", " an"), which puts
 * unrelated text at character-trigram Jaccard 0.1–0.3 and leaves little room below a 0.5 threshold.
 * Word trigrams are also about five times fewer per chunk, and MinHash cost grows with their number.
 * Character trigrams stay available for text without word boundaries (e.g. CJK) or heavy typos.
 *
 * Hashes are computed here (FNV-1a per token, the murmur3 mixer per trigram) rather than taken from
 * a library so every replica and every release computes the same values from the same text.
 */

export type ShingleKind = 'word3' | 'char3';

export const SHINGLE_KINDS: readonly ShingleKind[] = ['word3', 'char3'];

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const SHINGLE_SEED = 0x5bd1e995;

/**
 * Letters (with their combining marks) and digits, keeping an inner apostrophe ("don't", "Karl's")
 * so a possessive is one token rather than a stray "s" that makes trigrams look alike.
 */
const WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*(?:['’][\p{L}\p{M}\p{N}]+)*/gu;
const NOT_WORD_CHARACTER = /[^\p{L}\p{M}\p{N}]+/gu;

/** FNV-1a over the UTF-16 code units of `s`, as an unsigned 32-bit integer. */
export function fnv1a32(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) {
    h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  }
  return h >>> 0;
}

function rotl32(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

/** One murmur3_32 block round: folds the 32-bit word `k` into the running hash `h`. */
function murmurRound(h: number, k: number): number {
  let m = Math.imul(k, 0xcc9e2d51);
  m = rotl32(m, 15);
  m = Math.imul(m, 0x1b873593);
  const folded = rotl32(h ^ m, 13);
  return (Math.imul(folded, 5) + 0xe6546b64) | 0;
}

/** The murmur3 finaliser: a bijection on 32 bits with full avalanche. */
export function fmix32(x: number): number {
  let h = x ^ (x >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Order-sensitive hash of three 32-bit words (murmur3_32 over 12 bytes). */
export function hash3(a: number, b: number, c: number): number {
  let h = murmurRound(SHINGLE_SEED, a);
  h = murmurRound(h, b);
  h = murmurRound(h, c);
  return fmix32(h ^ 12);
}

/** Lower-cased word tokens of `text` (Unicode letters and digits; punctuation and markup symbols dropped). */
export function wordTokens(text: string): string[] {
  return text.toLowerCase().replace(/’/g, "'").match(WORD) ?? [];
}

function sortedUnique(values: Uint32Array, length: number): Uint32Array {
  const sorted = values.subarray(0, length).sort();
  let n = 0;
  for (let i = 0; i < sorted.length; i++) {
    const v = sorted[i]!;
    if (n === 0 || v !== sorted[n - 1]) sorted[n++] = v;
  }
  return sorted.slice(0, n);
}

function wordTrigrams(text: string): Uint32Array {
  const tokens = wordTokens(text);
  if (tokens.length === 0) return new Uint32Array(0);
  const hashes = tokens.map(fnv1a32);
  if (hashes.length < 3) {
    // Too short for a trigram: one shingle for the whole text, so identical short texts still match.
    return Uint32Array.of(hash3(hashes[0] ?? 0, hashes[1] ?? 0, hashes.length));
  }
  const out = new Uint32Array(hashes.length - 2);
  for (let i = 0; i + 2 < hashes.length; i++) {
    out[i] = hash3(hashes[i]!, hashes[i + 1]!, hashes[i + 2]!);
  }
  return sortedUnique(out, out.length);
}

/** Lower-cased text with every run of non-letters/digits reduced to one space. */
export function normaliseForCharacters(text: string): string {
  return text.toLowerCase().replace(NOT_WORD_CHARACTER, ' ').trim();
}

function charTrigrams(text: string): Uint32Array {
  const s = normaliseForCharacters(text);
  if (s.length === 0) return new Uint32Array(0);
  if (s.length < 3) return Uint32Array.of(hash3(s.charCodeAt(0), s.length > 1 ? s.charCodeAt(1) : 0, s.length));
  const out = new Uint32Array(s.length - 2);
  for (let i = 0; i + 2 < s.length; i++) {
    // Two UTF-16 code units fit one 32-bit word exactly, so distinct trigrams only collide in the hash.
    out[i] = hash3((s.charCodeAt(i) << 16) | s.charCodeAt(i + 1), s.charCodeAt(i + 2), 3);
  }
  return sortedUnique(out, out.length);
}

/**
 * The set of trigram hashes of `text`, sorted ascending without repeats. Empty when the text has no
 * letters or digits. Pass plain text (Chunk.text), not marked text: the `<e>` tags would otherwise
 * become tokens and make two copies of a story look different when only their markup differs.
 */
export function shingles(text: string, kind: ShingleKind = 'word3'): Uint32Array {
  return kind === 'word3' ? wordTrigrams(text) : charTrigrams(text);
}

/**
 * |a ∩ b| for two sorted, repeat-free arrays. The merge advances by comparisons turned into 0/1
 * instead of branches: on unrelated sets the branches are unpredictable, and this is twice as fast.
 */
export function intersectionSize(a: Uint32Array, b: Uint32Array): number {
  const la = a.length;
  const lb = b.length;
  let i = 0;
  let j = 0;
  let common = 0;
  while (i < la && j < lb) {
    const x = a[i]!;
    const y = b[j]!;
    i += Number(x <= y);
    j += Number(y <= x);
    common += Number(x === y);
  }
  return common;
}

/**
 * Jaccard similarity |a ∩ b| / |a ∪ b| of two shingle sets from {@link shingles}. Two empty sets
 * score 0: text without words is never anybody's near-duplicate.
 */
export function jaccard(a: Uint32Array, b: Uint32Array): number {
  if (a.length === 0 || b.length === 0) return 0;
  const common = intersectionSize(a, b);
  return common / (a.length + b.length - common);
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bandKeys } from '../../processors/dedupe/lsh-bands.js';
import { MinHasher } from '../../processors/dedupe/minhash.js';
import { NearDuplicateIndex, type IndexCandidate } from '../../processors/dedupe/near-duplicate-index.js';
import { jaccard, shingles } from '../../processors/dedupe/trigram-shingles.js';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.UTC(2024, 2, 1);
const plan = { bands: 30, rows: 3 };
const hasher = new MinHasher(90);

const WORDS = (
  'river council budget storm vote market school court police minister bridge harbour festival ' +
  'strike hospital airport election museum farmer bank rail energy water tax housing report ' +
  'inquiry mayor coast village league match season record price fuel wheat export import ' +
  'union talks deal border summit treaty ruling appeal judge verdict jury witness fire flood'
).split(' ');

/** Deterministic pseudo-random prose: `n` words drawn from WORDS by a seeded LCG. */
function prose(seed: number, n = 60): string {
  let state = seed >>> 0 || 1;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    out.push(WORDS[state % WORDS.length]!);
  }
  return out.join(' ');
}

/** Replaces every `every`-th word, so the copy keeps most trigrams. */
function edited(text: string, every: number): string {
  return text
    .split(' ')
    .map((w, i) => (i % every === every - 1 ? 'changed' : w))
    .join(' ');
}

function candidate(id: string, group: string, t: number, text: string): IndexCandidate {
  const set = shingles(text);
  return { id, group, t, shingles: set, bandKeys: bandKeys(hasher.signature(set), plan) };
}

describe('NearDuplicateIndex', () => {
  it('finds a near copy, verified by the exact Jaccard', () => {
    const index = new NearDuplicateIndex<string>({ threshold: 0.5, windowMs: 7 * DAY });
    const original = prose(1);
    index.add(candidate('a:0', 'a', T0, original), 'payload-a');
    const copy = candidate('b:0', 'b', T0 + 1000, edited(original, 12));
    const decision = index.findDuplicate(copy);
    const expected = jaccard(copy.shingles, shingles(original));
    expect(expected).toBeGreaterThan(0.5);
    expect(decision).toEqual({ kind: 'duplicate', of: 'a:0', similarity: expected });
    expect(index.findDuplicate(candidate('c:0', 'c', T0, prose(2)))).toEqual({ kind: 'unique' });
    expect(index.get('a:0')).toBe('payload-a');
  });

  it('does not call a pair below the threshold a duplicate', () => {
    const index = new NearDuplicateIndex<null>({ threshold: 0.5, windowMs: 7 * DAY });
    const original = prose(3);
    index.add(candidate('a:0', 'a', T0, original), null);
    // Changing every 3rd word breaks every trigram: Jaccard 0 even though 2/3 of the words are equal.
    const far = candidate('b:0', 'b', T0, edited(original, 3));
    expect(jaccard(far.shingles, shingles(original))).toBeLessThan(0.5);
    expect(index.findDuplicate(far)).toEqual({ kind: 'unique' });
  });

  it('answers with the earliest-registered survivor, not the most similar', () => {
    const index = new NearDuplicateIndex<null>({ threshold: 0.5, windowMs: 7 * DAY });
    const original = prose(4, 120);
    index.add(candidate('first', 'a', T0 + 5000, edited(original, 10)), null);
    index.add(candidate('second', 'b', T0, original), null);
    const decision = index.findDuplicate(candidate('third', 'c', T0, original));
    expect(decision.kind).toBe('duplicate');
    if (decision.kind === 'duplicate') {
      expect(decision.of).toBe('first');
      expect(decision.similarity).toBeLessThan(1);
    }
  });

  it('never matches chunks of the same group', () => {
    const index = new NearDuplicateIndex<null>({ threshold: 0.5, windowMs: 7 * DAY });
    const text = prose(5);
    index.add(candidate('a:v1:0', 'a', T0, text), null);
    expect(index.findDuplicate(candidate('a:v2:0', 'a', T0, text))).toEqual({ kind: 'unique' });
    expect(index.findDuplicate(candidate('b:v1:0', 'b', T0, text))).toEqual({
      kind: 'duplicate',
      of: 'a:v1:0',
      similarity: 1,
    });
  });

  it('is replay-safe: a held id is never a duplicate, and adding it again changes nothing', () => {
    const index = new NearDuplicateIndex<string>({ threshold: 0.5, windowMs: 7 * DAY });
    const c = candidate('a:0', 'a', T0, prose(6));
    expect(index.add(c, 'first')).toBe(true);
    const before = index.size();
    expect(index.findDuplicate(c)).toEqual({ kind: 'unique' });
    expect(index.add(c, 'second')).toBe(false);
    expect(index.size()).toEqual(before);
    expect(index.get('a:0')).toBe('first');
  });

  it('evicts by event time and refuses chunks older than the window', () => {
    const index = new NearDuplicateIndex<null>({ threshold: 0.5, windowMs: 7 * DAY });
    const text = prose(7);
    index.add(candidate('old', 'a', T0, text), null);
    index.add(candidate('new', 'b', T0 + 6 * DAY, prose(8)), null);
    expect(index.size().chunks).toBe(2);
    index.advance(T0 + 7 * DAY + 1);
    expect(index.has('old')).toBe(false);
    expect(index.has('new')).toBe(true);
    expect(index.size()).toEqual({ chunks: 1, bandKeys: 30 });
    expect(index.findDuplicate(candidate('copy', 'c', T0 + 7 * DAY + 2, text))).toEqual({ kind: 'unique' });
    expect(index.add(candidate('late', 'd', T0, prose(9)), null)).toBe(false);
    // Time never goes back.
    index.advance(T0);
    expect(index.watermark()).toBe(T0 + 1);
  });

  it('stays bounded by the window over 30 simulated days', () => {
    const index = new NearDuplicateIndex<null>({ threshold: 0.5, windowMs: 7 * DAY });
    const perDay = 150;
    let largest = 0;
    for (let day = 0; day < 30; day++) {
      for (let i = 0; i < perDay; i++) {
        const t = T0 + day * DAY + Math.floor((i / perDay) * DAY);
        const c = candidate(`d${day}-${i}`, `d${day}-${i}`, t, prose(day * 1000 + i + 11, 40));
        if (index.findDuplicate(c).kind === 'unique') index.add(c, null);
        largest = Math.max(largest, index.size().chunks);
      }
    }
    // At most 7 days plus the one being filled are held.
    expect(largest).toBeLessThanOrEqual(8 * perDay);
    expect(largest).toBeGreaterThan(6 * perDay);
    const { chunks, bandKeys: keys } = index.size();
    expect(chunks).toBeLessThanOrEqual(8 * perDay);
    expect(keys).toBeLessThanOrEqual(chunks * plan.bands);
    expect(index.has('d0-0')).toBe(false);
    expect(index.has('d29-0')).toBe(true);
  });

  it('reports only duplicates at or above the threshold, with the exact similarity', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 2, maxLength: 12 }), (seeds) => {
        const index = new NearDuplicateIndex<null>({ threshold: 0.5, windowMs: 7 * DAY });
        const texts = new Map<string, string>();
        seeds.forEach((seed, i) => {
          // Seeds repeat, and some texts are edited copies: duplicates are common.
          const text = i % 3 === 2 ? edited(prose(seed), 9) : prose(seed);
          const c = candidate(`c${i}`, `g${i}`, T0 + i, text);
          const decision = index.findDuplicate(c);
          if (decision.kind === 'duplicate') {
            expect(decision.similarity).toBeGreaterThanOrEqual(0.5);
            expect(decision.similarity).toBe(jaccard(c.shingles, shingles(texts.get(decision.of)!)));
          } else {
            texts.set(c.id, text);
            index.add(c, null);
          }
        });
      }),
      { numRuns: 60 },
    );
  });

  it('refuses impossible options', () => {
    expect(() => new NearDuplicateIndex({ threshold: 0, windowMs: DAY })).toThrow(RangeError);
    expect(() => new NearDuplicateIndex({ threshold: 0.5, windowMs: 0 })).toThrow(RangeError);
  });
});

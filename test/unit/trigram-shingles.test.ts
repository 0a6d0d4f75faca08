import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fnv1a32,
  hash3,
  intersectionSize,
  jaccard,
  normaliseForCharacters,
  shingles,
  wordTokens,
} from '../../processors/dedupe/trigram-shingles.js';

/** Reference: the trigram strings themselves, no hashing. */
function wordTrigramStrings(text: string): Set<string> {
  const tokens = wordTokens(text);
  const out = new Set<string>();
  for (let i = 0; i + 2 < tokens.length; i++) out.add(tokens.slice(i, i + 3).join(' '));
  return out;
}

function setJaccard(a: Set<string>, b: Set<string>): number {
  const common = [...a].filter((x) => b.has(x)).length;
  return common / (a.size + b.size - common);
}

describe('fnv1a32 and hash3', () => {
  it('matches the published FNV-1a 32-bit test vectors', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('is order-sensitive and unsigned', () => {
    expect(hash3(1, 2, 3)).not.toBe(hash3(3, 2, 1));
    fc.assert(
      fc.property(fc.integer(), fc.integer(), fc.integer(), (a, b, c) => {
        const h = hash3(a, b, c);
        return Number.isInteger(h) && h >= 0 && h < 2 ** 32;
      }),
    );
  });
});

describe('wordTokens', () => {
  it('lower-cases, keeps Unicode letters and digits, inner apostrophes, drops punctuation and markup symbols', () => {
    expect(wordTokens('Karl’s <e>Zürich</e> café, São-Paulo: 2022! 東京')).toEqual([
      "karl's",
      'e',
      'zürich',
      'e',
      'café',
      'são',
      'paulo',
      '2022',
      '東京',
    ]);
  });
});

describe('word trigram shingles', () => {
  it('gives one shingle per distinct trigram, sorted', () => {
    expect(shingles('a b c d e')).toHaveLength(3);
    // Trigrams "a b a" and "b a b" repeat: two distinct.
    expect(shingles('a b a b a b')).toHaveLength(2);
    const s = shingles('the quick brown fox jumps over the lazy dog');
    expect([...s]).toEqual([...s].sort((x, y) => x - y));
  });

  it('ignores case, punctuation and spacing', () => {
    expect(jaccard(shingles('The cat sat on the mat.'), shingles('the  CAT sat, on THE mat'))).toBe(1);
  });

  it('gives the exact Jaccard of the trigram sets', () => {
    expect(jaccard(shingles('the quick brown fox jumps'), shingles('the quick brown fox sleeps'))).toBe(0.5);
    const a = 'Officials said the storm would reach the coast on Tuesday evening, forcing evacuations.';
    const b = 'Officials said the storm would reach the coast late on Tuesday, forcing evacuations of towns.';
    expect(jaccard(shingles(a), shingles(b))).toBeCloseTo(setJaccard(wordTrigramStrings(a), wordTrigramStrings(b)), 12);
  });

  it('matches the string-set Jaccard on arbitrary word sequences', () => {
    const word = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta');
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 3, maxLength: 40 }),
        fc.array(word, { minLength: 3, maxLength: 40 }),
        (x, y) => {
          const a = x.join(' ');
          const b = y.join(' ');
          const expected = setJaccard(wordTrigramStrings(a), wordTrigramStrings(b));
          expect(jaccard(shingles(a), shingles(b))).toBeCloseTo(expected, 12);
        },
      ),
    );
  });

  it('gives short texts one shingle so identical short texts still match', () => {
    expect(shingles('Breaking news')).toHaveLength(1);
    expect(jaccard(shingles('Breaking news'), shingles('breaking NEWS!'))).toBe(1);
    expect(jaccard(shingles('Breaking news'), shingles('Breaking'))).toBe(0);
  });

  it('gives text without words no shingles, and no similarity to anything', () => {
    expect(shingles('  — … !! ')).toHaveLength(0);
    expect(jaccard(new Uint32Array(0), new Uint32Array(0))).toBe(0);
    expect(jaccard(shingles('one two three'), new Uint32Array(0))).toBe(0);
  });
});

describe('character trigram shingles', () => {
  it('normalises case and non-letters to single spaces', () => {
    expect(normaliseForCharacters('  Hello,   World!! ')).toBe('hello world');
    expect(shingles('abcd', 'char3')).toHaveLength(2);
    expect(jaccard(shingles('Hello, World', 'char3'), shingles('hello world!', 'char3'))).toBe(1);
  });

  it('scores unrelated English higher than word trigrams do (why word trigrams are the default)', () => {
    const a = 'The minister said on Monday that the government would raise interest rates again.';
    const b = 'Fans gathered outside the stadium in the rain, hoping the team would win the final.';
    const chars = jaccard(shingles(a, 'char3'), shingles(b, 'char3'));
    const words = jaccard(shingles(a), shingles(b));
    expect(words).toBe(0);
    expect(chars).toBeGreaterThan(0.05);
  });
});

describe('jaccard', () => {
  const set = fc
    .uniqueArray(fc.integer({ min: 0, max: 200 }), { maxLength: 60 })
    .map((xs) => Uint32Array.from(xs).sort());

  it('is symmetric, within [0, 1], 1 on itself, and agrees with intersectionSize', () => {
    fc.assert(
      fc.property(set, set, (a, b) => {
        const j = jaccard(a, b);
        expect(j).toBe(jaccard(b, a));
        expect(j).toBeGreaterThanOrEqual(0);
        expect(j).toBeLessThanOrEqual(1);
        if (a.length > 0) expect(jaccard(a, a)).toBe(1);
        const naive = [...a].filter((x) => b.includes(x)).length;
        expect(intersectionSize(a, b)).toBe(naive);
      }),
    );
  });
});

import { describe, expect, it } from 'vitest';
import { mergePassageMatches } from '../../processors/query/passage-matches.js';

describe('mergePassageMatches', () => {
  it('gives each statement the better of its own match and its passage’s, each relative to its list’s best', () => {
    const merged = mergePassageMatches(
      // The statements' own BM25: s1 best, s2 a quarter of it.
      [
        { id: 's1', score: 8 },
        { id: 's2', score: 2 },
      ],
      // The chunks' BM25 (another index, another scale): c2 best, c1 half of it.
      [
        { id: 'c2', score: 30 },
        { id: 'c1', score: 15 },
      ],
      [
        { id: 's1', chunkIds: ['c1'] },
        { id: 's2', chunkIds: ['c2'] },
        { id: 's3', chunkIds: ['c2'] },
        { id: 's4', chunkIds: ['c9'] },
      ],
    );
    // s1 keeps its own 1; s2 rises to its passage's 1 and comes after s1, whose own match is better;
    // s3 has only its passage's; s4's chunk was not matched and it had no match of its own.
    expect(merged).toEqual([
      { id: 's1', score: 1 },
      { id: 's2', score: 1 },
      { id: 's3', score: 1 },
    ]);
  });

  it('takes the best of several matched chunks, and orders equal statements by passage rank then id', () => {
    const merged = mergePassageMatches(
      [],
      [
        { id: 'c1', score: 10 },
        { id: 'c2', score: 5 },
        { id: 'c3', score: 5 },
      ],
      [
        { id: 'z', chunkIds: ['c2'] },
        { id: 'y', chunkIds: ['c3', 'c1'] },
        { id: 'x', chunkIds: ['c3'] },
        { id: 'w', chunkIds: ['c2'] },
      ],
    );
    expect(merged).toEqual([
      { id: 'y', score: 1 },
      { id: 'w', score: 0.5 },
      { id: 'z', score: 0.5 },
      { id: 'x', score: 0.5 },
    ]);
  });

  it('is the statements’ own list, scaled, when no passage matched', () => {
    expect(
      mergePassageMatches(
        [
          { id: 'a', score: 4 },
          { id: 'b', score: 1 },
        ],
        [],
        [],
      ),
    ).toEqual([
      { id: 'a', score: 1 },
      { id: 'b', score: 0.25 },
    ]);
    expect(mergePassageMatches([], [], [])).toEqual([]);
  });

  it('keeps cosines as they are: one model scores both lists', () => {
    expect(
      mergePassageMatches(
        [
          { id: 's1', score: 0.8 },
          { id: 's2', score: 0.7 },
        ],
        [{ id: 'c2', score: 0.9 }],
        [
          { id: 's1', chunkIds: ['c1'] },
          { id: 's2', chunkIds: ['c2'] },
        ],
        'raw',
      ),
    ).toEqual([
      { id: 's2', score: 0.9 },
      { id: 's1', score: 0.8 },
    ]);
  });
});

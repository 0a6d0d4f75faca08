import { describe, expect, it } from 'vitest';
import { interactionId } from '../../processors/extract/interaction-extractor.js';
import { citationUrls, RecentInteractions, statementKey } from '../../processors/extract/recent-interactions.js';
import type { Interaction } from '../../schemas/records.generated.js';

const statement = (subject: string, object: string | null, text: string, t = 1_000, variant: 'M1' | 'M2' = 'M1') => ({
  variant,
  subject_id: subject,
  object_id: object,
  text,
  t,
});

/** A record as an extractor makes it: one call, citing `chunks` (each `<chunk>` of article `a-<chunk>`). */
function record(subject: string, object: string | null, text: string, chunks: string[], t = 1_000): Interaction {
  return {
    id: interactionId('M1', subject, object, text, t),
    t,
    subject_id: subject,
    subject_name: subject,
    object_id: object,
    object_name: object,
    text,
    title: `title of ${chunks[0]!}`,
    variant: 'M1',
    chunk_ids: chunks,
    article_ids: chunks.map((c) => `a-${c}`).sort(),
    urls: citationUrls(
      `https://x.example/${chunks[0]!}`,
      chunks.map((c) => `https://x.example/${c}`),
    ),
    model: 'test',
    extracted_at: 0,
  };
}

const content = (i: Interaction) => ({ ...i, extracted_at: 0 });

describe('interactions remembered by statement', () => {
  it('takes both directions of a link and differently spaced or cased text as one statement, and times and variants apart', () => {
    expect(statementKey(statement('e-a', 'e-b', 'A met B'))).toBe(statementKey(statement('e-b', 'e-a', 'a  met b')));
    expect(statementKey(statement('e-a', 'e-b', 'A met B'))).not.toBe(
      statementKey(statement('e-a', 'e-b', 'A met B', 2_000)),
    );
    expect(statementKey(statement('e-a', 'e-b', 'A met B'))).not.toBe(
      statementKey(statement('e-a', 'e-b', 'A met B', 1_000, 'M2')),
    );
    expect(statementKey(statement('e-a', null, 'A spoke'))).not.toBe(statementKey(statement('e-a', 'e-b', 'A spoke')));
  });

  it('writes a statement once per call that adds a chunk or a source, under the first id, and nothing for a call that adds nothing', () => {
    const recent = new RecentInteractions();
    const fromC2 = record('e-a', 'e-b', 'A met B', ['c2']);
    expect(recent.claim([fromC2, fromC2])).toEqual([fromC2]);
    // The other direction of the link, from another chunk: one record citing both.
    const mirrored = record('e-b', 'e-a', 'A met B', ['c1']);
    const [merged] = recent.claim([mirrored]);
    expect(merged!.id).toBe(fromC2.id);
    expect(merged!.subject_id).toBe('e-a');
    expect(merged!.chunk_ids).toEqual(['c1', 'c2']);
    expect(merged!.urls).toEqual(['https://x.example/c1', 'https://x.example/c2']);
    expect(merged!.title).toBe('title of c1');
    expect(recent.claim([mirrored, fromC2])).toEqual([]);
    // The same chunk again with a source merged in (dedupe re-emitted it): its record again, with it.
    const syndicated = {
      ...fromC2,
      article_ids: ['a-c2', 'a-wire'],
      urls: [...fromC2.urls, 'https://wire.example/c2'],
    };
    expect(recent.claim([syndicated])[0]!.article_ids).toEqual(['a-c1', 'a-c2', 'a-wire']);
  });

  it('ends with the same record whatever order the calls came in', () => {
    const calls = [
      record('e-a', 'e-b', 'A met B', ['c3']),
      record('e-a', 'e-b', 'A met B', ['c1', 'c2']),
      record('e-a', 'e-b', 'A met B', ['c2']),
      { ...record('e-a', 'e-b', 'A met B', ['c2']), article_ids: ['a-c2', 'a-wire'] },
    ];
    const last = (order: number[]) => {
      const recent = new RecentInteractions();
      let written: Interaction | undefined;
      for (const i of order) written = recent.claim([calls[i]!]).at(-1) ?? written;
      return content(written!);
    };
    const expected = last([0, 1, 2, 3]);
    expect(expected.chunk_ids).toEqual(['c1', 'c2', 'c3']);
    expect(expected.article_ids).toEqual(['a-c1', 'a-c2', 'a-c3', 'a-wire']);
    for (const order of [
      [3, 2, 1, 0],
      [1, 3, 0, 2],
      [2, 0, 3, 1],
    ]) {
      expect(last(order)).toEqual(expected);
    }
  });

  it('writes a released record again, and forgets the oldest statement past its capacity', () => {
    const recent = new RecentInteractions(2);
    const ab = record('e-a', 'e-b', 'A met B', ['c1']);
    const c = record('e-c', null, 'C left', ['c1']);
    expect(recent.claim([ab, c])).toHaveLength(2);
    recent.release([c]);
    expect(recent.claim([c])).toEqual([c]);
    const d = record('e-d', null, 'D came', ['c1']);
    expect(recent.claim([d])).toEqual([d]); // capacity 2: A met B is forgotten
    expect(recent.claim([ab])).toEqual([ab]);
  });
});

import { describe, expect, it } from 'vitest';
import { RecentInteractions, statementKey } from '../../processors/extract/recent-interactions.js';

const statement = (subject: string, object: string | null, text: string, t = 1_000, variant: 'M1' | 'M2' = 'M1') => ({
  variant,
  subject_id: subject,
  object_id: object,
  text,
  t,
});

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

  it('hands out each statement once, gives a released one out again, and forgets the oldest past its capacity', () => {
    const recent = new RecentInteractions(2);
    const ab = statement('e-a', 'e-b', 'A met B');
    const ba = statement('e-b', 'e-a', 'A met B');
    const c = statement('e-c', null, 'C left');
    expect(recent.claim([ab, ba, ab])).toEqual([ab]);
    expect(recent.claim([ba, c])).toEqual([c]);
    recent.release([c]);
    expect(recent.claim([c])).toEqual([c]);
    const d = statement('e-d', null, 'D came');
    expect(recent.claim([d])).toEqual([d]); // capacity 2: A met B is forgotten
    expect(recent.claim([ba])).toEqual([ba]);
  });
});

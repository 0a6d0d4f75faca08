import { describe, expect, it } from 'vitest';
import { extractiveAnswer, type AnswerItem, type ComposedAnswer } from '../../processors/query/compose-answer.js';
import {
  figuresAgree,
  figuresIn,
  findDisagreements,
  hostOf,
  publisherOf,
} from '../../processors/query/find-disagreements.js';

const TQ = Date.UTC(2025, 2, 3, 23);
const QUESTION = 'How many people were killed in the strike on the school in Gaza?';

function report(id: string, url: string | null, day: string, sentences: string[]): AnswerItem {
  return { id, kind: 'chunk', text: sentences.join(' '), published_at: `${day}T10:00:00.000Z`, url };
}

const UNRELATED = report('weather', 'https://weather.example/today', '2025-03-02', [
  'Heavy rain is expected across the region on Monday.',
]);

function strike(id: string, url: string | null, day: string, lead: string): AnswerItem {
  return report(id, url, day, [lead, 'Rescue workers searched the rubble for survivors through the night.']);
}

/** Every marker in the text is a citation and every citation is marked. */
function expectCitationsMatchMarkers(composed: ComposedAnswer): void {
  const markers = [...composed.answer.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
  expect(composed.citations.map((c) => c.n).sort()).toEqual([...new Set(markers)].sort());
}

function differLines(composed: ComposedAnswer): string[] {
  return composed.answer.split('\n').filter((line) => line.startsWith('Sources differ'));
}

describe('answers with sources that disagree', () => {
  const bbc = strike(
    'bbc',
    'https://www.bbc.com/news/gaza-school-strike',
    '2025-03-01',
    'An Israeli strike on a school in Gaza killed 12 people on Saturday, the civil defence agency said.',
  );
  const reuters = strike(
    'reuters',
    'https://www.reuters.com/world/gaza-school-strike',
    '2025-03-02',
    'Fifteen people were killed when an Israeli strike hit a school in Gaza, the civil defence agency said.',
  );

  it('two reports of one event with different tolls: the answer says both, dated and cited', () => {
    const items = [UNRELATED, reuters, bbc];
    const composed = extractiveAnswer(QUESTION, TQ, items);
    expect(differLines(composed)).toEqual([
      'Sources differ: bbc.com reported 12 killed on March 1, 2025 [3]; reuters.com reported fifteen killed on March 2, 2025 [2].',
    ]);
    expect(composed.answer.split('\n')[1]).toMatch(/^Sources differ/);
    expect(composed.citations.map((c) => c.id)).toEqual(expect.arrayContaining(['bbc', 'reuters']));
    expectCitationsMatchMarkers(composed);
    expect(composed.disagreements).toEqual([
      {
        slot: 'killed',
        sources: [
          { n: 3, source: 'bbc.com', value: '12 killed', published_at: bbc.published_at },
          { n: 2, source: 'reuters.com', value: 'fifteen killed', published_at: reuters.published_at },
        ],
      },
    ]);
  });

  it('cites a disagreeing report even when the answer would not otherwise quote it', () => {
    // Only the lead is quoted (support: the other item is too weak), yet its rival is cited on the line.
    const ap = report('ap', 'https://apnews.com/article/gaza', '2025-03-02', [
      'Officials said on Sunday that the school had housed hundreds of families.',
      'The civil defence agency said an Israeli strike on the school in Gaza killed 14 people.',
    ]);
    const composed = extractiveAnswer(QUESTION, TQ, [bbc, ap]);
    expect(differLines(composed)).toHaveLength(1);
    expect(differLines(composed)[0]).toContain('apnews.com reported 14 killed on March 2, 2025 [2]');
    expectCitationsMatchMarkers(composed);
  });

  it('the same toll, killed against injured, or two different events: no disagreement line', () => {
    const sameToll = strike(
      'same',
      'https://www.reuters.com/world/gaza-school',
      '2025-03-02',
      'Twelve people were killed when an Israeli strike hit a school in Gaza, the civil defence agency said.',
    );
    const injured = strike(
      'injured',
      'https://www.reuters.com/world/gaza-school',
      '2025-03-02',
      'An Israeli strike on a school in Gaza injured 15 people on Saturday, the civil defence agency said.',
    );
    const otherEvent = strike(
      'baghdad',
      'https://www.reuters.com/world/baghdad',
      '2025-03-02',
      'A car bomb at a crowded market in Baghdad killed 15 people during the evening rush.',
    );
    for (const rival of [sameToll, injured, otherEvent]) {
      const composed = extractiveAnswer(QUESTION, TQ, [bbc, rival]);
      expect(differLines(composed), rival.id).toEqual([]);
      expect(composed.disagreements, rival.id).toBeUndefined();
    }
  });

  it('a publisher’s own later figure, a bound the other figure meets, or a report weeks apart: no disagreement', () => {
    const correction = strike(
      'bbc-update',
      'https://www.bbc.com/news/gaza-school-strike-update',
      '2025-03-02',
      'Fifteen people were killed when an Israeli strike hit a school in Gaza, the civil defence agency said.',
    );
    const atLeast = strike(
      'at-least',
      'https://www.reuters.com/world/gaza',
      '2025-03-02',
      'At least 10 people were killed when an Israeli strike hit a school in Gaza, the civil defence agency said.',
    );
    const later = { ...reuters, published_at: '2025-03-20T10:00:00.000Z' };
    for (const rival of [correction, atLeast, later]) {
      expect(differLines(extractiveAnswer(QUESTION, Date.UTC(2025, 2, 21), [bbc, rival])), rival.id).toEqual([]);
    }
  });

  it('a who-question whose sources name different winners of the same race', () => {
    const items: AnswerItem[] = [
      report('a', 'https://springfield-herald.example/mayor', '2025-03-01', [
        'Voters in Springfield elected Jane Smith as mayor on Tuesday.',
      ]),
      report('b', 'https://capitol-news.example/race', '2025-03-02', [
        'Voters in Springfield elected Maria Jones as mayor on Tuesday.',
      ]),
    ];
    const composed = extractiveAnswer('Who was elected mayor of Springfield?', TQ, items);
    expect(differLines(composed)).toEqual([
      'Sources differ: springfield-herald.example reported Jane Smith on March 1, 2025 [1]; capitol-news.example reported Maria Jones on March 2, 2025 [2].',
    ]);
    expectCitationsMatchMarkers(composed);
    // A different town is another race.
    const other = [items[0]!, { ...items[1]!, text: 'Voters in Shelbyville elected Maria Jones as mayor on Tuesday.' }];
    expect(differLines(extractiveAnswer('Who was elected mayor?', TQ, other))).toEqual([]);
  });
});

describe('reading figures', () => {
  it('ties each figure to its unit, as reported', () => {
    expect(figuresIn('An Israeli strike on a school in Gaza killed 12 people on Saturday.')).toEqual([
      { slot: 'killed', value: 12, bound: 'exact', phrase: '12 killed' },
    ]);
    expect(figuresIn('At least 30 people were injured and 4 are missing.')).toEqual([
      { slot: 'injured', value: 30, bound: 'lower', phrase: 'at least 30 injured' },
      { slot: 'missing', value: 4, bound: 'exact', phrase: '4 missing' },
    ]);
    expect(figuresIn('The death toll rose to 1,204 on Monday.')).toEqual([
      { slot: 'killed', value: 1204, bound: 'exact', phrase: '1,204 killed' },
    ]);
    expect(figuresIn('The CDU/CSU won 28.5% of the vote and 208 seats.')).toEqual([
      { slot: '% of vote', value: 28.5, bound: 'exact', phrase: '28.5% of the vote' },
      { slot: 'seats', value: 208, bound: 'exact', phrase: '208 seats' },
    ]);
    expect(figuresIn('The deal is worth $2.5 billion.')).toEqual([
      { slot: '$', value: 2.5e9, bound: 'exact', phrase: '$2.5 billion' },
    ]);
    expect(figuresIn('Eight soldiers were killed near the border.')[0]).toMatchObject({ slot: 'soldiers killed' });
  });

  it('leaves out measures, unitless figures and a unit given two values', () => {
    expect(figuresIn('The man who killed 12 years ago was released.')).toEqual([]);
    expect(figuresIn('No one was killed in the fire on March 3.')).toEqual([]);
    expect(figuresIn('Five people died on Monday and seven died on Tuesday.')).toEqual([]);
  });

  it('figures of one slot disagree only when both cannot be true', () => {
    const exact = (value: number) => ({ value, bound: 'exact' as const });
    expect(figuresAgree(exact(12), exact(15))).toBe(false);
    expect(figuresAgree(exact(12), exact(12))).toBe(true);
    expect(figuresAgree({ value: 12, bound: 'lower' }, exact(15))).toBe(true);
    expect(figuresAgree({ value: 12, bound: 'lower' }, exact(10))).toBe(false);
    expect(figuresAgree({ value: 20, bound: 'upper' }, exact(15))).toBe(true);
    expect(figuresAgree({ value: 100, bound: 'about' }, exact(104))).toBe(true);
    expect(figuresAgree({ value: 100, bound: 'about' }, exact(150))).toBe(false);
    expect(figuresAgree({ value: 12, bound: 'lower' }, { value: 15, bound: 'lower' })).toBe(true);
  });

  it('tells publishers apart by host', () => {
    expect(hostOf('https://www.bbc.co.uk/news/1')).toBe('bbc.co.uk');
    expect(publisherOf('news.bbc.co.uk')).toBe('bbc.co.uk');
    expect(publisherOf(hostOf('https://edition.cnn.com/x')!)).toBe('cnn.com');
    expect(publisherOf('cnn.com')).toBe(publisherOf('us.cnn.com'));
    expect(hostOf(null)).toBeNull();
    expect(hostOf('not a url')).toBeNull();
  });

  it('needs URLs to tell the sources apart', () => {
    const a = {
      text: 'A strike on a school in Gaza killed 12 people, officials said.',
      published_at: '2025-03-01T00:00:00Z',
    };
    const b = {
      text: 'A strike on a school in Gaza killed 15 people, officials said.',
      published_at: '2025-03-01T00:00:00Z',
    };
    const stated = [{ item: 0, text: a.text, answers: [] }];
    expect(
      findDisagreements(
        [
          { ...a, url: 'https://a.example/1' },
          { ...b, url: 'https://b.example/1' },
        ],
        stated,
      ),
    ).toHaveLength(1);
    expect(
      findDisagreements(
        [
          { ...a, url: null },
          { ...b, url: 'https://b.example/1' },
        ],
        stated,
      ),
    ).toEqual([]);
  });
});

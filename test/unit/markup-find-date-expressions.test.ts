import { describe, expect, it } from 'vitest';

import { findDateExpressions } from '../../processors/markup/find-date-expressions.js';

/** Wednesday 15 January 2025, 12:00 UTC. */
const PUBLISHED = Date.UTC(2025, 0, 15, 12);
const iso = (ms: number): string => new Date(ms).toISOString();
const found = (text: string): string[] =>
  findDateExpressions(text, PUBLISHED).map((d) => `${d.text}|${iso(d.refers_to)}|${d.granularity}`);

describe('findDateExpressions', () => {
  it('resolves absolute and relative dates against the publication time, in UTC', () => {
    expect(found('Yesterday the deal, signed on 19 January, was confirmed, and last Tuesday talks began.')).toEqual([
      'Yesterday|2025-01-14T00:00:00.000Z|DAY',
      '19 January|2025-01-19T00:00:00.000Z|DAY',
      'last Tuesday|2025-01-14T00:00:00.000Z|DAY',
    ]);
  });

  it('states month and time granularity', () => {
    expect(found('Theresa May resigned in March 2019. They met on Jan. 5 at 3 p.m. in Paris.')).toEqual([
      'March 2019|2019-03-01T00:00:00.000Z|MONTH',
      'Jan. 5 at 3 p.m.|2025-01-05T15:00:00.000Z|TIME',
    ]);
  });

  it('gives offsets into the text and drops the leading preposition', () => {
    const text = 'It happened on Sunday.';
    const [date] = findDateExpressions(text, PUBLISHED);
    expect(date).toMatchObject({ text: 'Sunday', start: 15, end: 21, granularity: 'DAY' });
    expect(text.slice(date!.start, date!.end)).toBe(date!.text);
  });

  it('avoids false positives: names, verbs, bare months, numbers, fractions and mastheads', () => {
    expect(
      found(
        'Theresa May spoke. Protesters march downtown. In May he said 2019 was bad; the vote was 52-48 and 3/4 agreed. Special for USA TODAY. It is now clear.',
      ),
    ).toEqual([]);
  });

  it('does not run a date across a sentence end', () => {
    expect(found('It happened in early February. 12 people died.')).toEqual([]);
  });

  it('returns nothing for empty text', () => {
    expect(findDateExpressions('', PUBLISHED)).toEqual([]);
  });
});

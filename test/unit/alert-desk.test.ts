import { describe, expect, it } from 'vitest';
import { AlertDesk, isGenericName, isShortFormOf } from '../../processors/spikes/alert-desk.js';
import { digestJson, digestLines } from '../../processors/spikes/digest-view.js';
import { DAY_MS, HOUR_MS } from '../../processors/spikes/spike-rule.js';
import type { SpikeAlert } from '../../schemas/records.generated.js';
import { DAY0 } from './spike-fixtures.js';

let detected = 0;

/** A STARTED day alert of the count model on `day` with these articles. */
function alert(
  name: string,
  significance: number,
  articles: string[],
  extra: Partial<SpikeAlert> & { day?: number } = {},
): SpikeAlert {
  const day = DAY0 + (extra.day ?? 0) * DAY_MS;
  detected += 1;
  const id = `e-${name.toLowerCase().replace(/\W+/g, '-')}`;
  return {
    id: `spike:${id}:day:${new Date(day).toISOString().slice(0, 10)}`,
    entity_id: id,
    entity_name: name,
    entity_type: 'PERSON',
    granularity: 'DAY',
    window_start: day,
    window_end: day + DAY_MS,
    observed: articles.length,
    baseline_mean: 1,
    baseline_std: 1,
    threshold: 3,
    score: significance,
    article_ids: articles,
    urls: articles.map((a) => `https://news.example/${a}`),
    detected_at: day + detected,
    state: 'STARTED',
    episode_start: day,
    rule: 'rule',
    baseline_buckets: 28,
    counts: [],
    first_interactions: [],
    method: 'surprise',
    significance,
    articles: articles.length,
    ...extra,
  };
}

describe('alias rules of the desk', () => {
  it('knows last names, acronyms and legal suffixes, and generic words', () => {
    expect(isShortFormOf('Baker', { name: 'James Baker', type: 'PERSON' })).toBe(true);
    expect(isShortFormOf('EC', { name: 'European Community', type: 'ORGANIZATION' })).toBe(true);
    expect(isShortFormOf('Chrysler', { name: 'Chrysler Corp', type: 'ORGANIZATION' })).toBe(true);
    expect(isShortFormOf('James', { name: 'James Baker', type: 'PERSON' })).toBe(false);
    expect(isShortFormOf('Africa', { name: 'South Africa', type: 'LOCATION' })).toBe(false);
    for (const generic of ['Ltd', 'Inc', 'Council', 'Community', 'The Ministry', 'INC']) {
      expect(isGenericName(generic), generic).toBe(true);
    }
    for (const name of ['European Community', 'Congress', 'Goma', 'World Bank'])
      expect(isGenericName(name), name).toBe(false);
  });
});

describe('AlertDesk', () => {
  it('files aliases and co-mentioned entities of one day as one story, led by its most significant name', () => {
    const desk = new AlertDesk();
    desk.apply(alert('James Baker', 4, ['a1', 'a2', 'a3']));
    desk.apply(alert('Baker', 5, ['b1', 'b2', 'b3']));
    desk.apply(alert('European Community', 3, ['c1', 'c2', 'c3'], { entity_type: 'ORGANIZATION' }));
    desk.apply(alert('EC', 2, ['c4', 'c5', 'c6'], { entity_type: 'ORGANIZATION' }));
    desk.apply(alert('Goma', 3.5, ['g1', 'g2', 'g3', 'g4'], { entity_type: 'LOCATION' }));
    desk.apply(alert('M23', 3.2, ['g1', 'g2', 'g3', 'g5'], { entity_type: 'ORGANIZATION' }));
    // Another name with no alias and no shared article stays its own story.
    desk.apply(alert('Howard Baker', 2.5, ['h1', 'h2', 'h3']));
    const stories = desk.storiesOn(DAY0);
    expect(stories.map((s) => [s.lead.entity_name, s.members.map((m) => m.entity_name).sort()])).toEqual([
      ['Baker', ['Baker', 'James Baker']],
      ['Goma', ['Goma', 'M23']],
      ['European Community', ['EC', 'European Community']],
      ['Howard Baker', ['Howard Baker']],
    ]);
    expect(stories[1]!.members.find((m) => m.entity_name === 'M23')!.relation).toBe('co-mention');
    expect(stories[1]!.articles).toBe(5);
  });

  it('never lets a generic word lead or be delivered, but lets it join a story', () => {
    const desk = new AlertDesk();
    const ltd = desk.apply(alert('Ltd', 9, ['x1', 'x2', 'x3'], { entity_type: 'ORGANIZATION' }));
    expect(ltd.story.generic).toBe(true);
    expect(ltd.delivered).toBe(false);
    desk.apply(alert('Council', 8, ['k1', 'k2', 'k3'], { entity_type: 'ORGANIZATION' }));
    const joined = desk.apply(alert('Tokyo Electric', 2, ['k1', 'k2', 'k3'], { entity_type: 'ORGANIZATION' }));
    expect(joined.story.lead.entity_name).toBe('Tokyo Electric');
    expect(joined.story.significance).toBe(2);
    expect(joined.delivered).toBe(true);
    const digest = desk.digest(DAY0);
    expect(digest.stories.map((s) => s.lead.entity_name)).toEqual(['Tokyo Electric']);
    expect(digest.totals).toMatchObject({ stories: 2, generic: 1, delivered: 1 });
  });

  it('delivers within the budget per day and per hour, ranks the digest, and keeps the rest queryable', () => {
    const desk = new AlertDesk({ budget: { perDay: 3, perHour: 1, minSignificance: 1, pushSignificance: 1 } });
    const delivered = [1.5, 0.5, 2, 6, 3, 4].map(
      (s, i) => desk.apply(alert(`Name ${String.fromCharCode(65 + i)}`, s, [`n${i}a`, `n${i}b`, `n${i}c`])).delivered,
    );
    // Below the bar (0.5) never; the fourth above it is over the day's budget of 3.
    expect(delivered).toEqual([true, false, true, true, false, false]);
    const digest = desk.digest(DAY0);
    expect(digest.stories.map((s) => s.significance)).toEqual([6, 4, 3]);
    expect(digest.more.map((s) => s.significance)).toEqual([2, 1.5]);
    expect(desk.digest(DAY0, { all: true }).more.map((s) => s.significance)).toEqual([2, 1.5, 0.5]);
    // Hourly alerts: one story an hour.
    const hourly = (name: string, hour: number): SpikeAlert =>
      alert(name, 5, [`${name}1`, `${name}2`, `${name}3`], {
        day: 3,
        granularity: 'HOUR',
        episode_start: DAY0 + 3 * DAY_MS + hour * HOUR_MS,
        window_end: DAY0 + 3 * DAY_MS + (hour + 1) * HOUR_MS,
      });
    expect([hourly('P', 9), hourly('Q', 9), hourly('R', 10)].map((a) => desk.apply(a).delivered)).toEqual([
      true,
      false,
      true,
    ]);
  });

  it('ranks stories by significance times the articles above expectation, so big stories lead', () => {
    const desk = new AlertDesk();
    const ids = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    // A new name's three articles where 0.2 were expected, at p = 0.001.
    desk.apply(alert('Minova', 3, ids('m', 3), { baseline_mean: 0.2 }));
    // A known entity's coverage jumping from 30 to 70 articles, at p = 0.01.
    desk.apply(alert('Washington', 2, ids('w', 20), { observed: 70, articles: 70, baseline_mean: 30 }));
    // A very big entity's ordinary wobble: 105 where 100 were expected, barely past the bar.
    desk.apply(alert('United States', 0.7, ids('u', 20), { observed: 105, articles: 105, baseline_mean: 100 }));
    const ranked = desk.digest(DAY0).stories;
    expect(ranked.map((s) => s.lead.entity_name)).toEqual(['Washington', 'Minova', 'United States']);
    expect(ranked[0]!.weight).toBeCloseTo(2 * Math.log2(41), 6);
    expect(ranked[1]!.weight).toBeCloseTo(3 * Math.log2(3.8), 6);
    // Significance alone would have put the new name first.
    expect(ranked[1]!.significance).toBeGreaterThan(ranked[0]!.significance);
  });

  it('lists a weak story in the digest and pushes it only once it has grown past the push bar', () => {
    const desk = new AlertDesk();
    const first = alert('Minova', 0.8, ['m1', 'm2', 'm3'], { entity_type: 'LOCATION' });
    expect(desk.apply(first).delivered).toBe(false);
    expect(desk.digest(DAY0).stories.map((s) => s.lead.entity_name)).toEqual(['Minova']);
    const grown = desk.apply({ ...first, state: 'ONGOING', significance: 2.6, observed: 9, articles: 9 });
    expect(grown).toMatchObject({ delivered: true, created: false });
    expect(grown.story.significance).toBe(2.6);
    expect(desk.apply({ ...first, state: 'ONGOING', significance: 3.9, observed: 14 }).delivered).toBe(false);
  });

  it('prints a digest with the story, its names and its numbers', () => {
    const desk = new AlertDesk();
    desk.apply(alert('Goma', 3.5, ['g1', 'g2', 'g3', 'g4'], { entity_type: 'LOCATION' }));
    desk.apply(alert('M23', 3.2, ['g1', 'g2', 'g3', 'g5'], { entity_type: 'ORGANIZATION' }));
    const lines = digestLines(digestJson(desk.digest(DAY0)));
    expect(lines[0]).toMatch(/^spike digest for 2025-01-06: 1 of 1 story above the bar/);
    expect(lines[1]).toBe('  1. Goma (LOCATION)  significance 3.5  5 articles (4 in the window, expected 1.0)  + M23');
    expect(lines[2]).toBe('       https://news.example/g1');
  });
});

describe('a day’s digest and the days after it', () => {
  it('links the sources known on the story’s day, not those of a later, stronger window', () => {
    const desk = new AlertDesk();
    desk.apply(alert('Maria Lindqvist', 2, ['d0-a', 'd0-b', 'd0-c']));
    // The next day's window is stronger and lists the next day's articles.
    desk.apply(
      alert('Maria Lindqvist', 6, ['d1-a', 'd1-b', 'd0-a'], {
        day: 1,
        id: desk.storiesOn(DAY0)[0]!.id,
        state: 'ONGOING',
        episode_start: DAY0,
      }),
    );
    const [story] = digestJson(desk.digest(DAY0)).stories;
    expect(story!.significance).toBe(6);
    expect(story!.urls).toEqual([
      'https://news.example/d0-a',
      'https://news.example/d0-b',
      'https://news.example/d0-c',
    ]);
    expect(story!.article_ids).toEqual(['d0-a', 'd0-b', 'd0-c']);
  });
});

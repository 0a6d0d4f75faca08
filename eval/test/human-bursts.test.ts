import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../processors/spikes/spike-rule.js';
import { burstHit, explainMiss, type HumanBurst, type ProductEpisode, type RankedAlert } from '../human-bursts.js';

const DAY0 = Date.UTC(2025, 1, 10);
const day = (n: number): number => DAY0 + n * DAY_MS;
const titles = new Map([
  ['e-m23', 'March 23 Movement'],
  ['e-goma', 'Goma'],
  ['e-usa', 'United States'],
]);
const burst = (title: string, start: number): HumanBurst => ({ title, start: day(start), days: 1, stories: 4 });
const story = (lead: string, ...others: string[]): RankedAlert => ({
  lead,
  name: lead,
  entities: [lead, ...others],
  significance: 1,
});

describe('human bursts against the product', () => {
  it('finds a burst among the alerts of its window, by any entity of its story', () => {
    const byDay = new Map<number, RankedAlert[]>([
      [day(-3), [story('e-usa')]],
      [day(-1), [story('e-usa'), story('e-goma', 'e-m23')]],
    ]);
    expect(burstHit(burst('March 23 Movement', 0), byDay, titles)).toEqual({ rank: 2, lead: false });
    expect(burstHit(burst('Goma', 0), byDay, titles)).toEqual({ rank: 2, lead: true });
    // Three days before is outside the window of a burst starting on day 0.
    expect(burstHit(burst('United States', 2), byDay, titles)).toBeUndefined();
  });

  it('tells why a burst was missed', () => {
    const m23 = burst('March 23 Movement', 0);
    const usa = burst('United States', 0);
    const goma = burst('Goma', 0);
    const visible = new Set([m23, usa]);
    const episodes: ProductEpisode[] = [
      // M23 has been in an episode since four days before the burst.
      { entity_id: 'e-m23', start: day(-4), last: day(1), storyDay: day(-4) },
      // An old United States episode ended before the window.
      { entity_id: 'e-usa', start: day(-9), last: day(-5), storyDay: day(-9) },
    ];
    // Articles a day: M23 and the United States in 3 or more over three days, Goma's split over two names.
    const perDay = new Map([
      ['e-m23', new Map([[day(-1), 3]])],
      [
        'e-usa',
        new Map([
          [day(-2), 1],
          [day(-1), 1],
          [day(0), 1],
        ]),
      ],
      ['e-goma', new Map([[day(0), 2]])],
      ['e-goma-city', new Map([[day(-1), 2]])],
    ]);
    const withCity = new Map([...titles, ['e-goma-city', 'Goma']]);
    expect(explainMiss(m23, visible, episodes, titles, perDay)).toBe('earlier_story');
    expect(explainMiss(usa, visible, episodes, titles, perDay)).toBe('below_bar');
    expect(explainMiss(goma, visible, episodes, withCity, perDay)).toBe('few_articles');
    expect(explainMiss(goma, new Set([goma]), episodes, withCity, perDay)).toBe('split_names');
    // An episode of the window filed under a story of the day before the window.
    const joined = [{ entity_id: 'e-usa', start: day(-1), last: day(0), storyDay: day(-3) }];
    expect(explainMiss(usa, visible, joined, titles, perDay)).toBe('earlier_story');
    const unlisted = [{ entity_id: 'e-usa', start: day(-1), last: day(0), storyDay: day(-1) }];
    expect(explainMiss(usa, visible, unlisted, titles, perDay)).toBe('not_listed');
  });
});

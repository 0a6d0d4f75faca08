import { describe, expect, it } from 'vitest';
import { SpikeBook } from '../../processors/spikes/spike-book.js';
import { SpikeTargets } from '../../processors/spikes/spike-targets.js';
import { DAY_MS } from '../../processors/spikes/spike-rule.js';
import type { SpikeAlert } from '../../schemas/records.generated.js';
import { DAY0 } from './spike-fixtures.js';

function alert(entity: string, state: SpikeAlert['state'], day: number, extra: Partial<SpikeAlert> = {}): SpikeAlert {
  const start = DAY0 + 3 * DAY_MS;
  return {
    id: `spike:${entity}:day:2025-01-09`,
    entity_id: entity,
    entity_name: entity,
    entity_type: 'PERSON',
    granularity: 'DAY',
    window_start: DAY0 + (day - 2) * DAY_MS,
    window_end: DAY0 + (day + 1) * DAY_MS,
    observed: 5 + day,
    baseline_mean: 2,
    baseline_std: 1,
    threshold: 3,
    score: 3 + day,
    article_ids: [],
    urls: [],
    detected_at: DAY0 + day * DAY_MS,
    state,
    episode_start: start,
    rule: 'rule',
    baseline_buckets: 5,
    counts: [],
    first_interactions: [],
    method: 'neon',
    significance: 2,
    articles: 3,
    ...extra,
  };
}

describe('SpikeBook', () => {
  it('follows an episode through its states and announces each state once', () => {
    const book = new SpikeBook();
    expect(book.apply(alert('e-a', 'STARTED', 3))?.seq).toBe(1);
    expect(book.apply(alert('e-a', 'STARTED', 3))).toBeUndefined();
    expect(book.apply(alert('e-a', 'ONGOING', 3))?.seq).toBe(2);
    expect(book.query({ state: 'open' }).map((e) => e.id)).toEqual(['spike:e-a:day:2025-01-09']);
    book.apply(alert('e-a', 'ENDED', 5));
    const [episode] = book.query();
    expect(episode).toMatchObject({ open: false, ended_at: DAY0 + 6 * DAY_MS, peak_observed: 8, peak_score: 6 });
    expect(episode!.states.map((s) => s.state)).toEqual(['STARTED', 'ONGOING', 'ENDED']);
    expect(book.query({ state: 'open' })).toEqual([]);
    expect(book.eventsAfter(1).map((e) => e.alert.state)).toEqual(['ONGOING', 'ENDED']);
  });

  it("takes a state that grew within the same window as the episode's latest, never an older one", () => {
    const book = new SpikeBook();
    book.apply(alert('e-a', 'STARTED', 3, { observed: 3 }));
    book.apply(alert('e-a', 'ONGOING', 3, { observed: 6 }));
    expect(book.query()[0]!.latest).toMatchObject({ state: 'ONGOING', observed: 6 });
    book.apply(alert('e-a', 'ONGOING', 3, { observed: 9 }));
    expect(book.query()[0]!.latest).toMatchObject({ state: 'ONGOING', observed: 9 });
    // A state sent earlier that arrives late (redelivered after a restart) changes nothing.
    book.apply(alert('e-a', 'ONGOING', 3, { observed: 4 }));
    book.apply(alert('e-a', 'STARTED', 3, { observed: 2 }));
    expect(book.query()[0]!.latest).toMatchObject({ state: 'ONGOING', observed: 9 });
  });

  it('filters by entity, granularity and time, open episodes first', () => {
    const book = new SpikeBook();
    book.apply(alert('e-a', 'STARTED', 3));
    book.apply(alert('e-a', 'ENDED', 4));
    book.apply(alert('e-b', 'STARTED', 3, { id: 'spike:e-b:day:2025-01-09' }));
    book.apply(alert('e-c', 'STARTED', 8, { id: 'spike:e-c:hour:2025-01-14T05', granularity: 'HOUR' }));
    expect(book.query().map((e) => e.entity_id)).toEqual(['e-c', 'e-b', 'e-a']);
    expect(book.query({ entityId: 'e-a' })).toHaveLength(1);
    expect(book.query({ granularity: 'HOUR' }).map((e) => e.entity_id)).toEqual(['e-c']);
    expect(book.query({ since: DAY0 + 10 * DAY_MS }).map((e) => e.entity_id)).toEqual(['e-c', 'e-b']);
    expect(book.query({ limit: 1 })).toHaveLength(1);
  });

  it('stays bounded, dropping the oldest ended episodes first', () => {
    const book = new SpikeBook(3, 2);
    for (let i = 0; i < 5; i++) {
      book.apply(alert(`e-${i}`, 'STARTED', 3 + i, { id: `s${i}`, episode_start: DAY0 + i * DAY_MS }));
      if (i < 3) book.apply(alert(`e-${i}`, 'ENDED', 4 + i, { id: `s${i}`, episode_start: DAY0 + i * DAY_MS }));
    }
    expect(book.size()).toBe(3);
    expect(
      book
        .query()
        .map((e) => e.id)
        .sort(),
    ).toEqual(['s2', 's3', 's4']);
    expect(book.eventsAfter(0)).toHaveLength(2);
  });
});

describe('SpikeTargets', () => {
  it('makes a spiking entity a target around its episode, and until a while after it ended', () => {
    const targets = new SpikeTargets({ beforeStartMs: DAY_MS, afterEndMs: 2 * DAY_MS });
    const started = alert('e-a', 'STARTED', 3);
    targets.apply(started);
    const start = started.episode_start!;
    expect(targets.isTarget('e-a', start - DAY_MS)).toBe(true);
    expect(targets.isTarget('e-a', start - DAY_MS - 1)).toBe(false);
    expect(targets.isTarget('e-a', start + 100 * DAY_MS)).toBe(true); // open: no end yet
    const ended = alert('e-a', 'ENDED', 6);
    targets.apply(ended);
    expect(targets.isTarget('e-a', ended.window_end + 2 * DAY_MS)).toBe(true);
    expect(targets.isTarget('e-a', ended.window_end + 2 * DAY_MS + 1)).toBe(false);
    // A redelivered STARTED does not reopen it.
    targets.apply(started);
    expect(targets.isTarget('e-a', start + 100 * DAY_MS)).toBe(false);
    expect(targets.list(start)).toEqual(['e-a']);
    expect(targets.isTarget('e-b', start)).toBe(false);
    targets.prune(ended.window_end + 3 * DAY_MS);
    expect(targets.list(start)).toEqual([]);
  });
});

import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { SpikeDetector } from '../../processors/spikes/detect-spikes.js';
import { detectSpikes, type PartitionedMention } from '../harness/detect-spikes-operator.js';
import { NEON_DAY_RULE } from '../../processors/spikes/spike-rule.js';
import type { Mention } from '../../schemas/records.generated.js';
import { mentionOf, TEST_NOW } from './spike-fixtures.js';

/**
 * The window logic on virtual time: mentions arrive at marble frames (arrival time) carrying their
 * own event times; alerts must follow event time only, appear on the frame of the mention that
 * caused them, and never wait for a buffer.
 */
function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

const on =
  (partition: number) =>
  (mention: Mention): PartitionedMention => ({ mention, partition });
const label = (alert: { entity_id: string; state: string }) => `${alert.entity_id}:${alert.state}`;

// A week of one mention a day (a, …), then a burst on day 7 (b, b, b), then time moves on (c).
const values: Record<string, Mention> = {
  0: mentionOf('e-ana', 0),
  1: mentionOf('e-ana', 1),
  2: mentionOf('e-ana', 2),
  3: mentionOf('e-ana', 3),
  4: mentionOf('e-ana', 4),
  5: mentionOf('e-ana', 5),
  6: mentionOf('e-ana', 6),
  x: mentionOf('e-ana', 7, { hour: 9 }),
  y: mentionOf('e-ana', 7, { hour: 10 }),
  z: mentionOf('e-ana', 7, { hour: 11 }),
  q: mentionOf('e-quiet', 10, { hour: 1 }),
  r: mentionOf('e-quiet', 11, { hour: 1 }),
  l: mentionOf('e-ana', 5, { hour: 3, article: 'late-copy' }),
};

describe('detectSpikes operator (marbles)', () => {
  it('emits STARTED on the frame of the crossing mention, and the update and end when event time closes days', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const detector = new SpikeDetector({ day: NEON_DAY_RULE, hour: null, now: () => TEST_NOW });
      const mentions = cold('0123456-x-y-z----q---r|', values).pipe(map(on(0)));
      const alerts = mentions.pipe(detectSpikes(detector), map(label));
      // Frame 12 (z): 1 + 1 + 3 = 5 > 4. Frame 17 (q, day 10) closes days 7 and 8 at once: day 7 is
      // still above (ONGOING, final count), day 8's window 1 + 3 + 0 is not (ENDED).
      expectObservable(alerts).toBe('------------a----(bc)-|', {
        a: 'e-ana:STARTED',
        b: 'e-ana:ONGOING',
        c: 'e-ana:ENDED',
      });
    });
  });

  it('does not let arrival time stand in for event time: a slow trickle of the same days alerts the same', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const detector = new SpikeDetector({ day: NEON_DAY_RULE, hour: null, now: () => TEST_NOW });
      const mentions = cold('0 99ms 1 99ms 2 99ms 3 99ms 4 99ms 5 99ms 6 99ms x 9ms y 9ms z|', values).pipe(map(on(0)));
      expectObservable(mentions.pipe(detectSpikes(detector), map(label))).toBe('720ms a|', { a: 'e-ana:STARTED' });
    });
  });

  it('drops a mention later than the allowed lateness and counts a redelivered one once', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const detector = new SpikeDetector({ day: NEON_DAY_RULE, hour: null, now: () => TEST_NOW });
      // Day 5's copy arrives after day 7: day 5 closed at day 7 00:00, so it must not count, and the
      // repeated x, y are redeliveries: the burst is still 1 + 1 + 3, crossing on z as before.
      const mentions = cold('0123456-x-l-y-x-y-z|', values).pipe(map(on(0)));
      expectObservable(mentions.pipe(detectSpikes(detector), map(label))).toBe('------------------a|', {
        a: 'e-ana:STARTED',
      });
    });
    const detector = new SpikeDetector({ day: NEON_DAY_RULE, hour: null, now: () => TEST_NOW });
    for (const key of ['0', '1', '2', '3', '4', '5', '6', 'x']) detector.offer(values[key]!, 0);
    expect(detector.offer(values.l!, 0).outcome).toBe('late');
  });

  it('keeps partitions apart: one partition running ahead does not make another late', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const detector = new SpikeDetector({ day: NEON_DAY_RULE, hour: null, now: () => TEST_NOW });
      // Partition 1 is already on day 11; partition 0's week of history and burst are not late.
      const merged = cold('r-0123456-x-y-z|', values).pipe(
        map((mention) => ({ mention, partition: mention.entity_id === 'e-quiet' ? 1 : 0 })),
      );
      expectObservable(merged.pipe(detectSpikes(detector), map(label))).toBe('--------------a|', {
        a: 'e-ana:STARTED',
      });
    });
  });
});

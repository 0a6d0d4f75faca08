import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../devkit/interval-statistics.js';
import { SpikeDetector } from '../../processors/spikes/detect-spikes.js';
import { DAY_MS } from '../../processors/spikes/spike-rule.js';
import type { Mention } from '../../schemas/records.generated.js';
import { mentionOf, TEST_NOW } from './spike-fixtures.js';

/**
 * A partition is an ordered stream; how the streams of several partitions interleave is up to the
 * broker and the consumer (a stage catching up takes a batch of one partition, then of another).
 * The detector's verdicts must follow from each partition's own order alone, or a restart, a
 * rebalance or a second replica would alert differently on the same mentions.
 */

const PARTITIONS = 4;

/** 30 days of a small feed over 120 entities on 4 partitions, with a few stories that break. */
function feed(): { mention: Mention; partition: number }[] {
  const random = seededRandom(11);
  const out: { mention: Mention; partition: number }[] = [];
  for (let day = 0; day < 30; day++) {
    for (let article = 0; article < 25; article++) {
      const named = new Set<number>();
      while (named.size < 3) named.add(Math.floor(Math.pow(random(), 2) * 120));
      // Every fifth day one entity of the day makes the news: many articles at once.
      if (day % 5 === 4 && article < 8) named.add(day % 120);
      const id = `art-${day}-${article}`;
      for (const e of named) {
        const mention = mentionOf(`e-${e}`, day, {
          hour: 1 + Math.floor(random() * 22),
          article: id,
          chunk: `${id}:v1:0`,
        });
        out.push({ mention, partition: e % PARTITIONS });
      }
    }
  }
  return out.sort((a, b) => a.mention.t - b.mention.t);
}

/** The alerts of one pass over the mentions in the given order, as comparable text. */
function alertsOf(order: readonly { mention: Mention; partition: number }[]): string[] {
  const detector = new SpikeDetector({ now: () => TEST_NOW, alertsEchoed: true });
  const seen: string[] = [];
  const offer = (mention: Mention, partition: number): void => {
    for (const alert of detector.offer(mention, partition).alerts) {
      detector.noteSentAlert(alert);
      seen.push(
        `${alert.entity_id} ${alert.granularity} ${alert.state} ${alert.window_end} ${alert.observed} ${alert.significance.toFixed(6)}`,
      );
    }
  };
  for (const { mention, partition } of order) offer(mention, partition);
  // Past the last day on every partition, so every episode is judged to its end.
  const last = order.reduce((t, { mention }) => Math.max(t, mention.t), 0);
  for (let p = 0; p < PARTITIONS; p++) offer({ ...mentionOf(`e-clock-${p}`, 0), t: last + 3 * DAY_MS }, p);
  return seen.sort();
}

describe('spike detection across partitions', () => {
  const mentions = feed();
  const inTimeOrder = alertsOf(mentions);

  it('the feed has stories to alert on', () => {
    expect(inTimeOrder.filter((a) => a.includes(' STARTED ')).length).toBeGreaterThan(3);
  });

  it('decides the same whether partitions arrive interleaved in time order or one after another', () => {
    const partitionAfterPartition = [...mentions].sort((a, b) => a.partition - b.partition);
    expect(alertsOf(partitionAfterPartition)).toEqual(inTimeOrder);
    const lastPartitionFirst = [...mentions].sort((a, b) => b.partition - a.partition);
    expect(alertsOf(lastPartitionFirst)).toEqual(inTimeOrder);
  });

  it('decides the same when one partition runs a week ahead of the others', () => {
    const week = 7 * DAY_MS;
    // Partition 0 is a week ahead: its mentions are delivered as if stamped a week earlier.
    const ahead = [...mentions].sort(
      (a, b) => a.mention.t - (a.partition === 0 ? week : 0) - (b.mention.t - (b.partition === 0 ? week : 0)),
    );
    expect(alertsOf(ahead)).toEqual(inTimeOrder);
  });
});

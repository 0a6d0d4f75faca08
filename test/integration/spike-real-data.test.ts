import { logLevel } from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import { currentEventsMentions, CURRENT_EVENTS_DATASET } from '../../devkit/current-events-mentions.js';
import { missingDevDataMessage } from '../../devkit/dev-data.js';
import { SpikeDetector } from '../../processors/spikes/detect-spikes.js';
import { NEON_DAY_RULE, NEON_HOUR_RULE } from '../../processors/spikes/spike-rule.js';
import type { SpikeAlert } from '../../schemas/records.generated.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { topicRecord } from '../../streams/runtime/record-codec.js';
import { startSpikeStage } from '../../streams/stages/spike-stage.js';
import { freshTopic } from '../../devkit/fresh-names.js';
import { freshSpikeTopics } from '../../devkit/spike-topics.js';
import { assertCommittedToEnd, committedToEnd, waitUntil } from '../harness/invariants.js';
import { useLiveClients } from '../harness/live-clients.js';
import { readTopicRecords } from '../harness/topic-contents.js';

/**
 * NEON's rule: its verdicts depend on each entity's own counts only, so a replica's alerts equal a
 * reference detector's whatever the interleaving of partitions. The count model reads the feed's
 * volume over every partition, so its verdicts depend on that interleaving (see detect-spikes.ts).
 */
const NEON = { day: NEON_DAY_RULE, hour: NEON_HOUR_RULE };

const live = useLiveClients();
const data = currentEventsMentions();
const NOW = Date.UTC(2025, 3, 2);

const describeAlert = (a: SpikeAlert): string => `${a.id} ${a.state} ${a.window_end} ${a.observed}`;

describe.skipIf(data === undefined)('spike stage on real data through real Kafka', () => {
  it('finds in Current Events 2025 Q1 exactly what the detector finds on the same partitions, and the obvious bursts', async () => {
    const transport = createKafkaTransport(
      createKafkaClient({ clientId: 'spikes-real', brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING }),
    );
    const { topics, created: used } = await freshSpikeTopics(transport, 'real', 6);
    live.cleanup.topics.push(...used);

    // The mentions dedupe would write, in publication order, keyed by entity as the dedupe stage keys them.
    const producer = transport.producer();
    const mentions = data!.mentions;
    for (let i = 0; i < mentions.length; i += 500) {
      await producer.send(
        topics.mentions,
        mentions.slice(i, i + 500).map((m) => topicRecord(topics.mentions, 'Mention', m.entity_id, m)),
      );
    }
    await producer.disconnect();

    const group = freshTopic('real.group');
    const stage = await startSpikeStage(transport, {
      topics,
      groupId: group,
      interactionsTopic: null,
      detector: { ...NEON, now: () => NOW },
    });
    try {
      await waitUntil(() => committedToEnd(live.admin, group, topics.mentions), 120_000, 'spikes caught up');
    } finally {
      await stage.stop();
    }
    await assertCommittedToEnd(live.admin, group, topics.mentions);

    // The reference: the detector over each partition's mentions in the order Kafka holds them.
    const onKafka = await readTopicRecords(transport, topics.mentions, 'Mention');
    expect(onKafka).toHaveLength(mentions.length);
    const reference = new SpikeDetector({ ...NEON, now: () => NOW });
    const expected = onKafka.flatMap((entry) => reference.offer(entry.value, entry.partition).alerts);
    const alerts = (await readTopicRecords(transport, topics.spikes, 'SpikeAlert')).map((e) => e.value);
    const byEntity = (list: SpikeAlert[]) => {
      const grouped = new Map<string, string[]>();
      for (const a of list) grouped.set(a.entity_id, [...(grouped.get(a.entity_id) ?? []), describeAlert(a)]);
      return grouped;
    };
    expect(byEntity(alerts)).toEqual(byEntity(expected));
    await transport.close();

    // The obvious events of those days are among the episodes (entity, the day the spike started).
    const started = new Set(
      alerts
        .filter((a) => a.state === 'STARTED' && a.granularity === 'DAY')
        .map((a) => `${a.entity_id} ${new Date(a.episode_start!).toISOString().slice(0, 10)}`),
    );
    expect(started.size).toBeGreaterThan(80);
    for (const event of [
      'e-donald-trump 2025-01-20', // the inauguration and the first executive orders
      'e-democratic-republic-of-the-congo 2025-01-26', // M23's offensive on Goma
      'e-tiktok 2025-01-18', // the TikTok ban taking effect
      'e-bukavu 2025-02-15', // the fall of Bukavu
      'e-south-korea 2025-03-26', // the March wildfires
    ]) {
      expect(started, event).toContain(event);
    }
  });
});

if (data === undefined) console.log(missingDevDataMessage(CURRENT_EVENTS_DATASET));

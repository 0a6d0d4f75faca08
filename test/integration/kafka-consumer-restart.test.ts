import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Admin } from 'kafkajs';
import { freshTopic } from '../../devkit/fresh-names.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import type { RawRecord, TopicPartition, Transport } from '../../streams/runtime/transport.js';
import { testKafka } from '../harness/clients.js';
import { waitUntil } from '../harness/wait-until.js';

/**
 * A consumer that crashes the way a broker outage makes kafkajs give up is started again by the
 * transport. Between the crash and the restarted consumer's join kafkajs has no group: a commit
 * made then must land once the group is back (not fail the work already done), and a pause asked
 * for then must hold on the restarted consumer.
 */
describe('Kafka consumer restarted after a crash', () => {
  const kafka = testKafka('consumer-restart');
  let admin: Admin;
  let transport: Transport;
  const topics: string[] = [];
  const groups: string[] = [];

  beforeAll(async () => {
    admin = kafka.admin();
    await admin.connect();
    transport = createKafkaTransport(kafka, { sessionTimeoutMs: 6000, heartbeatIntervalMs: 250 });
  });

  afterAll(async () => {
    await transport.close();
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.deleteGroups(groups).catch(() => undefined);
    await admin.disconnect();
  });

  /** An error as kafkajs raises it when the broker connection is gone, marked not to be retried. */
  const outage = (): Error =>
    Object.assign(new Error('Connection error: broker gone'), { name: 'KafkaJSConnectionError', retriable: false });

  it('commits what was done during the restart, keeps a pause asked for meanwhile, and delivers again from the commit', async () => {
    const topic = freshTopic('consumer-restart');
    const groupId = freshTopic('consumer-restart-group');
    topics.push(topic);
    groups.push(groupId);
    await transport.ensureTopics([{ topic, partitions: 1 }]);
    const producer = transport.producer();
    const send = (from: number, count: number): Promise<void> =>
      producer.send(
        topic,
        Array.from({ length: count }, (_, i) => ({ key: null, value: Buffer.from(`r${from + i}`), partition: 0 })),
      );
    await send(0, 6);

    const deliveries: RawRecord[] = [];
    const assignments: TopicPartition[][] = [];
    const crashes: Error[] = [];
    let crashAt = 3; // the delivery of offset 3 fails as an outage would, once
    const consumer = transport.consumer({ groupId, topics: [topic] });
    await consumer.start({
      deliver: async (record) => {
        if (Number(record.offset) === crashAt) {
          crashAt = -1;
          throw outage();
        }
        deliveries.push(record);
        return true;
      },
      onAssignment: (assigned) => assignments.push(assigned),
      onCrash: (error) => crashes.push(error),
    });
    await waitUntil(() => crashAt === -1, 'the crash', 30_000);
    const joinsBefore = assignments.length;
    // The crashed consumer leaves the group; the transport starts it again a second later.
    for (let members = 1, deadline = Date.now() + 30_000; members > 0 && assignments.length === joinsBefore;) {
      if (Date.now() > deadline) throw new Error('the crashed consumer never left its group');
      const { groups: described } = await admin.describeGroups([groupId]);
      members = described[0]?.members.length ?? 0;
    }
    expect(deliveries.map((r) => Number(r.offset))).toEqual([0, 1, 2]);

    // Inside the gap: offsets 0..2 are done, and the runtime asks for a pause.
    const committed = consumer.commit([{ topic, partition: 0, offset: 3n }]);
    consumer.pause();
    await committed;
    // The commit goes through as soon as kafkajs has the group back, which can be a moment before it
    // reports the join: the restarted consumer's assignment is awaited, not assumed to come first.
    await waitUntil(() => assignments.length > joinsBefore, 'the restarted consumer joining', 30_000);
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
    expect(offsets?.partitions).toEqual([expect.objectContaining({ partition: 0, offset: '3' })]);

    // Paused on the restarted consumer: nothing is delivered until resumed.
    await sleep(1500);
    expect(deliveries.map((r) => Number(r.offset))).toEqual([0, 1, 2]);
    consumer.resume();
    await send(6, 2);
    await waitUntil(() => deliveries.length >= 8, 'delivery from the commit after the resume', 30_000);
    await sleep(500);
    expect(deliveries.map((r) => Number(r.offset))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(crashes).toEqual([]); // an outage is restarted, not reported as the stage's crash
    await consumer.stop();
    await consumer.disconnect();
  });
});

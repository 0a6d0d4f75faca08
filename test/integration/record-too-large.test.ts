import { describe, expect, it } from 'vitest';
import { DLQ_HEADERS } from '../../streams/runtime/dead-letter-writer.js';
import { KafkaSink, type TopicRecord } from '../../streams/kafka/kafka-sink.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { startStage } from '../../streams/runtime/run-stage.js';
import type { RawRecord } from '../../streams/runtime/transport.js';
import { freshTopic } from '../../devkit/fresh-names.js';
import { committedToEnd, readTopic, waitUntil } from '../harness/invariants.js';
import { useLiveClients } from '../harness/live-clients.js';

/**
 * On the real broker: an output record over the topic's max.message.bytes is dead-lettered with
 * `record_too_large` (the input it came from, as any dead letter), while the records batched with
 * it are written and the stage goes on to the end of its input — it used to retry it forever as
 * `kafka_unavailable`, holding its batch companions with it.
 */

const live = useLiveClients();
/** The output topic's limit: small, so a test record can exceed it cheaply. */
const LIMIT = 20_000;

describe('a record too large for the broker', () => {
  it('is dead-lettered record_too_large; its batch companions are written and the stage goes on', async () => {
    const input = freshTopic('too-large.in');
    const output = freshTopic('too-large.out');
    const dlq = freshTopic('too-large.dlq');
    const group = freshTopic('too-large.group');
    live.cleanup.topics.push(input, output, dlq);
    await live.admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: input, numPartitions: 1 },
        { topic: output, numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: String(LIMIT) }] },
        { topic: dlq, numPartitions: 1 },
      ],
    });
    // Each input names the size of the output it turns into; one of them is over the limit.
    const sizes = [100, 200, 50_000, 300, 400, 500];
    const producer = live.kafka.producer();
    await producer.connect();
    await producer.send({
      topic: input,
      messages: sizes.map((size, i) => ({ key: `k${i}`, value: String(size) })),
    });
    await producer.disconnect();

    const transport = createKafkaTransport(live.kafka);
    // Linger long enough that the inputs' outputs share produce calls.
    const sink = new KafkaSink(transport.producer(), { lingerMs: 200 });
    const stage = await startStage<RawRecord>(transport, {
      name: 'too-large',
      inputTopics: [input],
      groupId: group,
      fromBeginning: true,
      deadLetterTopic: dlq,
      decode: (record) => record,
      process: (record) => [
        {
          sink: 'out',
          item: {
            topic: output,
            key: Buffer.from(record.key ?? ''),
            value: Buffer.alloc(Number(record.value.value?.toString()), 0x61),
          } satisfies TopicRecord,
        },
      ],
      sinks: { out: sink },
      backoff: { baseMs: 50, capMs: 500 },
      log: () => undefined,
    });
    try {
      await waitUntil(() => committedToEnd(live.admin, group, input), 60_000, 'input committed to the end');
    } finally {
      await stage.stop();
      await transport.close();
    }
    await stage.done;

    const written = await readTopic(live.kafka, output, 5);
    expect(written.map((r) => r.value?.length).sort((a, b) => a! - b!)).toEqual([100, 200, 300, 400, 500]);
    const dead = await readTopic(live.kafka, dlq, 1);
    expect(dead).toHaveLength(1);
    expect(dead[0]!.headers[DLQ_HEADERS.errorCode]).toBe('record_too_large');
    expect(dead[0]!.value?.toString()).toBe('50000');
    expect(stage.stats()).toMatchObject({ received: 6, completed: 6, deadLettered: 1 });
  }, 120_000);
});

import type { Client } from '@elastic/elasticsearch';
import { Partitioners, type Admin, type Kafka } from 'kafkajs';
import { freshIndex, freshTopic } from './fresh-names.js';

/**
 * Fresh input and dead-letter topics, a strict index and a group for one pass-through test or
 * benchmark run. Free of vitest, so `bench/` can use it too.
 */
export interface Scenario {
  input: string;
  dlq: string;
  index: string;
  group: string;
}

export async function passthroughScenario(
  admin: Admin,
  es: Client,
  cleanup: { topics: string[]; indices: string[] },
  label: string,
): Promise<Scenario> {
  const s = {
    input: freshTopic(`${label}-in`),
    dlq: freshTopic(`${label}-dlq`),
    index: freshIndex(label),
    group: freshTopic(`${label}-group`),
  };
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic: s.input, numPartitions: 3, replicationFactor: 1 },
      { topic: s.dlq, numPartitions: 1, replicationFactor: 1 },
    ],
  });
  await es.indices.create({
    index: s.index,
    settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '1s' },
    mappings: {
      dynamic: 'strict',
      properties: {
        doc_id: { type: 'keyword' },
        article_id: { type: 'keyword' },
        n: { type: 'integer' },
        title: { type: 'text' },
        published_at: { type: 'date', format: 'epoch_millis' },
      },
    },
  });
  cleanup.topics.push(s.input, s.dlq);
  cleanup.indices.push(s.index);
  return s;
}

export async function produce(
  kafka: Kafka,
  topic: string,
  messages: { key: string; value: Buffer; headers?: Record<string, string> }[],
  perRequest = 1000,
): Promise<void> {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  for (let start = 0; start < messages.length; start += perRequest) {
    await producer.send({ topic, acks: -1, messages: messages.slice(start, start + perRequest) });
  }
  await producer.disconnect();
}

import { randomUUID } from 'node:crypto';
import { logLevel } from 'kafkajs';
import { createElasticsearchClient } from '../streams/elasticsearch/elasticsearch-client.js';
import { createKafkaClient } from '../streams/kafka/kafka-client.js';

/**
 * A round trip through both services — one record through a fresh topic, one document through a
 * fresh index — so `neon start` proves more than "the port is open". Cleans up after itself.
 */
export async function runSelfCheck(kafkaBrokers: string[], elasticsearchUrl: string): Promise<string[]> {
  const suffix = randomUUID().slice(0, 8);
  const topic = `neon.selfcheck.${suffix}`;
  const kafka = createKafkaClient({ clientId: 'neon-selfcheck', brokers: kafkaBrokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const consumer = kafka.consumer({ groupId: `neon-selfcheck-${suffix}` });
  const lines: string[] = [];
  const kafkaStarted = Date.now();
  try {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await producer.connect();
    await producer.send({ topic, messages: [{ key: 'k', value: suffix }] });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const received = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no record came back within 30 s')), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          clearTimeout(timer);
          resolve(message.value?.toString() ?? '');
        },
      });
    });
    if (received !== suffix) throw new Error(`Kafka returned "${received}", expected "${suffix}"`);
    lines.push(`kafka: produced and consumed a record in ${Date.now() - kafkaStarted} ms`);
  } finally {
    await consumer.disconnect().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }

  const es = createElasticsearchClient({ url: elasticsearchUrl });
  const index = `neon-selfcheck-${suffix}`;
  const esStarted = Date.now();
  try {
    await es.index({
      index,
      id: 'probe',
      document: { text: 'self check', at: new Date().toISOString() },
      refresh: true,
    });
    const result = await es.search({ index, query: { match: { text: 'self' } } });
    if (result.hits.hits[0]?._id !== 'probe')
      throw new Error('Elasticsearch did not find the document it just indexed');
    lines.push(`elasticsearch: indexed and found a document in ${Date.now() - esStarted} ms`);
  } finally {
    await es.indices.delete({ index }).catch(() => undefined);
    await es.close();
  }
  return lines;
}

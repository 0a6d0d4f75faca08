import type { Client } from '@elastic/elasticsearch';
import { logLevel, Partitioners, type Kafka } from 'kafkajs';
import { inject } from 'vitest';
import { createElasticsearchClient } from '../../streams/elasticsearch/elasticsearch-client.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';

/**
 * Clients for the run's broker and node. Kafka is silent: kafkajs logs retried coordinator-loading
 * responses as errors, and real failures surface as thrown errors anyway.
 */
export function testKafka(clientId = 'neon-test'): Kafka {
  return createKafkaClient({ clientId, brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING });
}

/** The Java client's murmur2 partitioner, so keys land where any Kafka client would put them. */
export const javaCompatiblePartitioner = Partitioners.DefaultPartitioner;

/** An external node's credentials arrive as a ready header; local and container nodes need none. */
export function testElasticsearch(): Client {
  const client = createElasticsearchClient({ url: inject('elasticsearchUrl') });
  const headers = inject('elasticsearchHeaders');
  return Object.keys(headers).length === 0 ? client : client.child({ headers });
}

import type { Client } from '@elastic/elasticsearch';
import type { Admin, Kafka } from 'kafkajs';
import { afterAll, beforeAll, inject } from 'vitest';
import type { PassthroughSettings } from '../../devkit/passthrough-stage.js';
import { testElasticsearch, testKafka } from './clients.js';
import type { Scenario } from '../../devkit/passthrough-scenario.js';

export interface LiveClients {
  kafka: Kafka;
  admin: Admin;
  es: Client;
  /** Topics and indices created by the file's tests, removed after them. */
  cleanup: { topics: string[]; indices: string[] };
}

/**
 * Connects Kafka and Elasticsearch clients for one test file (before its tests) and removes what
 * the tests created (after them). Read the fields inside tests, not at import time.
 */
export function useLiveClients(): LiveClients {
  const live = { cleanup: { topics: [], indices: [] } } as unknown as LiveClients;
  beforeAll(async () => {
    live.kafka = testKafka();
    live.admin = live.kafka.admin();
    await live.admin.connect();
    live.es = testElasticsearch();
  });
  afterAll(async () => {
    await live.admin.deleteTopics({ topics: live.cleanup.topics }).catch(() => undefined);
    await live.admin.disconnect();
    for (const index of live.cleanup.indices) await live.es.indices.delete({ index }, { ignore: [404] });
    await live.es.close();
  });
  return live;
}

/** Pass-through stage settings for a scenario on the run's infrastructure. */
export function passthroughSettings(s: Scenario, extra: Partial<PassthroughSettings> = {}): PassthroughSettings {
  return {
    brokers: inject('kafkaBrokers'),
    elasticsearchUrl: inject('elasticsearchUrl'),
    inputTopic: s.input,
    index: s.index,
    groupId: s.group,
    deadLetterTopic: s.dlq,
    ...extra,
  };
}

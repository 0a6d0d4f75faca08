import { ConfigResourceTypes } from 'kafkajs';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { testKafka } from '../harness/clients.js';
import { freshTopic } from '../../devkit/fresh-names.js';
import { describeTransportConformance } from '../harness/transport-conformance.js';

describeTransportConformance('Kafka', async () => {
  const kafka = testKafka('transport-conformance');
  const admin = kafka.admin();
  await admin.connect();
  const topics: string[] = [];
  const groups: string[] = [];
  // Short heartbeats so that joins and leaves are noticed within a second; the rest as in production.
  const transport = createKafkaTransport(kafka, { sessionTimeoutMs: 6000, heartbeatIntervalMs: 250 });
  return {
    transport,
    freshTopic: (label) => {
      const name = freshTopic(`transport-${label}`);
      topics.push(name);
      return name;
    },
    freshGroup: (label) => {
      const name = freshTopic(`transport-group-${label}`);
      groups.push(name);
      return name;
    },
    topicConfigs: async (topic) => {
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
      });
      return Object.fromEntries((resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]));
    },
    sharedGroups: true,
    patienceMs: 30_000,
    quietMs: 800,
    cleanup: async () => {
      await transport.close();
      await admin.deleteTopics({ topics }).catch(() => undefined);
      await admin.deleteGroups(groups).catch(() => undefined);
      await admin.disconnect();
    },
  };
});

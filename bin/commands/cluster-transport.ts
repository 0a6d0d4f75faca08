import { logLevel } from 'kafkajs';
import { kafkaBrokersSchema } from '../../schemas/connection-config.js';
import { ConfigError, loadLocalInfraConfig } from '../../schemas/local-infra-config.js';
import { localEndpoints } from '../../infra/local-infrastructure.js';
import { createKafkaClient } from '../../streams/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka-transport.js';
import { localTopicSpecs } from '../../streams/topics.js';
import type { Transport } from '../../streams/transport.js';

/**
 * The Kafka a command talks to: `KAFKA_BROKERS` when set, otherwise the local broker of
 * `neon infra up`. Topics are created if missing (locally; on a cluster the operator owns them and
 * this is a no-op).
 */
export async function clusterTransport(
  clientId: string,
  env = process.env,
): Promise<{ transport: Transport; brokers: string[] }> {
  let brokers: string[];
  if (env.KAFKA_BROKERS !== undefined) {
    const parsed = kafkaBrokersSchema.safeParse(env.KAFKA_BROKERS);
    if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `KAFKA_BROKERS: ${i.message}`));
    brokers = parsed.data;
  } else {
    brokers = localEndpoints(loadLocalInfraConfig(env)).kafkaBrokers;
  }
  const transport = createKafkaTransport(createKafkaClient({ clientId, brokers, logLevel: logLevel.NOTHING }));
  await transport.ensureTopics(localTopicSpecs());
  return { transport, brokers };
}

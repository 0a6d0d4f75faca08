import { kafkaBrokersSchema, kafkaSecurityFromEnv } from '../../schemas/connection-config.js';
import { ConfigError, loadLocalInfraConfig } from '../../schemas/local-infra-config.js';
import { localEndpoints } from '../../infra/local-infrastructure.js';
import { createKafkaClient, logLevel } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { localTopicSpecs } from '../../streams/pipeline/topics.js';
import type { Transport } from '../../streams/runtime/transport.js';

/**
 * The Kafka a command talks to: `KAFKA_BROKERS` (with `KAFKA_TLS`, `KAFKA_CA_FILE` and SASL
 * credentials when set) or otherwise the local broker of `neon infra up`. Missing topics are created
 * — all of them for a command-line tool, or only `topics` for a long-running process, whose
 * credentials on a cluster may describe nothing else (there the operator owns the topics and this
 * is a no-op).
 */
export async function clusterTransport(
  clientId: string,
  env = process.env,
  topics: 'all' | readonly string[] = 'all',
): Promise<{ transport: Transport; brokers: string[] }> {
  let brokers: string[];
  if (env.KAFKA_BROKERS !== undefined) {
    const parsed = kafkaBrokersSchema.safeParse(env.KAFKA_BROKERS);
    if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `KAFKA_BROKERS: ${i.message}`));
    brokers = parsed.data;
  } else {
    brokers = localEndpoints(loadLocalInfraConfig(env)).kafkaBrokers;
  }
  const security = kafkaSecurityFromEnv(env);
  const transport = createKafkaTransport(
    createKafkaClient({ clientId, brokers, logLevel: logLevel.NOTHING, security }),
  );
  const specs = localTopicSpecs().filter((spec) => topics === 'all' || topics.includes(spec.topic));
  if (specs.length > 0) await transport.ensureTopics(specs);
  return { transport, brokers };
}

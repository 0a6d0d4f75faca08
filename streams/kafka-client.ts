import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  /** kafkajs logs retried, harmless responses (e.g. "coordinator is loading") at ERROR; default WARN. */
  logLevel?: logLevel;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
}

/**
 * The one place a kafkajs client is built, so every stage gets the same timeouts and the same
 * jittered-backoff retry policy (kafkajs's own, bounded) instead of each stage inventing one.
 */
export function createKafkaClient(options: KafkaClientOptions): Kafka {
  const config: KafkaConfig = {
    clientId: options.clientId,
    brokers: options.brokers,
    logLevel: options.logLevel ?? logLevel.WARN,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    retry: { initialRetryTime: 300, maxRetryTime: 30_000, retries: 8, factor: 0.2, multiplier: 2 },
  };
  return new Kafka(config);
}

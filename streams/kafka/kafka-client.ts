import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';
import type { KafkaSecurity } from '../../schemas/connection-config.js';

/** kafkajs's log levels, for callers above streams/ that set `logLevel` without importing kafkajs. */
export { logLevel };

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  /** kafkajs logs retried, harmless responses (e.g. "coordinator is loading") at ERROR; default WARN. */
  logLevel?: logLevel;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** TLS and SASL for a secured cluster (Strimzi's TLS listener with SCRAM users); none: plaintext. */
  security?: KafkaSecurity;
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
  return new Kafka({ ...config, ...kafkaSecurityConfig(options.security) });
}

/** kafkajs's `ssl` and `sasl` for the product's security settings (also used by the launchers' probe). */
export function kafkaSecurityConfig(security: KafkaSecurity | undefined): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const config: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  const { tls, sasl } = security ?? {};
  if (tls) config.ssl = tls.caCertificate === undefined ? true : { ca: [tls.caCertificate] };
  if (sasl) {
    const credentials = { username: sasl.username, password: sasl.password.reveal() };
    config.sasl =
      sasl.mechanism === 'plain'
        ? { mechanism: 'plain', ...credentials }
        : sasl.mechanism === 'scram-sha-256'
          ? { mechanism: 'scram-sha-256', ...credentials }
          : { mechanism: 'scram-sha-512', ...credentials };
  }
  return config;
}

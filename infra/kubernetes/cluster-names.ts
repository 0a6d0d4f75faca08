/**
 * Names the Kubernetes manifests share: the namespace, the Strimzi and ECK clusters (whose operators
 * derive Services and Secrets from them), the ConfigMaps and Secrets the processes read, and where
 * the certificate authorities are mounted. One place, so a rename cannot leave a dangling reference.
 */
export const NAMESPACE = 'neon';
export const PART_OF = 'neon-stream';
export const IMAGE = 'neon-stream:0.1.0';

export const KAFKA_CLUSTER = 'neon';
/** Strimzi's bootstrap Service for the TLS + SCRAM listener of k8s/base/kafka.yaml. */
export const KAFKA_BOOTSTRAP = `${KAFKA_CLUSTER}-kafka-bootstrap.${NAMESPACE}.svc:9093`;
/** Strimzi keeps the cluster CA certificate here (key `ca.crt`). */
export const KAFKA_CA_SECRET = `${KAFKA_CLUSTER}-cluster-ca-cert`;
/** Partitions of every topic: the most replicas a consumer group can use. */
export const TOPIC_PARTITIONS = 6;
export const TOPIC_REPLICAS = 3;

export const ELASTICSEARCH_CLUSTER = 'neon';
/** ECK's HTTP Service, and the Secret with the CA of its self-signed HTTP certificate (key `ca.crt`). */
export const ELASTICSEARCH_URL = `https://${ELASTICSEARCH_CLUSTER}-es-http.${NAMESPACE}.svc:9200`;
export const ELASTICSEARCH_CA_SECRET = `${ELASTICSEARCH_CLUSTER}-es-http-certs-public`;

export const CONFIG_MAPS = {
  /** Product settings every process reads. */
  product: 'neon-config',
  kafka: 'neon-kafka',
  elasticsearch: 'neon-elasticsearch',
  feeds: 'neon-feeds',
} as const;

/** Secrets the processes read; those not made by an operator or the API-key Job are created by hand. */
export const SECRETS = {
  /** Written by the es-api-keys Job (key `api_key`). */
  esIndexer: 'neon-es-indexer',
  esQuery: 'neon-es-query',
  /** Keys `keys` (comma-separated API keys). */
  apiKeys: 'neon-api-keys',
  /** Key `tokens`. */
  intakeTokens: 'neon-intake-tokens',
  /** Key `api_key`. Optional: without it the offline extractor runs and answers are extractive. */
  llm: 'neon-llm',
  /** Key `api_key`. Optional: only for NEON_EMBEDDER=openai. */
  embeddings: 'neon-embeddings',
  /** Keys `urls` and `secret`. */
  webhooks: 'neon-webhooks',
  /** Keys `username`, `password`, `sasl`, `tls`: KEDA's Kafka login (its KafkaUser takes the password from here). */
  kedaKafka: 'neon-keda-kafka',
} as const;

export const MOUNTS = {
  kafkaCa: '/etc/neon/kafka-ca',
  elasticsearchCa: '/etc/neon/es-ca',
  feeds: '/etc/neon/feeds',
  /** The embedding model baked into the image (`neon infra prepare --model-only`). */
  cache: '/opt/neon/cache',
  data: '/var/lib/neon',
  llmCache: '/var/cache/neon/llm',
  tmp: '/tmp',
} as const;

export const PORTS = { metrics: 9464, api: 8080, intake: 8081 } as const;

/** Kafka principal of a deployed process (its KafkaUser, and the Secret Strimzi makes for it). */
export function kafkaUserName(process: string): string {
  return `neon-${process}`;
}

export const KEDA_KAFKA_USER = 'neon-keda';

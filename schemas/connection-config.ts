import { z } from 'zod';
import { ConfigError } from './local-infra-config.js';

/**
 * Where an existing Kafka cluster and Elasticsearch node are. Both come from the environment
 * (`KAFKA_BROKERS`, `ES_URL`, and optionally `ES_API_KEY` or `ES_USERNAME`/`ES_PASSWORD`); secrets
 * are wrapped so they never print.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '<redacted>';
  }
  toJSON(): string {
    return '<redacted>';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '<redacted>';
  }
}

const brokerAddress = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9.\-_]+:[0-9]{1,5}$/, 'each broker must be host:port');

export const kafkaBrokersSchema = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((b) => b.trim())
      .filter((b) => b !== ''),
  )
  .pipe(z.array(brokerAddress).min(1, 'at least one broker is required'));

export const elasticsearchUrlSchema = z
  .string()
  .trim()
  .refine((value) => URL.canParse(value) && /^https?:\/\//.test(value), 'must be an http(s) URL')
  .transform((value) => value.replace(/\/+$/, ''));

export interface ElasticsearchConnection {
  url: string;
  apiKey?: Secret;
  username?: string;
  password?: Secret;
}

export interface ExternalInfrastructure {
  kafkaBrokers: string[];
  elasticsearch: ElasticsearchConnection;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads `KAFKA_BROKERS` and `ES_URL`. Returns undefined when neither is set; throws a ConfigError
 * listing every problem when they are set but wrong, or when only one of the two is set.
 */
export function externalInfrastructureFromEnv(env: Env): ExternalInfrastructure | undefined {
  const brokers = env.KAFKA_BROKERS;
  const url = env.ES_URL;
  if (brokers === undefined && url === undefined) return undefined;
  const problems: string[] = [];
  if (brokers === undefined) problems.push('KAFKA_BROKERS: required when ES_URL is set');
  if (url === undefined) problems.push('ES_URL: required when KAFKA_BROKERS is set');
  const parsedBrokers = brokers === undefined ? undefined : kafkaBrokersSchema.safeParse(brokers);
  const parsedUrl = url === undefined ? undefined : elasticsearchUrlSchema.safeParse(url);
  if (parsedBrokers && !parsedBrokers.success)
    problems.push(...parsedBrokers.error.issues.map((i) => `KAFKA_BROKERS: ${i.message}`));
  if (parsedUrl && !parsedUrl.success) problems.push(...parsedUrl.error.issues.map((i) => `ES_URL: ${i.message}`));
  if ((env.ES_USERNAME === undefined) !== (env.ES_PASSWORD === undefined))
    problems.push('ES_USERNAME and ES_PASSWORD must be set together');
  if (problems.length > 0 || !parsedBrokers?.success || !parsedUrl?.success) throw new ConfigError(problems);
  const elasticsearch: ElasticsearchConnection = { url: parsedUrl.data };
  if (env.ES_API_KEY) elasticsearch.apiKey = new Secret(env.ES_API_KEY);
  if (env.ES_USERNAME !== undefined && env.ES_PASSWORD !== undefined) {
    elasticsearch.username = env.ES_USERNAME;
    elasticsearch.password = new Secret(env.ES_PASSWORD);
  }
  return { kafkaBrokers: parsedBrokers.data, elasticsearch };
}

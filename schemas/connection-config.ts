import { readFileSync } from 'node:fs';
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

const REDACTED = '<redacted>';

/**
 * Query (and fragment) parameters whose values are credentials, by how their names end once lower-cased
 * and stripped of separators: `key`, `api_key`, `X-Amz-Credential`, `access_token`, `client_secret`,
 * `sig`… Catching a harmless parameter too only hides a value from a log line.
 */
const SECRET_PARAMETER_ENDINGS = /(key|token|secret|password|passwd|pwd|sig|signature|credentials?|auth)$/;

function isSecretParameter(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    // A malformed escape: judge the name as written.
  }
  return SECRET_PARAMETER_ENDINGS.test(decoded.toLowerCase().replace(/[^a-z0-9]/g, ''));
}

/**
 * A URL as it may be printed, logged or served: its userinfo (`user:password@`) and the values of
 * secret-looking query parameters become `<redacted>`. Works on the text, so what does not parse as a
 * URL (a `user:pass@host:port` broker, a URL with a space) is redacted as far as it can be and the
 * rest is left character for character; redacting twice changes nothing more.
 */
export function redactUrl(text: string): string {
  return text
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/?#\s@]*(?:@[^/?#\s@]*)*@/i, (_whole, scheme: string | undefined) =>
      scheme === undefined ? `${REDACTED}@` : `${scheme}${REDACTED}@`,
    )
    .replace(/([?&;#])([^=&;#?]+)=([^&;#]*)/g, (whole, separator: string, name: string) =>
      isSecretParameter(name) ? `${separator}${name}=${REDACTED}` : whole,
    );
}

/** Every `scheme://…` URL inside a message (an error from a client, say) passed through redactUrl. */
export function redactUrlsIn(message: string): string {
  return message.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, (url) => redactUrl(url));
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
  /** PEM of the CA that signed the server's certificate (`ES_CA_FILE`), for a private CA such as ECK's. */
  caCertificate?: string;
}

export type KafkaSaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';

/** How to reach a secured Kafka: TLS (with a private CA) and SASL credentials. None: plaintext. */
export interface KafkaSecurity {
  tls?: { caCertificate?: string };
  sasl?: { mechanism: KafkaSaslMechanism; username: string; password: Secret };
}

const SASL_MECHANISMS: readonly KafkaSaslMechanism[] = ['plain', 'scram-sha-256', 'scram-sha-512'];

function readPem(path: string, variable: string, problems: string[]): string | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    if (!text.includes('-----BEGIN CERTIFICATE-----')) problems.push(`${variable}: ${path} holds no PEM certificate`);
    return text;
  } catch (error) {
    problems.push(`${variable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    return undefined;
  }
}

/**
 * `KAFKA_TLS` (true/false; implied by `KAFKA_CA_FILE`), `KAFKA_CA_FILE`, and `KAFKA_SASL_MECHANISM`
 * with `KAFKA_SASL_USERNAME` / `KAFKA_SASL_PASSWORD` (all three or none). Throws a ConfigError
 * listing every problem.
 */
export function kafkaSecurityFromEnv(env: Env): KafkaSecurity {
  const problems: string[] = [];
  const security: KafkaSecurity = {};
  const tlsFlag = env.KAFKA_TLS?.trim().toLowerCase();
  if (tlsFlag !== undefined && tlsFlag !== '' && tlsFlag !== 'true' && tlsFlag !== 'false') {
    problems.push(`KAFKA_TLS: true or false (got "${env.KAFKA_TLS}")`);
  }
  const caFile = env.KAFKA_CA_FILE?.trim();
  if (tlsFlag === 'false' && caFile) problems.push('KAFKA_CA_FILE is set but KAFKA_TLS is false');
  if (tlsFlag === 'true' || caFile) {
    const caCertificate = caFile ? readPem(caFile, 'KAFKA_CA_FILE', problems) : undefined;
    security.tls = caCertificate === undefined ? {} : { caCertificate };
  }
  const mechanism = env.KAFKA_SASL_MECHANISM?.trim().toLowerCase();
  const username = env.KAFKA_SASL_USERNAME;
  const password = env.KAFKA_SASL_PASSWORD;
  const given = [mechanism, username, password].filter((v) => v !== undefined && v !== '').length;
  if (given > 0 && given < 3) {
    problems.push('KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD must be set together');
  } else if (given === 3) {
    if (!(SASL_MECHANISMS as readonly string[]).includes(mechanism!)) {
      problems.push(`KAFKA_SASL_MECHANISM: one of ${SASL_MECHANISMS.join(', ')} (got "${env.KAFKA_SASL_MECHANISM}")`);
    } else {
      security.sasl = {
        mechanism: mechanism as KafkaSaslMechanism,
        username: username!,
        password: new Secret(password!),
      };
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return security;
}

/** `ES_CA_FILE`: the PEM of a private CA for `https://` Elasticsearch (ECK's operator-made one). */
export function elasticsearchCaFromEnv(env: Env): string | undefined {
  const path = env.ES_CA_FILE?.trim();
  if (!path) return undefined;
  const problems: string[] = [];
  const pem = readPem(path, 'ES_CA_FILE', problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return pem;
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
  const caCertificate = elasticsearchCaFromEnv(env);
  if (caCertificate !== undefined) elasticsearch.caCertificate = caCertificate;
  if (env.ES_API_KEY) elasticsearch.apiKey = new Secret(env.ES_API_KEY);
  if (env.ES_USERNAME !== undefined && env.ES_PASSWORD !== undefined) {
    elasticsearch.username = env.ES_USERNAME;
    elasticsearch.password = new Secret(env.ES_PASSWORD);
  }
  return { kafkaBrokers: parsedBrokers.data, elasticsearch };
}

import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../schemas/local-infra-config.js';
import { externalInfrastructureFromEnv, Secret } from '../../schemas/connection-config.js';

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    externalInfrastructureFromEnv(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('externalInfrastructureFromEnv', () => {
  it('returns undefined when neither KAFKA_BROKERS nor ES_URL is set', () => {
    expect(externalInfrastructureFromEnv({})).toBeUndefined();
    expect(externalInfrastructureFromEnv({ ES_USERNAME: 'elastic', HOME: '/root' })).toBeUndefined();
  });

  it('parses a comma list of brokers with spaces and strips trailing slashes from ES_URL', () => {
    expect(
      externalInfrastructureFromEnv({
        KAFKA_BROKERS: ' kafka-1:9092 , kafka-2.internal:19092,,',
        ES_URL: 'https://es.example.com:9200//',
      }),
    ).toEqual({
      kafkaBrokers: ['kafka-1:9092', 'kafka-2.internal:19092'],
      elasticsearch: { url: 'https://es.example.com:9200' },
    });
  });

  it('keeps a path on the URL, minus its trailing slash', () => {
    const infra = externalInfrastructureFromEnv({ KAFKA_BROKERS: 'localhost:9092', ES_URL: 'http://proxy/es/' });
    expect(infra?.elasticsearch.url).toBe('http://proxy/es');
  });

  it('fails when only KAFKA_BROKERS is set', () => {
    expect(problemsOf({ KAFKA_BROKERS: 'localhost:9092' })).toEqual(['ES_URL: required when KAFKA_BROKERS is set']);
  });

  it('fails when only ES_URL is set', () => {
    expect(problemsOf({ ES_URL: 'http://localhost:9200' })).toEqual(['KAFKA_BROKERS: required when ES_URL is set']);
  });

  it('fails when a broker has no port', () => {
    expect(problemsOf({ KAFKA_BROKERS: 'localhost:9092,kafka-2', ES_URL: 'http://localhost:9200' })).toEqual([
      'KAFKA_BROKERS: each broker must be host:port',
    ]);
  });

  it('fails when KAFKA_BROKERS holds no broker at all', () => {
    expect(problemsOf({ KAFKA_BROKERS: ' , ', ES_URL: 'http://localhost:9200' })).toEqual([
      'KAFKA_BROKERS: at least one broker is required',
    ]);
  });

  it.each(['ftp://localhost:9200', 'localhost:9200'])('fails when ES_URL is %s (not http(s))', (url) => {
    expect(problemsOf({ KAFKA_BROKERS: 'localhost:9092', ES_URL: url })).toEqual(['ES_URL: must be an http(s) URL']);
  });

  it('lists broker and URL problems together', () => {
    const problems = problemsOf({ KAFKA_BROKERS: 'nohost', ES_URL: 'ftp://x' });
    expect(problems).toContain('KAFKA_BROKERS: each broker must be host:port');
    expect(problems).toContain('ES_URL: must be an http(s) URL');
  });

  it('fails when ES_USERNAME is set without ES_PASSWORD', () => {
    expect(
      problemsOf({ KAFKA_BROKERS: 'localhost:9092', ES_URL: 'http://localhost:9200', ES_USERNAME: 'elastic' }),
    ).toEqual(['ES_USERNAME and ES_PASSWORD must be set together']);
  });

  it('fails when ES_PASSWORD is set without ES_USERNAME', () => {
    expect(problemsOf({ KAFKA_BROKERS: 'localhost:9092', ES_URL: 'http://localhost:9200', ES_PASSWORD: 'pw' })).toEqual(
      ['ES_USERNAME and ES_PASSWORD must be set together'],
    );
  });

  it('wraps the password and API key in Secrets', () => {
    const infra = externalInfrastructureFromEnv({
      KAFKA_BROKERS: 'localhost:9092',
      ES_URL: 'http://localhost:9200',
      ES_USERNAME: 'elastic',
      ES_PASSWORD: 'hunter2',
      ES_API_KEY: 'api-key-value',
    });
    expect(infra?.elasticsearch.username).toBe('elastic');
    expect(infra?.elasticsearch.password).toBeInstanceOf(Secret);
    expect(infra?.elasticsearch.password?.reveal()).toBe('hunter2');
    expect(infra?.elasticsearch.apiKey?.reveal()).toBe('api-key-value');
    const printed = JSON.stringify(infra);
    expect(printed).not.toContain('hunter2');
    expect(printed).not.toContain('api-key-value');
    expect(inspect(infra, { depth: 5 })).not.toContain('hunter2');
  });

  it('leaves credentials out when none are given', () => {
    const infra = externalInfrastructureFromEnv({ KAFKA_BROKERS: 'localhost:9092', ES_URL: 'http://localhost:9200' });
    expect(infra?.elasticsearch).toEqual({ url: 'http://localhost:9200' });
    expect(infra?.elasticsearch).not.toHaveProperty('apiKey');
    expect(infra?.elasticsearch).not.toHaveProperty('password');
  });
});

describe('Secret', () => {
  const secret = new Secret('s3cr3t-value');

  it('prints <redacted> through String(), JSON.stringify and util.inspect', () => {
    expect(String(secret)).toBe('<redacted>');
    expect(JSON.stringify(secret)).toBe('"<redacted>"');
    expect(JSON.stringify({ password: secret })).toBe('{"password":"<redacted>"}');
    expect(inspect(secret)).toBe('<redacted>');
    expect(inspect({ nested: { secret } }, { depth: 5 })).not.toContain('s3cr3t');
  });

  it('reveal() returns the value', () => {
    expect(secret.reveal()).toBe('s3cr3t-value');
  });
});

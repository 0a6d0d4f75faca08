import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../schemas/local-infra-config.js';
import {
  elasticsearchCaFromEnv,
  externalInfrastructureFromEnv,
  kafkaSecurityFromEnv,
  Secret,
} from '../../schemas/connection-config.js';

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

describe('kafkaSecurityFromEnv', () => {
  const dir = mkdtempSync(join(tmpdir(), 'neon-ca-'));
  const ca = join(dir, 'ca.crt');
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');

  it('is plaintext when nothing is set', () => {
    expect(kafkaSecurityFromEnv({})).toEqual({});
  });

  it('reads TLS with a private CA and SCRAM credentials, hiding the password', () => {
    const security = kafkaSecurityFromEnv({
      KAFKA_CA_FILE: ca,
      KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
      KAFKA_SASL_USERNAME: 'neon-markup',
      KAFKA_SASL_PASSWORD: 'pw',
    });
    expect(security.tls?.caCertificate).toContain('BEGIN CERTIFICATE');
    expect(security.sasl).toMatchObject({ mechanism: 'scram-sha-512', username: 'neon-markup' });
    expect(security.sasl!.password.reveal()).toBe('pw');
    expect(JSON.stringify(security)).not.toContain('"pw"');
  });

  it('takes KAFKA_TLS=true without a CA (the system trust store)', () => {
    expect(kafkaSecurityFromEnv({ KAFKA_TLS: 'true' })).toEqual({ tls: {} });
  });

  it('lists every problem at once', () => {
    let problems: string[] = [];
    try {
      kafkaSecurityFromEnv({
        KAFKA_TLS: 'yes',
        KAFKA_CA_FILE: join(dir, 'missing.crt'),
        KAFKA_SASL_MECHANISM: 'gssapi',
        KAFKA_SASL_USERNAME: 'u',
        KAFKA_SASL_PASSWORD: 'p',
      });
    } catch (error) {
      problems = (error as ConfigError).problems;
    }
    expect(problems).toEqual([
      'KAFKA_TLS: true or false (got "yes")',
      expect.stringMatching(/^KAFKA_CA_FILE: cannot read .*missing\.crt \(ENOENT\)$/),
      'KAFKA_SASL_MECHANISM: one of plain, scram-sha-256, scram-sha-512 (got "gssapi")',
    ]);
  });

  it('refuses half the SASL settings', () => {
    expect(() => kafkaSecurityFromEnv({ KAFKA_SASL_USERNAME: 'u' })).toThrow(ConfigError);
  });
});

describe('ES_CA_FILE', () => {
  it('is read into the connection, and a file without a certificate is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'neon-es-ca-'));
    const good = join(dir, 'ca.crt');
    const bad = join(dir, 'not.crt');
    writeFileSync(good, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    writeFileSync(bad, 'hello');
    const env = { KAFKA_BROKERS: 'k:9092', ES_URL: 'https://es:9200' };
    expect(externalInfrastructureFromEnv({ ...env, ES_CA_FILE: good })?.elasticsearch.caCertificate).toContain(
      'BEGIN CERTIFICATE',
    );
    expect(() => elasticsearchCaFromEnv({ ES_CA_FILE: bad })).toThrow(/holds no PEM certificate/);
  });
});

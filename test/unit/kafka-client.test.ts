import { describe, expect, it } from 'vitest';
import { Secret } from '../../schemas/connection-config.js';
import { kafkaSecurityConfig } from '../../streams/kafka/kafka-client.js';

describe('kafkaSecurityConfig', () => {
  it('is plaintext without settings', () => {
    expect(kafkaSecurityConfig(undefined)).toEqual({});
    expect(kafkaSecurityConfig({})).toEqual({});
  });

  it('trusts the given CA, or the system CAs without one', () => {
    expect(kafkaSecurityConfig({ tls: { caCertificate: 'PEM' } })).toEqual({ ssl: { ca: ['PEM'] } });
    expect(kafkaSecurityConfig({ tls: {} })).toEqual({ ssl: true });
  });

  it('logs in with the mechanism and credentials given', () => {
    for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
      expect(
        kafkaSecurityConfig({ sasl: { mechanism, username: 'neon-markup', password: new Secret('s3cret') } }),
      ).toEqual({ sasl: { mechanism, username: 'neon-markup', password: 's3cret' } });
    }
  });
});

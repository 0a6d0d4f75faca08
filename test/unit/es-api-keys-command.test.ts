import { errors } from '@elastic/elasticsearch';
import { describe, expect, it } from 'vitest';
import { explainRefusal } from '../../bin/commands/es-api-keys-command.js';
import { UsageError } from '../../infra/cli-errors.js';
import { ConfigError } from '../../schemas/local-infra-config.js';

const URL = 'https://es.example:9200';

/** A ResponseError as the client raises it for an answer with this status and body. */
function refusal(statusCode: number, body: unknown): errors.ResponseError {
  const meta = { body, statusCode, headers: {}, warnings: null, meta: {} };
  return new errors.ResponseError(meta as unknown as ConstructorParameters<typeof errors.ResponseError>[0]);
}

function securityException(status: number, reason: string): errors.ResponseError {
  return refusal(status, {
    error: { type: 'security_exception', reason, root_cause: [{ type: 'security_exception', reason }] },
    status,
  });
}

describe('explainRefusal (neon es-api-keys)', () => {
  it('turns wrong credentials into a configuration error naming what to set', () => {
    const explained = explainRefusal(
      securityException(401, 'unable to authenticate user [admin] for REST request [/_security/api_key]'),
      URL,
    );
    expect(explained).toBeInstanceOf(ConfigError);
    expect(explained?.message).toContain(`Elasticsearch at ${URL} rejected the credentials`);
    expect(explained?.message).toContain('unable to authenticate user [admin]');
    expect(explained?.message).toContain('ES_USERNAME and ES_PASSWORD, or ES_API_KEY');
  });

  it('says which privilege is missing when the credentials may not manage API keys', () => {
    const explained = explainRefusal(
      securityException(403, 'action [cluster:admin/xpack/security/api_key/create] is unauthorized for user [reader]'),
      URL,
    );
    expect(explained).toBeInstanceOf(ConfigError);
    expect(explained?.message).toMatch(/may not create or invalidate API keys .*manage_api_key or manage_security/);
  });

  it('recognises a node with security off by its missing _security endpoints', () => {
    for (const [status, error] of [
      [405, 'Incorrect HTTP method for uri [/_security/api_key] and method [PUT], allowed: [POST]'],
      [400, 'no handler found for uri [/_security/api_key] and method [PUT]'],
    ] as const) {
      const explained = explainRefusal(refusal(status, { error, status }), URL);
      expect(explained).toBeInstanceOf(UsageError);
      expect(explained?.message).toContain('xpack.security.enabled: false');
    }
  });

  it('leaves every other failure alone', () => {
    expect(explainRefusal(refusal(500, { error: { type: 'internal', reason: 'boom' } }), URL)).toBeUndefined();
    expect(explainRefusal(refusal(405, { error: 'Incorrect HTTP method for uri [/other]' }), URL)).toBeUndefined();
    expect(explainRefusal(new Error('socket hang up'), URL)).toBeUndefined();
  });
});

import { describe, expect, inject, it } from 'vitest';
import { neonOnce } from '../../devkit/cli-process.js';

/**
 * `neon infra check` as a user runs it: proves both services of the run with a round trip (the
 * check `neon start --cluster` relies on). `neon start` itself is tested end to end in test/e2e/.
 */
describe('neon infra check', () => {
  it('produces and consumes a Kafka record and indexes and finds an Elasticsearch document', async () => {
    const { code, output } = await neonOnce(['infra', 'check'], {
      ...process.env,
      KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      ES_URL: inject('elasticsearchUrl'),
    });
    expect(code, output).toBe(0);
    expect(output).toMatch(/kafka: produced and consumed a record in \d+ ms/);
    expect(output).toMatch(/elasticsearch: indexed and found a document in \d+ ms/);
  });
});

import { Client } from '@elastic/elasticsearch';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { runNeon } from '../../devkit/cli-process.js';
import { freshIndex } from '../../devkit/fresh-names.js';

/**
 * `ES_URL` may carry credentials (`https://user:password@host`). `neon pipeline` connects with them,
 * but neither its start-up lines nor the `/v1/status` it serves show them. The test's Elasticsearch
 * ignores the credentials (security off) or takes them as one more way in, so the run works either way.
 */
const PASSWORD = 'pipeline-s3cret-pw';
const topicPrefix = `${freshIndex('redact')}.`;
const indexPrefix = freshIndex('redact');

afterAll(async () => {
  const kafka = new Kafka({ brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(topicPrefix));
  await admin.deleteTopics({ topics }).catch(() => undefined);
  await admin.disconnect();
  const es = new Client({ node: inject('elasticsearchUrl'), headers: inject('elasticsearchHeaders') });
  for (const row of await es.cat.indices({ index: `${indexPrefix}-*`, format: 'json', h: 'index' })) {
    await es.indices.delete({ index: row.index! }, { ignore: [404] });
  }
  for (const kind of ['chunks', 'interactions']) {
    await es.indices.deleteIndexTemplate({ name: `${indexPrefix}-${kind}-monthly` }, { ignore: [404] });
  }
  await es.close();
});

describe('credentials in ES_URL', () => {
  it('neon pipeline neither prints nor serves them', async () => {
    const url = new URL(inject('elasticsearchUrl'));
    url.username = 'neon-reader';
    url.password = PASSWORD;
    const run = runNeon(['pipeline', '--stages', 'query', '--api-port', '0', '--metrics-port', '0'], {
      ...process.env,
      KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      ES_URL: url.toString(),
      NEON_EMBEDDER: 'hashing',
      NEON_TOPIC_PREFIX: topicPrefix,
      NEON_INDEX_PREFIX: indexPrefix,
    });
    try {
      const [, api] = await run.waitFor(/API at (http:\/\/127\.0\.0\.1:\d+)/, 90_000);
      const banner = run.output();
      expect(banner).toMatch(/and Elasticsearch http:\/\/<redacted>@127\.0\.0\.1:\d+/);
      const status = (await (await fetch(`${api}/v1/status`)).json()) as { datastores: { location: string } };
      expect(status.datastores.location).toMatch(/^http:\/\/<redacted>@127\.0\.0\.1:\d+$/);
      run.kill('SIGTERM');
      await run.exited;
      for (const shown of [run.output(), JSON.stringify(status)]) {
        expect(shown).not.toContain(PASSWORD);
        expect(shown).not.toContain('neon-reader');
      }
    } finally {
      if (run.running()) run.kill('SIGKILL');
    }
  }, 150_000);
});

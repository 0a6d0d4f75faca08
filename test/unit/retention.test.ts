import { describe, expect, it } from 'vitest';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { startProductRuntime } from '../../bin/commands/product-runtime.js';
import { chunkDocument } from '../../processors/index/index-documents.js';
import { datastoreNames, monthlyIndex } from '../../streams/elasticsearch/datastore-templates.js';
import type { Chunk } from '../../schemas/records.generated.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';

const DAY = 86_400_000;

function chunk(id: string, t: number): Chunk {
  return {
    id,
    article_id: `a-${id}`,
    index: 0,
    text: `text of ${id}`,
    title: '',
    marked_text: `text of ${id}`,
    entity_ids: [],
    entities: [],
    t,
    provenance: [{ article_id: `a-${id}`, url: `https://news.example/${id}`, source: 'news.example', published_at: t }],
  };
}

describe('retention (NEON_RETENTION_DAYS)', () => {
  it('drops whole months past the retention when the index stages start, and keeps the rest', async () => {
    const datastore = new EmbeddedDatastore('neon');
    const model = { model: 'hashing-test-only', dimensions: 384 };
    await datastore.prepare(model);
    const vector = new Float32Array(384).fill(1 / Math.sqrt(384));
    const writer = datastore.writer({ stage: 'test' });
    const names = datastoreNames('chunks');
    const old = Date.now() - 400 * DAY;
    const recent = Date.now() - DAY;
    for (const [id, t] of [
      ['old', old],
      ['recent', recent],
    ] as const) {
      await writer.write({
        index: monthlyIndex(names, t),
        id,
        document: chunkDocument(chunk(id, t), vector, model.model, t),
      });
    }
    const said: string[] = [];
    const runtime = await startProductRuntime({
      mode: 'embedded',
      transport: createEmbeddedTransport(),
      datastore,
      config: loadProductConfig({ NEON_EMBEDDER: 'hashing', NEON_RETENTION_DAYS: '90' }),
      stages: ['index-chunks'],
      api: null,
      metricsPort: null,
      say: (line) => said.push(line),
      log: () => undefined,
    });
    await runtime.stop();
    expect(await datastore.months('chunks')).toEqual([monthlyIndex(names, recent)]);
    expect(said).toContain(`retention: dropped ${monthlyIndex(names, old)}`);
  });
});

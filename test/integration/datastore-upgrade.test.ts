import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../processors/index/index-documents.js';
import { datastoreNames, datastoreTemplate, monthlyIndex } from '../../streams/elasticsearch/datastore-templates.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { freshIndex } from '../../devkit/fresh-names.js';
import { useLiveClients } from '../harness/live-clients.js';

const live = useLiveClients();
const EMBEDDING = { model: 'upgrade-test-vectors', dimensions: 4 };
const T = Date.UTC(2024, 0, 15);

describe('a datastore written by an earlier version', () => {
  it('gets the fields this version declares on its existing months, so new documents are not refused', async () => {
    const prefix = freshIndex('neonup');
    const datastore = new ElasticsearchDatastore({ es: live.es, prefix });
    const names = datastoreNames('chunks', prefix);
    try {
      // January 2024 as an earlier version created it: the same mapping without the headline field.
      const template = datastoreTemplate('chunks', EMBEDDING, prefix);
      const { title, ...earlierFields } = template.template!.mappings!.properties!;
      expect(title).toBeDefined();
      const january = monthlyIndex(names, T);
      await live.es.indices.create({
        index: january,
        mappings: { ...template.template!.mappings!, properties: earlierFields },
        settings: { number_of_shards: 1, number_of_replicas: 0 },
        aliases: { [names.alias]: {} },
      });
      const document = chunkDocument(
        {
          id: 'c1',
          article_id: 'a1',
          index: 0,
          text: 'Voters go to the polls.',
          title: 'Election day',
          marked_text: 'Voters go to the polls.',
          entity_ids: [],
          entities: [],
          t: T,
          provenance: [{ article_id: 'a1', url: 'https://news.example/a1', source: 'news.example', published_at: T }],
        },
        Float32Array.from([1, 0, 0, 0]),
        EMBEDDING.model,
        T,
      );
      // Before: the strict mapping refuses the headline.
      await expect(live.es.index({ index: january, id: 'c0', document })).rejects.toThrow(/strict_dynamic_mapping/);

      await datastore.prepare(EMBEDDING);
      const mapping = await live.es.indices.getMapping({ index: january });
      expect(mapping[january]!.mappings.properties?.['title']).toMatchObject({ type: 'text' });
      await live.es.index({ index: january, id: 'c1', document, refresh: 'wait_for' });
      const found = await datastore.lexical({
        kinds: ['chunks'],
        text: 'election',
        k: 5,
        filter: {},
        timeoutMs: 5_000,
      });
      expect(found.map((f) => f.document.id)).toEqual(['c1']);
      // Preparing again changes nothing and does not fail.
      await datastore.prepare(EMBEDDING);
    } finally {
      await datastore.destroy();
    }
  });
});

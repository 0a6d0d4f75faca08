import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../processors/embed/embedder.js';
import { interactionDocument } from '../../processors/index/index-documents.js';
import { parseSearchRequest } from '../../processors/query/search-request.js';
import { datastoreNames, monthlyIndex } from '../../streams/elasticsearch/datastore-templates.js';
import type { Interaction } from '../../schemas/records.generated.js';
import { Retriever } from '../../streams/retrieval/retrieve.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';

const T = Date.UTC(2025, 0, 10, 12);
const query: Embedder = {
  model: 'fixed',
  dimensions: 2,
  embed: (texts) => Promise.resolve(texts.map(() => Float32Array.from([1, 0]))),
  close: () => Promise.resolve(),
};

function interaction(id: string, subject: string, text: string, t = T): Interaction {
  return {
    id,
    t,
    subject_id: `e-${subject}`,
    subject_name: subject,
    object_id: null,
    object_name: null,
    text,
    title: '',
    variant: 'M1',
    chunk_ids: [],
    article_ids: [],
    urls: [],
    model: 'test',
    extracted_at: T,
  };
}

describe('retrieval without repeats', () => {
  it('returns a sentence stored twice on one day once, and still fills k with the next ones', async () => {
    const datastore = new EmbeddedDatastore('neon');
    await datastore.prepare({ model: 'fixed', dimensions: 2 });
    const writer = datastore.writer({ stage: 'test' });
    const names = datastoreNames('interactions');
    const rows: [Interaction, number][] = [
      [interaction('a', 'valley', 'Jeceel Valley near Cal Miskaad'), 0.9],
      [interaction('b', 'miskaad', 'Jeceel Valley near Cal Miskaad.'), 0.9],
      [interaction('c', 'fires', 'Wildfires spread in Los Angeles County'), 0.8],
      [interaction('d', 'guard', 'The National Guard protects evacuated homes'), 0.7],
      // The same words on another day are another fact.
      [interaction('e', 'valley', 'Jeceel Valley near Cal Miskaad', T - 86_400_000), 0.95],
    ];
    for (const [row, cos] of rows) {
      const vector = Float32Array.from([cos, Math.sqrt(1 - cos * cos)]);
      await writer.write({
        index: monthlyIndex(names, row.t),
        id: row.id,
        document: interactionDocument(row, vector, 'fixed', T),
      });
    }
    const retriever = new Retriever({ datastore, embedder: query });
    const ask = async (strategy: string) => {
      const parsed = parseSearchRequest({ q: 'q', date: '2025-01-10', k: 3, strategy, store: 'interactions' }, T);
      if (!parsed.ok) throw new Error(parsed.problems.join('; '));
      return (await retriever.search(parsed.request)).items.map((i) => i.id);
    };
    expect(await ask('temporal')).toEqual(['a', 'c', 'd']);
    expect(await ask('generic')).toEqual(['e', 'a', 'c']);
  });
});

import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../processors/embed/embedder.js';
import { chunkDocument, interactionDocument } from '../../processors/index/index-documents.js';
import { parseSearchRequest } from '../../processors/query/search-request.js';
import { datastoreNames, monthlyIndex } from '../../streams/elasticsearch/datastore-templates.js';
import type { Chunk, Interaction } from '../../schemas/records.generated.js';
import { Retriever } from '../../streams/retrieval/retrieve.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';

const T = Date.UTC(2025, 0, 10, 12);
const query: Embedder = {
  model: 'fixed',
  dimensions: 2,
  embed: (texts) => Promise.resolve(texts.map(() => Float32Array.from([1, 0]))),
  close: () => Promise.resolve(),
};
const vector = (cos: number) => Float32Array.from([cos, Math.sqrt(1 - cos * cos)]);

function statement(id: string, text: string, chunkIds: string[]): Interaction {
  return {
    id,
    t: T,
    subject_id: 'e-fire',
    subject_name: 'fire',
    object_id: null,
    object_name: null,
    text,
    title: '',
    variant: 'M1',
    chunk_ids: chunkIds,
    article_ids: [],
    urls: [],
    model: 'test',
    extracted_at: T,
  };
}

function passage(id: string, text: string): Chunk {
  return {
    id,
    article_id: `art-${id}`,
    index: 0,
    text,
    title: '',
    marked_text: text,
    entity_ids: [],
    entities: [],
    t: T,
    provenance: [
      { article_id: `art-${id}`, url: `https://news.example/${id}`, source: 'news.example', published_at: T },
    ],
  };
}

describe('statements matched through their passages', () => {
  it('keeps a matched passage’s statement in the dense list too, behind statements whose own cosine is higher', async () => {
    const datastore = new EmbeddedDatastore('neon');
    await datastore.prepare({ model: 'fixed', dimensions: 2 });
    const writer = datastore.writer({ stage: 'test' });
    // The passage holds the question's words; its statement holds none of them, and a statement's
    // cosine runs higher than its five-sentence passage's, as with real embeddings.
    await writer.write({
      index: monthlyIndex(datastoreNames('chunks'), T),
      id: 'chunk-palisades',
      document: chunkDocument(
        passage('chunk-palisades', 'The Palisades fire burned 20,000 acres. The fire grew overnight.'),
        vector(0.5),
        'fixed',
        T,
      ),
    });
    const rows: [Interaction, number][] = [
      [statement('a', 'Crews worked through the night', []), 0.9],
      [statement('b', 'Winds eased on Friday', []), 0.85],
      [statement('c', 'Schools stayed closed', []), 0.8],
      [statement('z', 'The fire grew overnight', ['chunk-palisades']), 0.3],
    ];
    for (const [row, cos] of rows) {
      await writer.write({
        index: monthlyIndex(datastoreNames('interactions'), row.t),
        id: row.id,
        document: interactionDocument(row, vector(cos), 'fixed', T),
      });
    }
    const retriever = new Retriever({ datastore, embedder: query });
    const parsed = parseSearchRequest(
      {
        q: 'Palisades acres',
        date: '2025-01-10',
        k: 1,
        strategy: 'generic',
        store: 'interactions',
        answer_sentences: false,
      },
      T,
    );
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    const { items } = await retriever.search(parsed.request);
    // Generic search reads 2 a list for k = 1. The dense list merges a (0.95), b (0.925) and z at its
    // passage's 0.75; the lexical list holds z alone (through its passage). Fused, z is in both lists
    // and comes first; a dense list cut back to 2 would leave z in one list only, tied with a.
    expect(items.map((i) => [i.id, i.passage])).toEqual([
      ['z', 'The Palisades fire burned 20,000 acres. The fire grew overnight.'],
    ]);
    expect(items[0]!.semantic_score).toBeCloseTo(0.75, 5);
  });
});

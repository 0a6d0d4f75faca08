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

const vector = (cos: number) => Float32Array.from([cos, Math.sqrt(1 - cos * cos)]);

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

/** An empty embedded datastore for the fixed query embedder, and a writer into it. */
async function openDatastore() {
  const datastore = new EmbeddedDatastore('neon');
  await datastore.prepare({ model: 'fixed', dimensions: 2 });
  return { datastore, writer: datastore.writer({ stage: 'test' }) };
}

/** Stores a passage (a chunk) at the given cosine to the query. */
async function writePassage(writer: ReturnType<EmbeddedDatastore['writer']>, id: string, text: string, cos: number) {
  await writer.write({
    index: monthlyIndex(datastoreNames('chunks'), T),
    id,
    document: chunkDocument(passage(id, text), vector(cos), 'fixed', T),
  });
}

describe('retrieval without repeats', () => {
  it('returns a sentence stored twice on one day once, and still fills k with the next ones', async () => {
    const { datastore, writer } = await openDatastore();
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
      await writer.write({
        index: monthlyIndex(names, row.t),
        id: row.id,
        document: interactionDocument(row, vector(cos), 'fixed', T),
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

  it('returns a statement with its source passage, one statement per passage, the others giving way', async () => {
    const { datastore, writer } = await openDatastore();
    const fires = 'Wildfires spread in Los Angeles County. The Palisades fire burned 20,000 acres by Thursday.';
    await writePassage(writer, 'chunk-fires', fires, 0.1);
    const rows: [Interaction, number][] = [
      [{ ...interaction('a', 'fires', 'Wildfires spread in Los Angeles County'), chunk_ids: ['chunk-fires'] }, 0.9],
      // Another statement of the same passage: its fact is in the passage the first one brings.
      [
        { ...interaction('b', 'palisades', 'The Palisades fire burned 20,000 acres'), chunk_ids: ['chunk-fires'] },
        0.85,
      ],
      [interaction('c', 'guard', 'The National Guard protects evacuated homes'), 0.8],
      // Its chunk is not stored: no passage, and it is not held to one per passage.
      [{ ...interaction('d', 'guard', 'Evacuation orders widen'), chunk_ids: ['chunk-gone'] }, 0.7],
      [{ ...interaction('e', 'guard', 'Evacuation orders lifted'), chunk_ids: ['chunk-gone'] }, 0.6],
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
      { q: 'q', date: '2025-01-10', k: 4, strategy: 'generic', fusion: 'dense', store: 'interactions' },
      T,
    );
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    const { items } = await retriever.search(parsed.request);
    expect(items.map((i) => [i.id, i.passage])).toEqual([
      ['a', fires],
      ['c', undefined],
      ['d', undefined],
      ['e', undefined],
    ]);
  });
});

describe('statements matched through their passages', () => {
  it('keeps a matched passage’s statement in the dense list too, behind statements whose own cosine is higher', async () => {
    const { datastore, writer } = await openDatastore();
    // The passage holds the question's words; its statement holds none of them, and a statement's
    // cosine runs higher than its five-sentence passage's, as with real embeddings.
    await writePassage(
      writer,
      'chunk-palisades',
      'The Palisades fire burned 20,000 acres. The fire grew overnight.',
      0.5,
    );
    const rows: [Interaction, number][] = [
      [interaction('a', 'fire', 'Crews worked through the night'), 0.9],
      [interaction('b', 'fire', 'Winds eased on Friday'), 0.85],
      [interaction('c', 'fire', 'Schools stayed closed'), 0.8],
      [{ ...interaction('z', 'fire', 'The fire grew overnight'), chunk_ids: ['chunk-palisades'] }, 0.3],
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

describe('candidate depth', () => {
  it('reads as many candidates per list as the request asks when the strategy reranks, never fewer than k', async () => {
    const { datastore, writer } = await openDatastore();
    await writePassage(writer, 'chunk-fires', 'The Palisades fire burned 20,000 acres.', 0.9);
    // Each list's depth, as the datastore is asked for it.
    const depths: number[] = [];
    const nearest = datastore.nearest.bind(datastore);
    const lexical = datastore.lexical.bind(datastore);
    datastore.nearest = (request) => (depths.push(request.k), nearest(request));
    datastore.lexical = (request) => (depths.push(request.k), lexical(request));
    const retriever = new Retriever({ datastore, embedder: query });
    const ask = async (strategy: string, k: number, depth?: number) => {
      const parsed = parseSearchRequest({ q: 'Palisades acres', date: '2025-01-10', k, strategy, store: 'chunks' }, T);
      if (!parsed.ok) throw new Error(parsed.problems.join('; '));
      depths.length = 0;
      const { items } = await retriever.search({ ...parsed.request, ...(depth === undefined ? {} : { depth }) });
      expect(items.map((i) => i.id)).toEqual(['chunk-fires']);
      return [...depths];
    };
    expect(await ask('tempralm', 5)).toEqual([30, 30]);
    expect(await ask('tempralm', 20)).toEqual([60, 60]);
    expect(await ask('tempralm', 5, 40)).toEqual([40, 40]);
    expect(await ask('tempralm', 5, 2)).toEqual([5, 5]);
    expect(await ask('tempralm', 5, 1_000)).toEqual([500, 500]);
    // Generic search takes its top k as they are, with room for repeated texts: no depth of its own.
    expect(await ask('generic', 5, 30)).toEqual([10, 10]);
  });
});

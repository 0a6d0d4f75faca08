import { describe, expect, it } from 'vitest';
import type { Embedder, EmbeddingPurpose } from '../../processors/embed/embedder.js';
import { HashingEmbedder } from '../../processors/embed/hashing-embedder.js';
import { EmbeddingBatcher } from '../../streams/embed/embedding-batcher.js';

/**
 * A vector depends on the text and on what it is embedded as. The index stages' batcher keeps
 * vectors by text, so it must embed documents only: a question never gets a document's vector from
 * it, nor a document a query's.
 */
function instructedEmbedder() {
  const purposes: (EmbeddingPurpose | undefined)[] = [];
  const embedder: Embedder = {
    model: 'instructed',
    dimensions: 2,
    // Like bge-small-en-v1.5: a query reads an instruction first, so its vector differs.
    embed: async (texts, purpose) => {
      purposes.push(purpose);
      return texts.map((t) => Float32Array.from([t.length, purpose === 'query' ? 1 : 0]));
    },
    close: () => Promise.resolve(),
  };
  return { embedder, purposes };
}

describe('embedding purpose', () => {
  it("the index stages' batcher asks for documents, so what it keeps by text is a document vector", async () => {
    const { embedder, purposes } = instructedEmbedder();
    const batcher = new EmbeddingBatcher(embedder, { lingerMs: 1 });
    const first = await Promise.all(['alpha', 'beta', 'alpha'].map((t) => batcher.embed(t)));
    const again = await batcher.embed('alpha');
    expect(purposes.length).toBeGreaterThan(0);
    expect(purposes.every((p) => p === 'document')).toBe(true);
    const [document] = await embedder.embed(['alpha'], 'document');
    const [query] = await embedder.embed(['alpha'], 'query');
    for (const vector of [first[0]!, first[2]!, again]) {
      expect([...vector]).toEqual([...document!]);
      expect([...vector]).not.toEqual([...query!]);
    }
  });

  it('the hashing embedder gives a query the same vector as a document', async () => {
    const embedder = new HashingEmbedder(16);
    const [query] = await embedder.embed(['Los Angeles wildfires'], 'query');
    const [document] = await embedder.embed(['Los Angeles wildfires'], 'document');
    expect([...query!]).toEqual([...document!]);
    await expect(embedder.embed(['x'], 'question' as EmbeddingPurpose)).rejects.toThrow(RangeError);
  });
});

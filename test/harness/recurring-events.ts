import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkArticle } from '../../processors/chunk/chunk-article.js';
import { NearDuplicateFilter } from '../../processors/dedupe/drop-near-duplicates.js';
import type { Embedder } from '../../processors/embed/embedder.js';
import { openLocalOnnxEmbedder } from '../../streams/embed/local-onnx-embedder.js';
import { extractFromChunks } from '../../processors/extract/extraction-plan.js';
import { ALL_ENTITIES } from '../../processors/extract/extraction-targets.js';
import { OfflineInteractionExtractor } from '../../processors/extract/interaction-extractor.js';
import {
  chunkDocument,
  interactionDocument,
  interactionEmbeddingText,
} from '../../processors/index/index-documents.js';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import { EntityRegistry } from '../../processors/markup/entity-registry.js';
import { markArticle } from '../../processors/markup/mark-article.js';
import { EntityLinker } from '../../processors/query/reformulate-query.js';
import { parseSearchRequest, STORES } from '../../processors/query/search-request.js';
import { datastoreNames, monthlyIndex } from '../../streams/elasticsearch/datastore-templates.js';
import type { Article, Chunk, Interaction } from '../../schemas/records.generated.js';
import { answerQuestion } from '../../streams/retrieval/answer-question.js';
import { Retriever } from '../../streams/retrieval/retrieve.js';
import { RECURRING_ARTICLES, RECURRING_QUESTIONS } from '../fixtures/recurring-events.js';
import { localTestModel, MODEL_DOWNLOAD_TIMEOUT_MS } from '../fixtures/embed-local-model.js';
import type { DatastoreUnderTest } from './datastore-conformance.js';

const NOW = Date.UTC(2025, 0, 1);

interface Corpus {
  chunks: Chunk[];
  interactions: Interaction[];
  registry: EntityRegistry;
  /** Article id → the event it reports. */
  eventOf: Map<string, string>;
}

/** The articles through the product's markup, chunking, dedupe and offline extraction, in publication order. */
async function buildCorpus(): Promise<Corpus> {
  const eventOf = new Map<string, string>();
  const articles: Article[] = RECURRING_ARTICLES.map(({ input, event }) => {
    const article = normalizeArticle(input, NOW);
    eventOf.set(article.id, event);
    return article;
  }).sort((a, b) => a.published_at - b.published_at || a.id.localeCompare(b.id));
  const registry = new EntityRegistry();
  const dedupe = new NearDuplicateFilter();
  const chunks: Chunk[] = [];
  for (const article of articles) {
    for (const chunk of chunkArticle(markArticle(article, registry))) {
      const decision = dedupe.offer(chunk);
      if (decision.kind === 'unique') chunks.push(decision.chunk);
    }
  }
  const { interactions } = await extractFromChunks(chunks, {
    extractor: new OfflineInteractionExtractor(),
    targets: ALL_ENTITIES,
    variants: ['M1'],
  });
  return { chunks, interactions, registry, eventOf };
}

/**
 * Recurring events (see `test/fixtures/recurring-events.ts`): asked at various dates with no year,
 * a question must get a report of the asked-for event's latest occurrence before its date at rank
 * 1, with the product's default request (strategy, store, fusion, time words) and its default local
 * embedding model — on every store, on the datastore under test. The extractive answer's first line
 * names the winner.
 */
export function describeRecurringEvents(label: string, open: () => Promise<DatastoreUnderTest>): void {
  let under: DatastoreUnderTest | undefined;
  let embedder: Embedder | undefined;
  let retriever: Retriever;
  let corpus: Corpus;

  beforeAll(async () => {
    const model = await localTestModel();
    const vectors = await openLocalOnnxEmbedder({ files: model.files, pin: model.pin });
    embedder = vectors;
    corpus = await buildCorpus();
    const opened = await open();
    under = opened;
    const datastore = opened.datastore;
    await datastore.prepare({ model: vectors.model, dimensions: vectors.dimensions });
    const writer = datastore.writer({ stage: 'recurring-events', lingerMs: 1, refresh: 'wait_for' });
    const chunkVectors = await vectors.embed(corpus.chunks.map((c) => c.text));
    const interactionVectors = await vectors.embed(corpus.interactions.map((i) => interactionEmbeddingText(i)));
    await Promise.all([
      ...corpus.chunks.map((c, i) =>
        writer.write({
          index: monthlyIndex(datastoreNames('chunks', datastore.prefix), c.t),
          id: c.id,
          document: chunkDocument(c, chunkVectors[i]!, vectors.model, NOW),
        }),
      ),
      ...corpus.interactions.map((x, i) =>
        writer.write({
          index: monthlyIndex(datastoreNames('interactions', datastore.prefix), x.t),
          id: x.id,
          document: interactionDocument(x, interactionVectors[i]!, vectors.model, NOW),
        }),
      ),
    ]);
    await writer.close();
    const linker = new EntityLinker(
      [...corpus.registry.entities()].map((e) => ({
        id: e.id,
        name: e.name,
        aliases: e.aliases,
        mentions: e.mentions,
      })),
    );
    retriever = new Retriever({ datastore, embedder: vectors, linker });
  }, MODEL_DOWNLOAD_TIMEOUT_MS);

  afterAll(async () => {
    await embedder?.close();
    await under?.cleanup();
  });

  const eventsOf = (articleIds: readonly string[]): string[] => articleIds.map((id) => corpus.eventOf.get(id) ?? id);

  describe(`recurring events on ${label}`, () => {
    it('the corpus has several near-identical reports of each occurrence, and dedupe keeps them apart by year', () => {
      const finals = corpus.chunks.filter((c) => eventsOf([c.article_id])[0]!.startsWith('lakeside-women-final-'));
      expect(new Set(finals.map((c) => eventsOf([c.article_id])[0])).size).toBe(6);
      expect(corpus.interactions.length).toBeGreaterThan(0);
    });

    for (const store of ['default', ...STORES] as const) {
      it(`${store === 'default' ? 'the default store' : store}: the latest occurrence's report of the asked-for event at rank 1`, async () => {
        const wrong: string[] = [];
        for (const question of RECURRING_QUESTIONS) {
          const parsed = parseSearchRequest(
            { q: question.q, date: question.date, ...(store === 'default' ? {} : { store }) },
            NOW,
          );
          if (!parsed.ok) throw new Error(parsed.problems.join('; '));
          const { items } = await retriever.search(parsed.request);
          const first = items[0];
          const events = first === undefined ? [] : eventsOf(first.article_ids);
          if (!events.includes(question.expected)) {
            wrong.push(`${question.q} (${question.date}): ${events.join(', ') || 'nothing'}, not ${question.expected}`);
          }
        }
        expect(wrong).toEqual([]);
      });
    }

    it("the extractive answer's first line names the winner", async () => {
      const missing: string[] = [];
      for (const question of RECURRING_QUESTIONS.filter((q) => q.name !== undefined)) {
        const parsed = parseSearchRequest({ q: question.q, date: question.date }, NOW);
        if (!parsed.ok) throw new Error(parsed.problems.join('; '));
        const { answer } = await answerQuestion(retriever, parsed.request);
        const firstLine = answer.split('\n').find((line) => line.trim() !== '' && !/^As of /.test(line)) ?? '';
        if (!firstLine.includes(question.name!)) missing.push(`${question.q} (${question.date}): ${firstLine}`);
      }
      expect(missing).toEqual([]);
    });
  });
}

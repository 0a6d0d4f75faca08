/**
 * Builds what the RealTime QA evaluations ask their questions of: the evaluated questions'
 * documents through the product's intake, markup, chunking, dedupe and extraction, embedded with
 * the configured embedder (through the on-disk vector cache) and indexed into a fresh pair of
 * datastores on real Elasticsearch, behind the product's Retriever. `close()` deletes the indices.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { configuredEmbedder } from '../bin/commands/cluster-services.js';
import type { ChatModel } from '../processors/extract/chat-model.js';
import { extractFromChunks } from '../processors/extract/extraction-plan.js';
import { ALL_ENTITIES } from '../processors/extract/extraction-targets.js';
import { LlmInteractionExtractor, OfflineInteractionExtractor } from '../processors/extract/interaction-extractor.js';
import type { Embedder } from '../processors/embed/embedder.js';
import { chunkDocument, interactionDocument, interactionEmbeddingText } from '../processors/index/index-documents.js';
import { canonicalUrl } from '../processors/intake/canonical-url.js';
import { EntityLinker } from '../processors/query/reformulate-query.js';
import type { Store } from '../processors/query/search-request.js';
import { datastoreNames, monthlyIndex, type DatastoreKind } from '../streams/elasticsearch/datastore-templates.js';
import { defaultDirectories } from '../schemas/local-infra-config.js';
import type { Chunk, Interaction } from '../schemas/records.generated.js';
import { Retriever } from '../streams/retrieval/retrieve.js';
import { ensureDatastores, monthlyIndices } from '../streams/elasticsearch/datastores.js';
import { createElasticsearchClient } from '../streams/elasticsearch/elasticsearch-client.js';
import { ElasticsearchDatastore } from '../streams/elasticsearch/elasticsearch-datastore.js';
import { acquireTestInfrastructure } from '../devkit/acquire-infrastructure.js';
import { CachedEmbedder, vectorCacheDir } from './cached-embedder.js';
import { cachedPrepare } from './prepared-chunks-cache.js';
import { intakeDocuments, type RealtimeQaSet } from './realtimeqa-data.js';

/**
 * What each datastore embeds and stores for a record, in one place: the product's own functions
 * (`processors/index/index-documents.ts`), as the index stages use them. A chunk is embedded by its text.
 */
function indexed(dateInText: boolean) {
  return {
    chunks: {
      text: (chunk: Chunk) => chunk.text,
      document: chunkDocument,
    },
    interactions: {
      text: (interaction: Interaction) => interactionEmbeddingText(interaction, { dateInText }),
      document: interactionDocument,
    },
  } as const;
}

export interface SetUpOptions {
  /** Chat model for extraction; absent: the offline extractor. */
  extractionChat?: ChatModel;
  /** Keep vectors and prepared chunks on disk between runs (default true). */
  cache?: boolean;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /** Embed each interaction with its date written in, as NEON's datastore entries read (default: its text alone). */
  dateInText?: boolean;
  /**
   * The stores the run asks (default all): a datastore no configuration reads is left empty, so a
   * comparison of embedding models on the chunks embeds no interactions.
   */
  stores?: readonly Store[];
}

export interface RealtimeQaIndex {
  retriever: Retriever;
  embedder: Embedder;
  /** The stores there is something in (interactions only when extraction found some). */
  stores: Store[];
  /** Chunk id → canonical URLs of the articles it came from (gold recall). */
  urlsOfChunk: Map<string, string[]>;
  facts: {
    articles: number;
    refused: Record<string, number>;
    chunks: number;
    interactions: number;
    extraction: string;
    embedder: string;
    prepared_from_cache: boolean;
    seconds: { prepare: number; embed_and_index: number };
    vector_cache: { dir: string; hits: number; embedded: number } | null;
  };
  close(): Promise<void>;
}

function seconds(since: number): number {
  return Math.round((performance.now() - since) / 100) / 10;
}

/**
 * The environment the evaluation embeds with: the local model on every core unless
 * `NEON_EMBEDDINGS_CONCURRENCY` says otherwise. The pipeline's default of one inference at a time
 * leaves cores to the other stages; here tens of thousands of texts are embedded with nothing else to
 * run (84,053 chunks, bge-small-en-v1.5-q: about 19 a second on one of 2 cores, about 38 on both
 * while Elasticsearch indexes).
 */
export function withEveryCore(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if ((env.NEON_EMBEDDER ?? 'local') !== 'local' || env.NEON_EMBEDDINGS_CONCURRENCY !== undefined) return env;
  return { ...env, NEON_EMBEDDINGS_CONCURRENCY: String(availableParallelism()) };
}

export async function setUpRealtimeQaIndex(set: RealtimeQaSet, options: SetUpOptions = {}): Promise<RealtimeQaIndex> {
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => console.error(line));
  const logLine = (line: string): undefined => {
    log(line);
  };
  const cache = options.cache ?? true;
  const cacheRoot = env.NEON_CACHE_DIR ?? defaultDirectories(env).cacheDir;

  let started = performance.now();
  const now = Date.now();
  const { articles, refused } = intakeDocuments(set.docs.values(), now);
  // Every entity is a target, as the evaluation asks about entities no spike may have flagged. The
  // offline extractor is deterministic, so its interactions are kept with the chunks; an LLM's are not.
  const chat = options.extractionChat;
  const extractor = chat ? new LlmInteractionExtractor(chat) : new OfflineInteractionExtractor();
  const prepared = await cachedPrepare(articles, cache ? join(cacheRoot, 'eval-prepared-chunks') : undefined, {
    id: chat ? undefined : extractor.model,
    run: async (chunks) =>
      (await extractFromChunks(chunks, { extractor, targets: ALL_ENTITIES, variants: ['M1', 'M2'] })).interactions,
  });
  const { chunks, entities } = prepared;
  const interactions: Interaction[] = prepared.interactions ?? [];
  const prepareSeconds = seconds(started);
  log(
    `${set.evaluated.length} questions: ${articles.length} articles (${set.docs.size - articles.length} refused), ` +
      `${chunks.length} unique chunks, ${interactions.length} interactions` +
      `${prepared.fromCache ? ' (from the cache)' : ''} in ${prepareSeconds} s; embedding and indexing…`,
  );

  const infra = await acquireTestInfrastructure(env, logLine);
  const baseEs = createElasticsearchClient({ url: infra.elasticsearchUrl });
  const es: Client =
    Object.keys(infra.elasticsearchHeaders).length === 0
      ? baseEs
      : baseEs.child({ headers: infra.elasticsearchHeaders });
  const model = await configuredEmbedder(withEveryCore(env), logLine);
  const cached = cache ? new CachedEmbedder(model, vectorCacheDir(env), { log }) : undefined;
  const embedder: Embedder = cached ?? model;
  const prefix = `eval-rtqa-${Date.now().toString(36)}`;
  const close = async () => {
    try {
      for (const kind of ['chunks', 'interactions'] as const) {
        for (const index of await monthlyIndices(es, kind, prefix)) await es.indices.delete({ index });
        await es.indices.deleteIndexTemplate({ name: datastoreNames(kind, prefix).template }, { ignore: [404] });
      }
    } finally {
      await embedder.close();
      await es.close();
      await infra.release();
    }
  };
  try {
    started = performance.now();
    await ensureDatastores(es, { model: embedder.model, dimensions: embedder.dimensions }, { prefix });
    const index = async <R extends Chunk | Interaction>(
      kind: DatastoreKind,
      records: readonly R[],
      text: (record: R) => string,
      document: (record: R, vector: Float32Array, model: string, now: number) => Record<string, unknown>,
    ) => {
      const names = datastoreNames(kind, prefix);
      const began = performance.now();
      // Elasticsearch indexes one batch while the next is embedded: both are CPU-bound, on different processes.
      let indexing: Promise<void> = Promise.resolve();
      for (let i = 0; i < records.length; i += 256) {
        const batch = records.slice(i, i + 256);
        const vectors = await embedder.embed(batch.map(text));
        await indexing;
        indexing = (async () => {
          const operations = batch.flatMap((record, j) => [
            { index: { _index: monthlyIndex(names, record.t), _id: record.id } },
            document(record, vectors[j]!, embedder.model, now),
          ]);
          const response = await es.bulk({ operations });
          if (response.errors) throw new Error(`bulk indexing into ${kind} failed`);
        })();
        // Not awaited until the next batch: a failure must still not go unhandled meanwhile.
        indexing.catch(() => undefined);
        if ((i / 256) % 20 === 0) {
          log(`  ${kind}: ${Math.min(records.length, i + 256)} / ${records.length} (${seconds(began)} s)`);
        }
      }
      await indexing;
      await es.indices.refresh({ index: `${names.indexPrefix}*` });
    };
    const INDEXED = indexed(options.dateInText === true);
    const asked = new Set<Store>(options.stores ?? ['interactions', 'chunks', 'both']);
    const needs = (kind: DatastoreKind): boolean => asked.has(kind) || asked.has('both');
    if (needs('chunks')) await index('chunks', chunks, INDEXED.chunks.text, INDEXED.chunks.document);
    if (needs('interactions')) {
      await index('interactions', interactions, INDEXED.interactions.text, INDEXED.interactions.document);
    }
    cached?.flush();
    const embedSeconds = seconds(started);
    const retriever = new Retriever({
      datastore: new ElasticsearchDatastore({ es, prefix }),
      embedder,
      linker: new EntityLinker(entities),
    });
    return {
      retriever,
      embedder,
      stores: (interactions.length > 0 ? (['interactions', 'chunks', 'both'] as const) : (['chunks'] as const)).filter(
        (store) => asked.has(store) || (store !== 'both' && asked.has('both')),
      ),
      urlsOfChunk: new Map(chunks.map((c) => [c.id, c.provenance.map((p) => canonicalUrl(p.url))])),
      facts: {
        articles: articles.length,
        refused: Object.fromEntries(refused),
        chunks: chunks.length,
        interactions: interactions.length,
        extraction: interactions[0]?.model ?? 'none',
        embedder: embedder.model,
        prepared_from_cache: prepared.fromCache,
        seconds: { prepare: prepareSeconds, embed_and_index: embedSeconds },
        vector_cache: cached
          ? { dir: vectorCacheDir(env), hits: cached.stats.hits, embedded: cached.stats.misses }
          : null,
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The measurements of `npm run bench -- pipeline`, each on names of its own (see pipeline-cluster.ts):
 * the pipeline's sustained throughput and freshness, the Elasticsearch ceiling on the same documents,
 * and every stage alone on the records the pipeline itself produced.
 */
import { performance } from 'node:perf_hooks';
import type { Client } from '@elastic/elasticsearch';
import type { Admin } from 'kafkajs';
import { ensureEmbeddingModel } from '../infra/models/download-embedding-model.js';
import { createEmbedder } from '../streams/embed/create-embedder.js';
import type { Embedder } from '../processors/embed/embedder.js';
import { embedderConfigFromEnv } from '../processors/embed/embedder-config.js';
import { interactionEmbeddingText } from '../processors/index/index-documents.js';
import type { NormalizeOptions } from '../processors/intake/normalize-article.js';
import { replayArticles, type ReplayItem } from '../processors/intake/replay-articles.js';
import { decodeRecord } from '../schemas/avro-codec.js';
import {
  datastoreNames,
  type DatastoreKind,
  type EmbeddingSpec,
} from '../streams/elasticsearch/datastore-templates.js';
import type { Article } from '../schemas/records.generated.js';
import { TransportArticlePublisher } from '../streams/stages/intake-publisher.js';
import { EmbeddingBatcher } from '../streams/embed/embedding-batcher.js';
import { ensureDatastores } from '../streams/elasticsearch/datastores.js';
import type { StageName } from '../streams/pipeline/stage-catalog.js';
import { readTopicOnce } from '../streams/runtime/topic-tail.js';
import type { HeaderValue, Transport, TransportProducer } from '../streams/runtime/transport.js';
import { measureHops, type ArticleHops, type HopLatencies } from './freshness-hops.js';
import {
  ArticleVisibilityProbe,
  endOffsets,
  pause,
  spawnPipeline,
  stageBinding,
  stopPipeline,
  topicOf,
  total,
  VisibilityProbe,
  waitCaughtUp,
  type Names,
  type TopicKey,
} from './pipeline-cluster.js';

export interface Cluster {
  admin: Admin;
  transport: Transport;
  /** One producer for everything the benchmark writes (intake's publisher, stage inputs). */
  producer: TransportProducer;
  es: Client;
  signal: AbortSignal;
  log: (line: string) => void;
}

/** The articles, as intake's inputs (all of which it accepts) and as the Articles it makes of them. */
export interface Corpus {
  source: string;
  items: ReplayItem[];
  articles: Article[];
  normalize: Partial<NormalizeOptions>;
}

/** What decides "searchable": the stages an article goes through before its documents are indexed. */
export const SEARCHABLE_PATH: readonly StageName[] = [
  'markup',
  'chunk',
  'dedupe',
  'extract',
  'index-chunks',
  'index-interactions',
];

const INDEX_STAGES: ReadonlySet<StageName> = new Set(['index-chunks', 'index-interactions']);

/** The topics whose phase-one records feed the stages measured alone. */
const SOURCE_TOPICS: readonly TopicKey[] = [
  'articles',
  'marked',
  'chunks',
  'uniqueChunks',
  'mentions',
  'interactions',
  'deadLetters',
];

const round = (value: number, digits = 2): number => Math.round(value * 10 ** digits) / 10 ** digits;

function publisherFor(cluster: Cluster, names: Names): TransportArticlePublisher {
  return new TransportArticlePublisher(cluster.producer, {
    articlesTopic: topicOf(names, 'articles'),
    deadLetterTopic: topicOf(names, 'deadLetters'),
    processor: 'intake',
  });
}

// ---------------------------------------------------------------------------------------------
// The pipeline: sustained throughput

export interface ThroughputFigure {
  articles: number;
  rejected: number;
  /** From the start of the replay until every document was searchable. */
  seconds: number;
  /** Until the replay had published everything. */
  published_seconds: number;
  /** Until every stage on the path had committed its whole input (Elasticsearch acknowledged all). */
  acknowledged_seconds: number;
  articles_per_s: number;
  /** Documents searchable at the end (unique ids). */
  chunks: number;
  interactions: number;
  /** Records the index stages consumed (and embedded): a re-sent record is embedded and indexed again. */
  unique_chunk_records: number;
  interaction_records: number;
  dead_letters: number;
  /** False when the last documents were only seen after the benchmark forced a refresh. */
  visible_without_forced_refresh: boolean;
}

/** Where each source topic ended after phase one: the stages measured alone get exactly these records. */
export type Snapshot = Map<string, bigint[]>;

/**
 * Replays `count` articles as fast as intake publishes them (the product's replay, publisher and
 * normalisation) into a running pipeline, and times it from the start of the replay until every
 * document they make is visible to search.
 */
export async function measureThroughput(
  cluster: Cluster,
  names: Names,
  corpus: Corpus,
  count: number,
  timeoutMs: number,
): Promise<{ figure: ThroughputFigure; snapshot: Snapshot }> {
  const probe = new VisibilityProbe(cluster.es, names.indexPrefix);
  try {
    const started = performance.now();
    const report = await replayArticles(corpus.items.slice(0, count), {
      publisher: publisherFor(cluster, names),
      origin: 'bench',
      normalize: corpus.normalize,
      signal: cluster.signal,
    });
    const publishedAt = performance.now();
    const ackedAt = await waitCaughtUp(
      cluster.admin,
      SEARCHABLE_PATH.map((stage) => stageBinding(names, stage)),
      { deadline: started + timeoutMs, intervalMs: 500, signal: cluster.signal, what: 'the pipeline to catch up' },
    );
    const visibility = await probe.settle();
    const snapshot = new Map<string, bigint[]>();
    for (const key of SOURCE_TOPICS) {
      const topic = topicOf(names, key);
      snapshot.set(topic, await endOffsets(cluster.admin, topic));
    }
    const seconds = (visibility.searchableAt - started) / 1000;
    const figure: ThroughputFigure = {
      articles: report.published,
      rejected: Object.values(report.rejected).reduce((n, c) => n + c, 0),
      seconds: round(seconds),
      published_seconds: round((publishedAt - started) / 1000),
      acknowledged_seconds: round((ackedAt - started) / 1000),
      articles_per_s: round(report.published / seconds),
      chunks: visibility.documents.chunks,
      interactions: visibility.documents.interactions,
      unique_chunk_records: total(snapshot.get(topicOf(names, 'uniqueChunks')) ?? []),
      interaction_records: total(snapshot.get(topicOf(names, 'interactions')) ?? []),
      dead_letters: total(snapshot.get(topicOf(names, 'deadLetters')) ?? []),
      visible_without_forced_refresh: visibility.naturally,
    };
    return { figure, snapshot };
  } finally {
    await probe.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// The ceiling: the same documents bulk-indexed straight into Elasticsearch

export interface CeilingFigure {
  documents: number;
  seconds: number;
  documents_per_s: number;
  articles_per_s: number;
}

const CEILING_BATCH_DOCS = 500;
const CEILING_CONCURRENCY = 2;

/** The source datastores' embedding model and size, from their index template. */
async function embeddingOf(es: Client, indexPrefix: string): Promise<EmbeddingSpec> {
  const template = await es.indices.getIndexTemplate({ name: datastoreNames('chunks', indexPrefix).template });
  const meta = template.index_templates[0]?.index_template._meta as
    { embedding_model?: unknown; dimensions?: unknown } | undefined;
  if (typeof meta?.embedding_model !== 'string' || typeof meta.dimensions !== 'number') {
    throw new Error(`the index template under ${indexPrefix} names no embedding model`);
  }
  return { model: meta.embedding_model, dimensions: meta.dimensions };
}

/**
 * Every document under `from` as `_bulk` lines for the same monthly index under `to`, in batches.
 * Serialised here, before the clock starts: the ceiling is what Elasticsearch takes in.
 */
async function bulkBatches(es: Client, from: string, to: string): Promise<{ batches: string[][]; documents: number }> {
  const batches: string[][] = [];
  let current: string[] = [];
  let documents = 0;
  for (const kind of ['chunks', 'interactions'] as const satisfies readonly DatastoreKind[]) {
    const source = datastoreNames(kind, from).indexPrefix;
    const target = datastoreNames(kind, to).indexPrefix;
    let page = await es.search({ index: `${source}*`, scroll: '2m', size: CEILING_BATCH_DOCS, sort: ['_doc'] });
    try {
      while (page.hits.hits.length > 0) {
        for (const hit of page.hits.hits) {
          const document = hit._source as Record<string, unknown> | undefined;
          if (!Array.isArray(document?.embedding)) throw new Error(`${hit._index} returns no vectors in _source`);
          current.push(JSON.stringify({ index: { _index: hit._index.replace(source, target), _id: hit._id } }));
          current.push(JSON.stringify(document));
          documents += 1;
          if (current.length >= CEILING_BATCH_DOCS * 2) {
            batches.push(current);
            current = [];
          }
        }
        if (page._scroll_id === undefined) break;
        page = await es.scroll({ scroll_id: page._scroll_id, scroll: '2m' });
      }
    } finally {
      if (page._scroll_id !== undefined) await es.clearScroll({ scroll_id: page._scroll_id }).catch(() => undefined);
    }
  }
  if (current.length > 0) batches.push(current);
  return { batches, documents };
}

async function sendBatches(es: Client, batches: readonly string[][]): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < batches.length) {
      const batch = batches[next++]!;
      const response = await es.bulk({ operations: batch });
      if (response.errors) {
        const failed = response.items.find((item) => item.index?.error !== undefined)?.index?.error;
        throw new Error(`the ceiling's bulk request failed: ${failed?.type ?? 'unknown'} ${failed?.reason ?? ''}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CEILING_CONCURRENCY }, lane));
}

/**
 * The documents the pipeline indexed (vectors included), bulk-indexed into fresh datastores with the
 * same templates, `CEILING_BATCH_DOCS` per request and `CEILING_CONCURRENCY` requests at once, timed
 * until a search sees them all: what Elasticsearch alone allows, as articles per second.
 */
export async function measureCeiling(
  cluster: Cluster,
  from: Names,
  to: Names,
  articles: number,
): Promise<CeilingFigure> {
  const { es } = cluster;
  const embedding = await embeddingOf(es, from.indexPrefix);
  const { batches, documents } = await bulkBatches(es, from.indexPrefix, to.indexPrefix);
  await ensureDatastores(es, embedding, { prefix: to.indexPrefix });
  const probe = new VisibilityProbe(es, to.indexPrefix);
  try {
    const started = performance.now();
    await sendBatches(es, batches);
    const visibility = await probe.settle();
    const found = visibility.documents.chunks + visibility.documents.interactions;
    if (found !== documents) throw new Error(`the ceiling indexed ${found} documents, not ${documents}`);
    const seconds = (visibility.searchableAt - started) / 1000;
    return {
      documents,
      seconds: round(seconds),
      documents_per_s: Math.round(documents / seconds),
      articles_per_s: round(articles / seconds),
    };
  } finally {
    await probe.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Freshness: publish → searchable, per article, at a steady rate

export interface FreshnessFigure {
  rate_articles_per_s: number;
  articles: number;
  /** Articles with at least one document (the others were refused or dead-lettered downstream). */
  measured: number;
  /** Publish → a search sees every document the article makes (the figure held to the target). */
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
  /** Publish → a search finds the article at all (its first document, usually a chunk). */
  first_p50_ms: number;
  first_p95_ms: number;
  /** Publish → the article's last record on each topic of the path: where the time went. */
  hops: HopLatencies;
  /** The slowest articles to become searchable, slowest first: what the tail is made of. */
  slowest: SlowArticle[];
}

export interface SlowArticle {
  article_id: string;
  /** Characters of the article's text: long articles take longest everywhere. */
  text_chars: number;
  /** When it was published, seconds into the phase. */
  published_s: number;
  searchable_ms: number;
  hops_ms: ArticleHops;
}

/** How many of the slowest articles the figure lists. */
const SLOWEST_LISTED = 8;

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * Publishes `articles` one by one at `rate` per second into the running pipeline, noting when each
 * was handed to the producer, and reports how long each took until a search saw all its documents.
 */
export async function measureFreshness(
  cluster: Cluster,
  names: Names,
  articles: readonly Article[],
  rate: number,
  timeoutMs: number,
): Promise<FreshnessFigure> {
  const publisher = publisherFor(cluster, names);
  const probe = new ArticleVisibilityProbe(cluster.es, names.indexPrefix);
  const publishedAt = new Map<string, number>();
  const publishedAtEpoch = new Map<string, number>();
  try {
    const started = performance.now();
    for (const [i, article] of articles.entries()) {
      const wait = started + (i * 1000) / rate - performance.now();
      if (wait > 0) await pause(wait, cluster.signal);
      probe.watch(article.id);
      publishedAt.set(article.id, performance.now());
      publishedAtEpoch.set(article.id, Date.now());
      await publisher.publish({ ...article, fetched_at: Date.now() });
    }
    await waitCaughtUp(
      cluster.admin,
      SEARCHABLE_PATH.map((stage) => stageBinding(names, stage)),
      {
        deadline: performance.now() + timeoutMs,
        intervalMs: 500,
        signal: cluster.signal,
        what: 'the pipeline to catch up after the freshness phase',
      },
    );
    const searchable = await probe.settle();
    const latencies = (which: 'first' | 'complete'): number[] =>
      articles
        .map((article) => {
          const at = searchable.get(article.id)?.[which];
          return at === undefined ? undefined : at - publishedAt.get(article.id)!;
        })
        .filter((ms): ms is number => ms !== undefined)
        .sort((a, b) => a - b);
    const complete = latencies('complete');
    const first = latencies('first');
    const { hops, byArticle } = await measureHops(cluster.transport, names, publishedAtEpoch, percentile);
    const slowest = articles
      .flatMap((article): SlowArticle[] => {
        const at = searchable.get(article.id)?.complete;
        if (at === undefined) return [];
        return [
          {
            article_id: article.id,
            text_chars: article.text.length,
            published_s: round((publishedAt.get(article.id)! - started) / 1000, 1),
            searchable_ms: Math.round(at - publishedAt.get(article.id)!),
            hops_ms: byArticle.get(article.id) ?? {},
          },
        ];
      })
      .sort((a, b) => b.searchable_ms - a.searchable_ms)
      .slice(0, SLOWEST_LISTED);
    return {
      rate_articles_per_s: round(rate),
      articles: articles.length,
      measured: complete.length,
      p50_ms: Math.round(percentile(complete, 50)),
      p95_ms: Math.round(percentile(complete, 95)),
      max_ms: Math.round(complete.at(-1) ?? Number.NaN),
      first_p50_ms: Math.round(percentile(first, 50)),
      first_p95_ms: Math.round(percentile(first, 95)),
      hops,
      slowest,
    };
  } finally {
    await probe.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Each stage alone

export interface StageFigure {
  stage: string;
  input_records: number;
  seconds: number;
  records_per_s: number;
  articles_per_s: number;
  /** Off the path (spike detection): reported, but not a candidate for the slowest stage. */
  on_searchable_path: boolean;
}

function stageFigure(stage: string, records: number, seconds: number, articles: number, onPath = true): StageFigure {
  return {
    stage,
    input_records: records,
    seconds: round(seconds, 3),
    records_per_s: Math.round(records / seconds),
    articles_per_s: round(articles / seconds),
    on_searchable_path: onPath,
  };
}

interface CopiedRecord {
  partition: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | string>;
}

function plainHeaders(headers: Record<string, HeaderValue>): Record<string, Buffer | string> {
  const plain: Record<string, Buffer | string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) plain[name] = first;
  }
  return plain;
}

/** A topic's records below `until` (per partition), in partition order. */
async function readTopic(transport: Transport, topic: string, until: readonly bigint[]): Promise<CopiedRecord[]> {
  const records: CopiedRecord[] = [];
  await readTopicOnce(
    transport,
    topic,
    (record) => {
      if (BigInt(record.offset) >= (until[record.partition] ?? 0n)) return;
      records.push({
        partition: record.partition,
        key: record.key,
        value: record.value,
        headers: plainHeaders(record.headers),
      });
    },
    { purpose: 'bench-pipeline-read' },
  );
  return records;
}

/** Most records and bytes per produce request: the broker refuses a partition's batch over 1 MB. */
const FILL_RECORDS = 500;
const FILL_BYTES = 512 * 1024;

/** Writes the records to the same partitions of another topic, a few hundred (≤ 512 kB) per request. */
async function fill(producer: TransportProducer, topic: string, records: readonly CopiedRecord[]): Promise<void> {
  let batch: CopiedRecord[] = [];
  let bytes = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    await producer.send(
      topic,
      batch.map((r) => ({ key: r.key, value: r.value, headers: r.headers, partition: r.partition })),
    );
    batch = [];
    bytes = 0;
  };
  for (const record of records) {
    const size = (record.value?.length ?? 0) + (record.key?.length ?? 0);
    if (batch.length > 0 && (batch.length >= FILL_RECORDS || bytes + size > FILL_BYTES)) await flush();
    batch.push(record);
    bytes += size;
  }
  await flush();
}

/**
 * Intake alone: the same replay into a topic nobody reads (normalisation, Avro, the producer's
 * acknowledgements), so nothing else competes for the machine.
 */
export async function measureIntakeAlone(
  cluster: Cluster,
  names: Names,
  corpus: Corpus,
  count: number,
): Promise<StageFigure> {
  await cluster.transport.ensureTopics(
    (['articles', 'deadLetters'] as const).map((key) => ({ topic: topicOf(names, key), partitions: 6 })),
  );
  const started = performance.now();
  const report = await replayArticles(corpus.items.slice(0, count), {
    publisher: publisherFor(cluster, names),
    origin: 'bench',
    normalize: corpus.normalize,
    signal: cluster.signal,
  });
  return stageFigure('intake', count, (performance.now() - started) / 1000, report.published);
}

export interface StageAloneOptions {
  /** Where the pipeline left its records, and where phase one ended on each topic. */
  source: Names;
  snapshot: Snapshot;
  /** Environment of the `neon pipeline` process (connections, embedder). */
  env: NodeJS.ProcessEnv;
  articles: number;
  timeoutMs: number;
}

/**
 * One stage in a `neon pipeline --stages <stage>` process of its own, on fresh topics: once it has
 * joined its group, the records the pipeline gave that stage in phase one are written to its input
 * as fast as the producer goes, and it is timed until its group committed them all (and, for an
 * index stage, until a search sees every document).
 */
export async function measureStageAlone(
  cluster: Cluster,
  stage: StageName,
  names: Names,
  options: StageAloneOptions,
): Promise<StageFigure> {
  const inputs = stageBinding(options.source, stage).reads;
  const records = await Promise.all(
    inputs.map((topic) => readTopic(cluster.transport, topic, options.snapshot.get(topic) ?? [])),
  );
  const child = await spawnPipeline(options.env, names, stage);
  const target = stageBinding(names, stage);
  const probe = INDEX_STAGES.has(stage) ? new VisibilityProbe(cluster.es, names.indexPrefix, 100) : undefined;
  try {
    const started = performance.now();
    for (const [i, topic] of target.reads.entries()) await fill(cluster.producer, topic, records[i] ?? []);
    const caughtUpAt = await waitCaughtUp(cluster.admin, [target], {
      deadline: started + options.timeoutMs,
      intervalMs: 100,
      signal: cluster.signal,
      what: `${stage} alone to catch up`,
    });
    // An index stage is done when a search sees its documents; the others when their outputs are written.
    const endAt = probe ? (await probe.settle()).searchableAt : caughtUpAt;
    const count = records.reduce((n, list) => n + list.length, 0);
    return stageFigure(stage, count, (endAt - started) / 1000, options.articles, SEARCHABLE_PATH.includes(stage));
  } finally {
    await probe?.stop();
    await stopPipeline(child);
  }
}

/** Records a stage admits at once (the runtime's default in-flight bound), so texts its batcher holds. */
const STAGE_IN_FLIGHT = 1_000;

/**
 * One index stage's embedding: its own batcher (which shapes calls for the embedder and embeds a
 * repeated text once), fed as the stage feeds it — at most the stage's in-flight bound at a time.
 */
async function embedLane(embedder: Embedder, texts: readonly string[], signal: AbortSignal): Promise<void> {
  const batcher = new EmbeddingBatcher(embedder);
  for (let i = 0; i < texts.length; i += STAGE_IN_FLIGHT) {
    signal.throwIfAborted();
    await Promise.all(texts.slice(i, i + STAGE_IN_FLIGHT).map((text) => batcher.embed(text)));
  }
}

/**
 * The embedder alone, on exactly what the two index stages embed (every unique-chunk record's text
 * and every interaction's dated text), called as they call it: two lanes, each with the stages'
 * embedding batcher (calls shaped by the embedder, a repeated text embedded once). In the pipeline both index stages share one embedder, so this, not either index
 * stage alone, is the embedding capacity the pipeline has.
 */
export async function measureEmbedAlone(
  cluster: Cluster,
  options: Omit<StageAloneOptions, 'timeoutMs'> & {
    /**
     * Whether both index stages share one embedder in the measured pipeline (one process): then
     * the embedder is a stage of its own, a candidate for the slowest. With a process per
     * processor each index stage has its own, and its time alone already includes embedding.
     */
    sharedEmbedder: boolean;
  },
): Promise<StageFigure> {
  const chunksTopic = topicOf(options.source, 'uniqueChunks');
  const interactionsTopic = topicOf(options.source, 'interactions');
  const chunkTexts = (await readTopic(cluster.transport, chunksTopic, options.snapshot.get(chunksTopic) ?? [])).map(
    (r) => decodeRecord('Chunk', r.value, r.headers).text,
  );
  const interactionTexts = (
    await readTopic(cluster.transport, interactionsTopic, options.snapshot.get(interactionsTopic) ?? [])
  ).map((r) => interactionEmbeddingText(decodeRecord('Interaction', r.value, r.headers)));
  const embedder = await createEmbedder(embedderConfigFromEnv(options.env), {
    obtainModel: (cacheDir, pin) => ensureEmbeddingModel(cacheDir, pin, cluster.log),
  });
  try {
    await embedder.embed(chunkTexts.slice(0, 8));
    const started = performance.now();
    await Promise.all([
      embedLane(embedder, chunkTexts, cluster.signal),
      embedLane(embedder, interactionTexts, cluster.signal),
    ]);
    const seconds = (performance.now() - started) / 1000;
    // A stage of its own only where both index stages share this one embedder: in one process.
    return stageFigure(
      'embed',
      chunkTexts.length + interactionTexts.length,
      seconds,
      options.articles,
      options.sharedEmbedder,
    );
  } finally {
    await embedder.close();
  }
}

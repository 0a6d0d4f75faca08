/**
 * `npm run bench -- query [--sizes 10000,100000,1000000] [--queries 200] [--k 10] [--merge-finished]
 * [--settle-minutes 20] [--hot-threads] [--store chunks|interactions]`:
 * retrieval latency per strategy on real Elasticsearch, with hybrid (BM25 + kNN) fusion as the
 * product runs it, next to the raw Elasticsearch kNN + date filter on the same index in the same
 * run (the ceiling) and the raw BM25 query alone.
 *
 * Each size gets a fresh datastore of the store searched (`--store`, the product's default store,
 * chunks, unless told; the product's own template: 384-dim cosine int8 HNSW, `standard`-analysed
 * text, headline and names) holding n synthetic documents: seeded random unit vectors, times spread
 * over a year, and texts realistic for BM25 (`synthetic-news.ts`: statements of 10–30 words drawn
 * with the word frequencies of the bundled Wikipedia Current Events sample, about a subject and
 * often an object drawn from its ~2.8k names as popular as they are there). An interaction is one
 * statement; a chunk is five, under a headline, with the entities they name. Queries are
 * question-like texts drawn the same way (5–12 words, most naming an entity; none with time words,
 * so every contender searches the same as-of scope) with random unit query vectors at random query
 * times; the query embedder returns the vector as it is, so what is timed is retrieval (time words,
 * linking, the filtered kNN and BM25 searches, fusion, reranking, the citations), not the model.
 * Latencies are wall-clock per request, one request at a time; every contender is asked each query,
 * interleaved query by query in rotating order.
 *
 * Once filled, Elasticsearch's own background merges are let finish, for at most `--settle-minutes`
 * (a query racing a merge for the two cores measures the merge). With `--merge-finished`, every month but the newest is then merged
 * into one segment, as the product's maintenance does once a month is over and quiet
 * (streams/datastore/month-compactor.ts); rebuilding one month's HNSW graph (~83k vectors at 1M) took a
 * quarter of an hour here, so it is not the default.
 *
 * Contenders: the raw kNN, the raw BM25 (`multi_match` `most_fields` over the product's lexical
 * fields and weights, same filter, no total hit count, the words the product searches) with two
 * diagnostics of it (counting the total hits; the question's words chosen the other way, all or
 * content words only), both in one request, each of `temporal`, `generic`, `tempralm` and `multihop`
 * (generic with `hops=2`) with the default fusion (rrf) and with `fusion: 'dense'` (the kNN alone,
 * as before hybrid retrieval), and `recency` (generic, recency on: over-retrieves and ranks the
 * latest matching report first), `tempralm/depth-50` (TempRALM reranking 50 candidates a list, the
 * depth before the default's 30), and `…/<words>-words`: the strategies held to the targets with the
 * lexical search looking for the words the product does not look for by default. The product's contenders also report where their time went: the
 * retriever's own steps (`timings_ms`) and each kNN and BM25 call the datastore made. After timing,
 * the slowest raw BM25 and raw kNN queries are run again with Elasticsearch's `profile`; with
 * `--hot-threads`, Elasticsearch's hot threads are sampled halfway through the timed queries.
 *
 * Writes `bench/results/query.json`: `{"runs": [{n, contender, fusion, p50_ms, p95_ms, p99_ms,
 * raw_p95_ms, ratio, ...}], "sizes": [...]}`.
 */
import { loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Client, estypes } from '@elastic/elasticsearch';
import type { Embedder } from '../processors/embed/embedder.js';
import { chunkDocument, interactionDocument } from '../processors/index/index-documents.js';
import type { FusionMode } from '../processors/query/fuse-rankings.js';
import { searchWords } from '../processors/query/question-terms.js';
import { DAY_MS } from '../processors/query/rank-candidates.js';
import { EntityLinker } from '../processors/query/reformulate-query.js';
import {
  DEFAULT_LEXICAL_WORDS,
  DEFAULT_STORE,
  parseSearchRequest,
  type LexicalWords,
  type SearchRequest,
} from '../processors/query/search-request.js';
import { understandQuestionTime } from '../processors/query/understand-question-time.js';
import { datastoreNames, monthlyIndex } from '../streams/elasticsearch/datastore-templates.js';
import {
  LEXICAL_FIELDS,
  type LexicalRequest,
  type NearestRequest,
  type ScoredDocument,
} from '../streams/datastore/datastore.js';
import { ensureDatastores, monthlyIndices } from '../streams/elasticsearch/datastores.js';
import { createElasticsearchClient } from '../streams/elasticsearch/elasticsearch-client.js';
import { Retriever } from '../streams/retrieval/retrieve.js';
import { ElasticsearchDatastore } from '../streams/elasticsearch/elasticsearch-datastore.js';
import { acquireTestInfrastructure } from '../devkit/acquire-infrastructure.js';
import { writeBenchResults } from './results.js';
import { currentEventsArticles, newsVocabulary, SyntheticNews } from '../devkit/synthetic-news.js';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    queries: { type: 'string', default: '200' },
    k: { type: 'string', default: '10' },
    'merge-finished': { type: 'boolean', default: false },
    'hot-threads': { type: 'boolean', default: false },
    'settle-minutes': { type: 'string', default: '20' },
    store: { type: 'string', default: DEFAULT_STORE },
  },
});
if (args.store !== 'chunks' && args.store !== 'interactions') {
  console.error(`--store must be chunks or interactions (got "${args.store}")`);
  process.exit(2);
}
/** The datastore filled and searched: the product's default store unless `--store` says otherwise. */
const STORE: 'chunks' | 'interactions' = args.store;
const SIZES = args.sizes.split(',').map(Number);
const QUERIES = Number(args.queries);
const K = Number(args.k);
const DIMS = 384;
const START = Date.UTC(2024, 0, 1);
const SPAN_DAYS = 365;
const WARM_UP = 20;
/** The synthetic statements come from no article, so they carry no headline for lexical search. */
const NO_HEADLINE = { title: '' };
/** Sentences of a synthetic chunk: the product's chunker cuts windows of five. */
const CHUNK_SENTENCES = 5;
/** Held to the targets: p95 ≤ 100 ms at 1M and ≤ 1.5 × the raw kNN's p95 (multi-hop is reported beside). */
const TARGET_P95_MS = 100;
const TARGET_RATIO = 1.5;
/** The lexical words the product does not search by default: measured beside the default. */
const OTHER_LEXICAL_WORDS: LexicalWords = DEFAULT_LEXICAL_WORDS === 'all' ? 'content' : 'all';

let seed = 7;
function random(): number {
  // xorshift32: fast, seeded, good enough for vectors and word draws.
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return ((seed >>> 0) % 1_000_000) / 1_000_000;
}

function unitVector(): Float32Array {
  const v = new Float32Array(DIMS);
  let norm = 0;
  for (let i = 0; i < DIMS; i++) {
    // Approximately normal (sum of uniforms): directions spread evenly on the sphere.
    const x = random() + random() + random() - 1.5;
    v[i] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm);
  return v.map((x) => x / norm);
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, index)]! * 100) / 100;
}

function spread(values: readonly number[]): { p50: number; p95: number; n: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), n: sorted.length };
}

const load = (): number[] => loadavg().map((x) => Math.round(x * 100) / 100);

const news = new SyntheticNews(newsVocabulary(currentEventsArticles()), random);
const linker = new EntityLinker(news.entityList.map((entity) => ({ ...entity, aliases: [], mentions: 1 })));

/**
 * A synthetic chunk: five statements of one article, its headline a sixth one without its full stop,
 * the entities they name marked, as the product's chunks carry them.
 */
function syntheticChunk(i: number, t: number): Record<string, unknown> {
  const statements = Array.from({ length: CHUNK_SENTENCES }, () => news.statement());
  const named = new Map(
    statements.flatMap((s) => [s.subject, ...(s.object === null ? [] : [s.object])]).map((e) => [e.id, e]),
  );
  const article = `a${i}`;
  return chunkDocument(
    {
      id: `${article}:0`,
      article_id: article,
      index: 0,
      text: statements.map((s) => s.text).join(' '),
      title: news.statement().text.replace(/\.$/, ''),
      marked_text: '',
      entity_ids: [...named.keys()],
      entities: [...named.values()].map((e) => ({ id: e.id, name: e.name, type: 'OTHER' as const })),
      t,
      provenance: [
        { article_id: article, url: `https://news.example/${article}`, source: 'news.example', published_at: t },
      ],
    },
    unitVector(),
    'bench-random-384',
    Date.now(),
  );
}

function syntheticStatement(i: number, t: number): Record<string, unknown> {
  const statement = news.statement();
  return interactionDocument(
    {
      id: `i${i}`,
      t,
      subject_id: statement.subject.id,
      subject_name: statement.subject.name,
      object_id: statement.object?.id ?? null,
      object_name: statement.object?.name ?? null,
      text: statement.text,
      ...NO_HEADLINE,
      variant: statement.object === null ? 'M1' : 'M2',
      chunk_ids: [`c${i}`],
      article_ids: [`a${i}`],
      urls: [`https://news.example/a${i}`],
      model: 'bench',
      extracted_at: t,
    },
    unitVector(),
    'bench-random-384',
    Date.now(),
  );
}

async function fill(es: Client, prefix: string, n: number): Promise<void> {
  const names = datastoreNames(STORE, prefix);
  const batch = 2000;
  for (let from = 0; from < n; from += batch) {
    const operations: unknown[] = [];
    for (let i = from; i < Math.min(n, from + batch); i++) {
      const t = START + Math.floor(random() * SPAN_DAYS * DAY_MS);
      const document = STORE === 'chunks' ? syntheticChunk(i, t) : syntheticStatement(i, t);
      operations.push({ index: { _index: monthlyIndex(names, t), _id: document.id as string } }, document);
    }
    const response = await es.bulk({ operations: operations as never[] });
    if (response.errors) throw new Error('bulk indexing failed');
    if ((from / batch) % 25 === 0) {
      process.stderr.write(`  indexed ${Math.min(n, from + batch)} / ${n} (load ${load().join(' ')})\n`);
    }
  }
  await es.indices.refresh({ index: `${names.indexPrefix}*` });
}

/**
 * Waits until no merge is running on the indices (three quiet polls in a row, at most `--settle-minutes`);
 * returns how long that took.
 */
async function backgroundMergesDone(es: Client, indices: string): Promise<number> {
  const started = performance.now();
  let quiet = 0;
  while (quiet < 3 && performance.now() - started < Number(args['settle-minutes']) * 60_000) {
    const stats = await es.indices.stats({ index: indices, metric: ['merge'] });
    quiet = (stats._all.primaries?.merges?.current ?? 0) === 0 ? quiet + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return (performance.now() - started) / 1000;
}

/** Times each kNN and BM25 call the retriever makes, so a search's time can be split between them. */
class TimedDatastore extends ElasticsearchDatastore {
  calls: { search: 'knn' | 'bm25'; ms: number }[] = [];

  private async timed<T>(search: 'knn' | 'bm25', run: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await run();
    } finally {
      this.calls.push({ search, ms: performance.now() - started });
    }
  }

  override nearest(request: NearestRequest): Promise<ScoredDocument[]> {
    return this.timed('knn', () => super.nearest(request));
  }

  override lexical(request: LexicalRequest): Promise<ScoredDocument[]> {
    return this.timed('bm25', () => super.lexical(request));
  }
}

/** One line per shard of a profiled search: its query tree's top-level type and times (ms). */
interface ShardProfile {
  index: string;
  query_type: string;
  query_ms: number;
  rewrite_ms: number;
  collector_ms: number;
  /** The costliest parts of the query tree, with their type and description. */
  heaviest: { type: string; description: string; ms: number }[];
  /** kNN searches: the dfs phase's time (graph walk included) and the vectors it compared. */
  knn_ms?: number;
  vector_operations?: number;
}

function summariseProfile(response: estypes.SearchResponse): { took_ms: number; shards: ShardProfile[] } {
  const ms = (nanos: number | undefined): number => Math.round((nanos ?? 0) / 10_000) / 100;
  const shards = (response.profile?.shards ?? []).map((shard): ShardProfile => {
    const searches = shard.searches;
    const queries = searches.flatMap((s) => s.query);
    const flat: { type: string; description: string; nanos: number }[] = [];
    const walk = (q: estypes.SearchQueryProfile, depth: number): void => {
      if (depth > 0) flat.push({ type: q.type, description: q.description.slice(0, 120), nanos: q.time_in_nanos });
      for (const child of q.children ?? []) walk(child, depth + 1);
    };
    for (const q of queries) walk(q, 0);
    // A kNN search runs in the dfs phase, the graph walk itself while its query is rewritten.
    type KnnProfile = { query?: estypes.SearchQueryProfile[]; rewrite_time?: number; vector_operations_count?: number };
    const dfs = (shard as { dfs?: { knn?: KnnProfile[] } }).dfs;
    const knnNanos = (dfs?.knn ?? []).reduce(
      (sum, k) => sum + (k.rewrite_time ?? 0) + (k.query ?? []).reduce((s, q) => s + q.time_in_nanos, 0),
      0,
    );
    const vectorOperations = (dfs?.knn ?? []).reduce((sum, k) => sum + (k.vector_operations_count ?? 0), 0);
    return {
      index: shard.index,
      query_type: queries[0]?.type ?? '',
      query_ms: ms(queries.reduce((sum, q) => sum + q.time_in_nanos, 0)),
      rewrite_ms: ms(searches.reduce((sum, s) => sum + s.rewrite_time, 0)),
      collector_ms: ms(searches.flatMap((s) => s.collector).reduce((sum, c) => sum + c.time_in_nanos, 0)),
      heaviest: flat
        .sort((a, b) => b.nanos - a.nanos)
        .slice(0, 3)
        .map((f) => ({ type: f.type, description: f.description, ms: ms(f.nanos) })),
      ...(dfs?.knn ? { knn_ms: ms(knnNanos), vector_operations: vectorOperations } : {}),
    };
  });
  return {
    took_ms: response.took,
    shards: shards.sort((a, b) => b.query_ms + (b.knn_ms ?? 0) - a.query_ms - (a.knn_ms ?? 0)),
  };
}

const infra = await acquireTestInfrastructure(process.env, (line) => console.error(line));
const baseEs = createElasticsearchClient({ url: infra.elasticsearchUrl });
const es =
  Object.keys(infra.elasticsearchHeaders).length === 0 ? baseEs : baseEs.child({ headers: infra.elasticsearchHeaders });
// The kNN's speed depends on the Java the node runs on (SIMD vector code from 21): recorded with the figures.
const elasticsearchJava = Object.values((await es.nodes.info({ metric: 'jvm' })).nodes)
  .map((node) => node.jvm?.version ?? 'unknown')
  .join(', ');
console.error(`Elasticsearch runs on Java ${elasticsearchJava}`);

interface Run {
  n: number;
  contender: string;
  strategy: string;
  fusion: FusionMode | 'raw';
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  raw_p95_ms: number;
  /** p95 ÷ the raw kNN's p95 of the same run. */
  ratio: number;
  /** Fusion on: p95 ÷ the same strategy's p95 with `fusion: 'dense'`. */
  vs_dense?: number;
  /**
   * Fusion on: p95 ÷ the p95 of `raw-knn+bm25`, the product's kNN and BM25 asked in one plain
   * request: what the retriever adds to the least a hybrid search costs here.
   */
  vs_raw_hybrid?: number;
  /** Held to the targets (p95 ≤ 100 ms, ratio ≤ 1.5): whether it meets them. */
  meets_targets?: boolean;
  /** Elasticsearch's own `took` (raw queries). */
  took_ms?: { p50: number; p95: number };
  /** The retriever's steps (its `timings_ms`), per search. */
  steps_ms?: Record<string, { p50: number; p95: number }>;
  /** Each kNN and BM25 call the datastore made, wall time on the client. */
  knn_call_ms?: { p50: number; p95: number; n: number };
  bm25_call_ms?: { p50: number; p95: number; n: number };
}
const runs: Run[] = [];
const detail: Record<string, unknown>[] = [];

/** The prefix being filled or timed: dropped on Ctrl-C too, as after a failure. */
let active: string | undefined;
async function dropDatastore(prefix: string): Promise<void> {
  for (const index of await monthlyIndices(es, STORE, prefix)) {
    await es.indices.delete({ index }, { ignore: [404] });
  }
  for (const kind of ['interactions', 'chunks'] as const) {
    await es.indices.deleteIndexTemplate({ name: datastoreNames(kind, prefix).template }, { ignore: [404] });
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`${signal}: dropping ${active ?? 'nothing'}\n`);
    void (active === undefined ? Promise.resolve() : dropDatastore(active)).finally(() => process.exit(130));
  });
}

try {
  for (const n of SIZES) {
    const prefix = `bench-query-${n}-${Date.now().toString(36)}`;
    active = prefix;
    await ensureDatastores(es, { model: 'bench-random-384', dimensions: DIMS }, { prefix });
    try {
      const loadAtFill = load();
      const indexStarted = performance.now();
      await fill(es, prefix, n);
      const indexSeconds = (performance.now() - indexStarted) / 1000;
      const datastore = new TimedDatastore({ es, prefix });
      const settleSeconds = await backgroundMergesDone(es, `${datastoreNames(STORE, prefix).indexPrefix}*`);
      const filled = await datastore.monthStats(STORE);
      let mergeSeconds = 0;
      if (args['merge-finished']) {
        // What the product's maintenance does once each month is over and quiet; the newest month is
        // the one being written to, and stays as the fill left it.
        const finished = filled.slice(0, -1).map((month) => month.index);
        const mergeStarted = performance.now();
        for (const index of finished) await datastore.compact(index);
        for (;;) {
          const months = await datastore.monthStats(STORE);
          if (months.every((month) => !finished.includes(month.index) || month.segments === 1)) break;
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
        mergeSeconds = (performance.now() - mergeStarted) / 1000;
      }
      const searched = await datastore.monthStats(STORE);
      let current: Float32Array = new Float32Array(DIMS);
      const embedder: Embedder = {
        model: 'bench-random-384',
        dimensions: DIMS,
        embed: (texts) => Promise.resolve(texts.map(() => current)),
        close: () => Promise.resolve(),
      };
      const retriever = new Retriever({ datastore, embedder, linker });
      // Questions without time words: a window or recency the words set would give some contenders
      // a narrower scope than the raw queries (recency is its own contender, asked explicitly).
      let timeWorded = 0;
      const queries = Array.from({ length: QUERIES + WARM_UP }, () => {
        const tq = START + Math.floor((0.1 + random() * 0.9) * SPAN_DAYS * DAY_MS);
        for (;;) {
          const question = news.question();
          const intent = understandQuestionTime(question.text, tq);
          if (intent.expressions.length === 0 && !intent.recency && intent.eventAnchor === undefined) {
            return { vector: unitVector(), tq, text: question.text };
          }
          timeWorded += 1;
        }
      });
      const alias = datastoreNames(STORE, prefix).alias;
      const rawTook = new Map<string, number[]>();
      type Query = (typeof queries)[number];
      const rawKnn = (q: Query, profile = false): Promise<estypes.SearchResponse> =>
        es.search({
          index: alias,
          knn: {
            field: 'embedding',
            query_vector: Array.from(q.vector),
            k: K,
            num_candidates: Math.max(100, K * 4),
            filter: [{ range: { published_at: { lte: q.tq } } }],
          },
          size: K,
          _source: ['id', 'text', 'published_at'],
          ...(profile ? { profile: true } : {}),
        });
      // What the product's `lexical` asks, on the alias as a plain client would; the variants are
      // diagnostics of where lexical cost goes (see the README): the total hit count the product
      // does not ask for, and the question's words chosen the other way (`lexicalWords`).
      type Bm25Variant = 'as-product' | 'with-total' | 'other-words';
      const searchedWords = (q: Query, words: LexicalWords): string =>
        words === 'content' ? searchWords(q.text).join(' ') || q.text : q.text;
      const bm25Body = (q: Query, variant: Bm25Variant): estypes.SearchRequest => ({
        index: alias,
        query: {
          bool: {
            must: [
              {
                multi_match: {
                  query: searchedWords(q, variant === 'other-words' ? OTHER_LEXICAL_WORDS : DEFAULT_LEXICAL_WORDS),
                  type: 'most_fields',
                  fields: Object.entries(LEXICAL_FIELDS).map(([field, weight]) => `${field}^${weight}`),
                },
              },
            ],
            filter: [{ range: { published_at: { lte: q.tq } } }],
          },
        },
        // Counting every hit up to 10,000 (Elasticsearch's default) delays Lucene's skipping of low-scoring blocks.
        track_total_hits: variant === 'with-total',
        size: K,
        _source: ['id', 'text', 'published_at'],
      });
      const rawBm25 = (
        q: Query,
        profile = false,
        variant: Bm25Variant = 'as-product',
      ): Promise<estypes.SearchResponse> =>
        es.search({ ...bm25Body(q, variant), ...(profile ? { profile: true } : {}) });
      // Both in one request (Elasticsearch sums the kNN and query scores): the cost of one round
      // trip, one query and one fetch phase instead of two of each.
      const rawHybrid = (q: Query): Promise<estypes.SearchResponse> =>
        es.search({
          ...bm25Body(q, 'as-product'),
          knn: {
            field: 'embedding',
            query_vector: Array.from(q.vector),
            k: K,
            num_candidates: Math.max(100, K * 4),
            filter: [{ range: { published_at: { lte: q.tq } } }],
          },
        });
      const raws: Record<string, (q: Query) => Promise<estypes.SearchResponse>> = {
        'raw-knn': (q) => rawKnn(q),
        'raw-bm25': (q) => rawBm25(q),
        'raw-bm25-with-total': (q) => rawBm25(q, false, 'with-total'),
        [`raw-bm25-${OTHER_LEXICAL_WORDS}-words`]: (q) => rawBm25(q, false, 'other-words'),
        'raw-knn+bm25': (q) => rawHybrid(q),
      };

      const product = [
        ...(['temporal', 'generic', 'tempralm', 'multihop'] as const).flatMap((strategy) =>
          (['rrf', 'dense'] as const).map((fusion) => ({
            name: fusion === 'rrf' ? strategy : `${strategy}/dense`,
            strategy,
            fusion,
            recency: false,
            lexicalWords: DEFAULT_LEXICAL_WORDS,
            answerSentences: true,
          })),
        ),
        {
          name: 'recency',
          strategy: 'generic' as const,
          fusion: 'rrf' as const,
          recency: true,
          lexicalWords: DEFAULT_LEXICAL_WORDS,
          answerSentences: true,
        },
        // TempRALM reranking 50 candidates a list (the depth before `DEFAULT_RERANK_DEPTH`): what the deeper pool costs.
        {
          name: 'tempralm/depth-50',
          strategy: 'tempralm' as const,
          fusion: 'rrf' as const,
          recency: false,
          lexicalWords: DEFAULT_LEXICAL_WORDS,
          answerSentences: true,
          depth: 50,
        },
        // Reciprocal-rank fusion of the dense and lexical rankings alone: what the answer-sentence ranking costs.
        ...(['temporal', 'generic', 'tempralm'] as const).map((strategy) => ({
          name: `${strategy}/two-lists`,
          strategy,
          fusion: 'rrf' as const,
          recency: false,
          lexicalWords: DEFAULT_LEXICAL_WORDS,
          answerSentences: false,
        })),
        // The lexical search looking for the question's words chosen the other way (`lexicalWords`), on the strategies held to the targets.
        ...(['temporal', 'generic', 'tempralm'] as const).map((strategy) => ({
          name: `${strategy}/${OTHER_LEXICAL_WORDS}-words`,
          strategy,
          fusion: 'rrf' as const,
          recency: false,
          lexicalWords: OTHER_LEXICAL_WORDS,
          answerSentences: true,
        })),
        {
          name: `recency/${OTHER_LEXICAL_WORDS}-words`,
          strategy: 'generic' as const,
          fusion: 'rrf' as const,
          recency: true,
          lexicalWords: OTHER_LEXICAL_WORDS,
          answerSentences: true,
        },
      ];
      type Product = (typeof product)[number];
      const request = (contender: Product, q: Query): SearchRequest => {
        // As the API reads a request, so every default is the product's.
        const parsed = parseSearchRequest(
          {
            q: q.text,
            date: new Date(q.tq).toISOString(),
            k: K,
            store: STORE,
            strategy: contender.strategy === 'multihop' ? 'generic' : contender.strategy,
            hops: contender.strategy === 'multihop' ? 2 : 1,
            fusion: contender.fusion,
            answer_sentences: contender.answerSentences,
          },
          q.tq,
        );
        if (!parsed.ok) throw new Error(parsed.problems.join('; '));
        const depth = 'depth' in contender ? contender.depth : undefined;
        const worded = { ...parsed.request, lexicalWords: contender.lexicalWords };
        const asked = depth === undefined ? worded : { ...worded, depth };
        return contender.recency ? { ...asked, recency: true, explicit: { ...asked.explicit, recency: true } } : asked;
      };
      const steps = new Map<string, Map<string, number[]>>();
      const calls = new Map<string, { knn: number[]; bm25: number[] }>();
      const ask = async (name: string, q: Query, record: boolean): Promise<void> => {
        const raw = raws[name];
        if (raw !== undefined) {
          const response = await raw(q);
          if (record) rawTook.set(name, [...(rawTook.get(name) ?? []), response.took]);
          return;
        }
        const contender = product.find((p) => p.name === name)!;
        current = q.vector;
        datastore.calls = [];
        const result = await retriever.search(request(contender, q));
        if (!record) return;
        const mine = steps.get(name) ?? new Map<string, number[]>();
        steps.set(name, mine);
        for (const [step, ms] of Object.entries(result.timings_ms)) mine.set(step, [...(mine.get(step) ?? []), ms]);
        const made = calls.get(name) ?? { knn: [], bm25: [] };
        calls.set(name, made);
        for (const call of datastore.calls) made[call.search].push(call.ms);
      };

      const contenders = [...Object.keys(raws), ...product.map((p) => p.name)];
      // Warm-up: the first searches load the graphs and the postings (every way of asking).
      for (const q of queries.slice(0, WARM_UP)) for (const c of contenders) await ask(c, q, false);
      // Interleaved: each query is asked by every contender back to back, in an order that rotates,
      // so caches and background work (merges, GC, other people's jobs) fall on all of them alike.
      const loadAtTiming = load();
      const timingStarted = performance.now();
      const times = new Map<string, number[]>(contenders.map((c) => [c, []]));
      const slowest = new Map<string, { ms: number; q: Query }>();
      const timed = queries.slice(WARM_UP);
      let hotThreads: Promise<string> | undefined;
      for (const [i, q] of timed.entries()) {
        if (args['hot-threads'] && i === Math.floor(timed.length / 2)) {
          hotThreads = es.nodes.hotThreads({ threads: 5, interval: '500ms', snapshots: 10 }) as Promise<string>;
        }
        for (let j = 0; j < contenders.length; j++) {
          const contender = contenders[(i + j) % contenders.length]!;
          const started = performance.now();
          await ask(contender, q, true);
          const ms = performance.now() - started;
          times.get(contender)!.push(ms);
          if (ms > (slowest.get(contender)?.ms ?? -1)) slowest.set(contender, { ms, q });
        }
      }
      const timingSeconds = (performance.now() - timingStarted) / 1000;
      const loadAfterTiming = load();

      const sorted = (contender: string): number[] => [...times.get(contender)!].sort((x, y) => x - y);
      const rawP95 = percentile(sorted('raw-knn'), 95);
      const p95Of = (contender: string): number => percentile(sorted(contender), 95);
      for (const contender of contenders) {
        const mine = sorted(contender);
        const p95 = percentile(mine, 95);
        const spec = product.find((p) => p.name === contender);
        const heldToTargets = spec !== undefined && spec.fusion === 'rrf' && spec.strategy !== 'multihop';
        const denseTwin =
          spec !== undefined && spec.fusion === 'rrf' && !spec.recency ? `${spec.strategy}/dense` : undefined;
        const took = rawTook.get(contender);
        const made = calls.get(contender);
        runs.push({
          n,
          contender,
          strategy: spec?.strategy ?? contender,
          fusion: spec?.fusion ?? 'raw',
          p50_ms: percentile(mine, 50),
          p95_ms: p95,
          p99_ms: percentile(mine, 99),
          raw_p95_ms: rawP95,
          ratio: Math.round((p95 / rawP95) * 100) / 100,
          ...(denseTwin === undefined ? {} : { vs_dense: Math.round((p95 / p95Of(denseTwin)) * 100) / 100 }),
          ...(spec?.fusion === 'rrf' ? { vs_raw_hybrid: Math.round((p95 / p95Of('raw-knn+bm25')) * 100) / 100 } : {}),
          ...(heldToTargets ? { meets_targets: p95 <= TARGET_P95_MS && p95 / rawP95 <= TARGET_RATIO } : {}),
          ...(took === undefined ? {} : { took_ms: spread(took) }),
          ...(steps.has(contender)
            ? {
                steps_ms: Object.fromEntries(
                  [...steps.get(contender)!].map(([step, values]) => {
                    const { p50, p95: stepP95 } = spread(values);
                    return [step, { p50, p95: stepP95 }];
                  }),
                ),
              }
            : {}),
          ...(made === undefined
            ? {}
            : {
                ...(made.knn.length > 0 ? { knn_call_ms: spread(made.knn) } : {}),
                ...(made.bm25.length > 0 ? { bm25_call_ms: spread(made.bm25) } : {}),
              }),
        });
      }
      // Where the slowest raw queries spend their time, by Elasticsearch's own profile.
      const profiles: Record<string, unknown> = {};
      for (const contender of ['raw-bm25', 'raw-knn'] as const) {
        const worst = slowest.get(contender)!;
        const response = await (contender === 'raw-knn' ? rawKnn(worst.q, true) : rawBm25(worst.q, true));
        profiles[contender] = {
          question: worst.q.text,
          timed_ms: Math.round(worst.ms * 100) / 100,
          ...summariseProfile(response),
        };
      }
      let hotThreadsFile: string | undefined;
      if (hotThreads) {
        hotThreadsFile = new URL(`./results/query-hot-threads-${n}.txt`, import.meta.url).pathname;
        writeFileSync(hotThreadsFile, await hotThreads);
      }
      detail.push({
        n,
        index_seconds: Math.round(indexSeconds),
        months: searched.length,
        background_merges_seconds: Math.round(settleSeconds),
        segments_as_filled: filled.reduce((sum, month) => sum + month.segments, 0),
        finished_months_merged: args['merge-finished'],
        merge_seconds: Math.round(mergeSeconds),
        segments_searched: searched.reduce((sum, month) => sum + month.segments, 0),
        segments_in_newest_month: searched.at(-1)?.segments ?? 0,
        questions_redrawn_for_time_words: timeWorded,
        timing_seconds: Math.round(timingSeconds),
        load_average: { at_fill: loadAtFill, at_timing: loadAtTiming, after_timing: loadAfterTiming },
        profiles,
        ...(hotThreadsFile === undefined ? {} : { hot_threads: hotThreadsFile }),
      });
      process.stderr.write(
        `  n=${n}: filled in ${Math.round(indexSeconds)} s, merges settled in ${Math.round(settleSeconds)} s, ` +
          `timed in ${Math.round(timingSeconds)} s (load ${loadAtTiming.join(' ')} → ${loadAfterTiming.join(' ')})\n`,
      );
    } finally {
      // Also after a failure: a million leftover vectors would slow every later run.
      await dropDatastore(prefix);
      active = undefined;
    }
  }
} finally {
  await es.close();
  await infra.release();
}

const path = writeBenchResults('query', {
  store: STORE,
  queries: QUERIES,
  k: K,
  dims: DIMS,
  elasticsearch_java: elasticsearchJava,
  runs,
  sizes: detail,
});
console.log(JSON.stringify({ runs, sizes: detail }, null, 2));
console.log('');
console.log('n          contender          p50 ms  p95 ms  p99 ms  ratio  vs dense  vs hybrid  targets');
for (const r of runs) {
  console.log(
    `${String(r.n).padEnd(10)} ${r.contender.padEnd(18)} ${String(r.p50_ms).padStart(7)} ${String(r.p95_ms).padStart(7)} ` +
      `${String(r.p99_ms).padStart(7)} ${String(r.ratio).padStart(6)} ${String(r.vs_dense ?? '').padStart(9)} ` +
      `${String(r.vs_raw_hybrid ?? '').padStart(10)}  ` +
      (r.meets_targets === undefined ? '' : r.meets_targets ? 'met' : 'NOT met'),
  );
}
console.log(`results: ${path}`);

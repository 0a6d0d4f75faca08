/**
 * `npm run bench -- query [--sizes 10000,100000,1000000] [--queries 200] [--k 10] [--merge-finished]`: retrieval latency per
 * strategy on real Elasticsearch, next to the raw Elasticsearch kNN + date filter on the same index
 * in the same run (the ceiling).
 *
 * Each size gets a fresh `neon-interactions` datastore (the product's own template: 384-dim cosine
 * int8 HNSW) holding n synthetic interactions: seeded random unit vectors, times spread over a year.
 * Queries are random unit vectors at random query times within that year; the query embedder returns
 * them as they are, so what is timed is retrieval (filters, one or two kNN searches, reranking, the
 * citation lookup), not the model. Latencies are wall-clock per request, one request at a time; the
 * raw query and the strategies are interleaved query by query, in rotating order.
 *
 * Once filled, Elasticsearch's own background merges are let finish (a query racing a merge for the
 * two cores measures the merge). With `--merge-finished`, every month but the newest is then merged
 * into one segment, as the product's maintenance does once a month is over and quiet
 * (streams/month-compactor.ts); rebuilding one month's HNSW graph (~83k vectors at 1M) took a
 * quarter of an hour here, so it is not the default.
 *
 * Contenders: the raw query, `temporal`, `generic`, `tempralm`, and `multihop` (generic with
 * `hops=2`: two more filtered kNN searches, one per bridge entity).
 *
 * Writes `bench/results/query.json` as `{"runs": [{n, strategy, p50_ms, p95_ms, p99_ms, raw_p95_ms, ratio}]}`.
 */
import { parseArgs } from 'node:util';
import type { Client } from '@elastic/elasticsearch';
import type { Embedder } from '../processors/embed/embedder.js';
import { interactionDocument } from '../processors/index-documents.js';
import { DAY_MS } from '../processors/query/rank-candidates.js';
import type { SearchRequest } from '../processors/query/search-request.js';
import { datastoreNames, monthlyIndex } from '../schemas/elasticsearch/datastore-templates.js';
import { ensureDatastores, monthlyIndices } from '../streams/datastores.js';
import { createElasticsearchClient } from '../streams/elasticsearch-client.js';
import { Retriever } from '../service/retrieve.js';
import { ElasticsearchDatastore } from '../streams/elasticsearch-datastore.js';
import { acquireTestInfrastructure } from '../test/harness/acquire-infrastructure.js';
import { writeBenchResults } from './results.js';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    queries: { type: 'string', default: '200' },
    k: { type: 'string', default: '10' },
    'merge-finished': { type: 'boolean', default: false },
  },
});
const SIZES = args.sizes.split(',').map(Number);
const QUERIES = Number(args.queries);
const K = Number(args.k);
const DIMS = 384;
const START = Date.UTC(2024, 0, 1);
const SPAN_DAYS = 365;

let seed = 7;
function random(): number {
  // xorshift32: fast, seeded, good enough for vectors.
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

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, index)]! * 100) / 100;
}

async function fill(es: Client, prefix: string, n: number): Promise<void> {
  const names = datastoreNames('interactions', prefix);
  const batch = 2000;
  for (let from = 0; from < n; from += batch) {
    const operations: unknown[] = [];
    for (let i = from; i < Math.min(n, from + batch); i++) {
      const t = START + Math.floor(random() * SPAN_DAYS * DAY_MS);
      const entity = `e-entity-${Math.floor(random() ** 3 * 5000)}`;
      const document = interactionDocument(
        {
          id: `i${i}`,
          t,
          subject_id: entity,
          subject_name: entity,
          object_id: null,
          object_name: null,
          text: `interaction ${i} of ${entity}`,
          variant: 'M1',
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
      operations.push({ index: { _index: monthlyIndex(names, t), _id: `i${i}` } }, document);
    }
    const response = await es.bulk({ operations: operations as never[] });
    if (response.errors) throw new Error('bulk indexing failed');
    if ((from / batch) % 25 === 0) process.stderr.write(`  indexed ${Math.min(n, from + batch)} / ${n}\n`);
  }
  await es.indices.refresh({ index: `${names.indexPrefix}*` });
}

/**
 * Waits until no merge is running on the indices (three quiet polls in a row, at most 20 minutes);
 * returns how long that took.
 */
async function backgroundMergesDone(es: Client, indices: string): Promise<number> {
  const started = performance.now();
  let quiet = 0;
  while (quiet < 3 && performance.now() - started < 20 * 60_000) {
    const stats = await es.indices.stats({ index: indices, metric: ['merge'] });
    quiet = (stats._all.primaries?.merges?.current ?? 0) === 0 ? quiet + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return (performance.now() - started) / 1000;
}

const infra = await acquireTestInfrastructure(process.env, (line) => console.error(line));
const baseEs = createElasticsearchClient({ url: infra.elasticsearchUrl });
const es =
  Object.keys(infra.elasticsearchHeaders).length === 0 ? baseEs : baseEs.child({ headers: infra.elasticsearchHeaders });
const runs: {
  n: number;
  strategy: string;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  raw_p95_ms: number;
  ratio: number;
}[] = [];
const detail: Record<string, unknown>[] = [];
try {
  for (const n of SIZES) {
    const prefix = `bench-query-${n}-${Date.now().toString(36)}`;
    await ensureDatastores(es, { model: 'bench-random-384', dimensions: DIMS }, { prefix });
    try {
      const indexStarted = performance.now();
      await fill(es, prefix, n);
      const indexSeconds = (performance.now() - indexStarted) / 1000;
      const datastore = new ElasticsearchDatastore({ es, prefix });
      const settleSeconds = await backgroundMergesDone(es, `${datastoreNames('interactions', prefix).indexPrefix}*`);
      const filled = await datastore.monthStats('interactions');
      let mergeSeconds = 0;
      if (args['merge-finished']) {
        // What the product's maintenance does once each month is over and quiet; the newest month is
        // the one being written to, and stays as the fill left it.
        const finished = filled.slice(0, -1).map((month) => month.index);
        const mergeStarted = performance.now();
        for (const index of finished) await datastore.compact(index);
        for (;;) {
          const months = await datastore.monthStats('interactions');
          if (months.every((month) => !finished.includes(month.index) || month.segments === 1)) break;
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
        mergeSeconds = (performance.now() - mergeStarted) / 1000;
      }
      const searched = await datastore.monthStats('interactions');
      let current: Float32Array = new Float32Array(DIMS);
      const embedder: Embedder = {
        model: 'bench-random-384',
        dimensions: DIMS,
        embed: (texts) => Promise.resolve(texts.map(() => current)),
        close: () => Promise.resolve(),
      };
      const retriever = new Retriever({ datastore, embedder });
      const queries = Array.from({ length: QUERIES }, () => ({
        vector: unitVector(),
        tq: START + Math.floor((0.1 + random() * 0.9) * SPAN_DAYS * DAY_MS),
      }));
      const alias = datastoreNames('interactions', prefix).alias;
      const raw = async (vector: Float32Array, tq: number): Promise<void> => {
        await es.search({
          index: alias,
          knn: {
            field: 'embedding',
            query_vector: Array.from(vector),
            k: K,
            num_candidates: Math.max(100, K * 4),
            filter: [{ range: { published_at: { lte: tq } } }],
          },
          size: K,
          _source: ['id', 'text', 'published_at'],
        });
      };
      // `multihop` is generic with a second hop along the entity graph: one kNN search more per
      // bridge entity (two), so it is reported beside the strategies, not held to their ratio.
      const strategies = ['temporal', 'generic', 'tempralm', 'multihop'] as const;
      type Contender = (typeof strategies)[number];
      const search = (strategy: Contender, q: (typeof queries)[number]): Promise<unknown> => {
        current = q.vector;
        const request: SearchRequest = {
          q: 'benchmark query',
          tq: q.tq,
          k: K,
          strategy: strategy === 'multihop' ? 'generic' : strategy,
          hops: strategy === 'multihop' ? 2 : 1,
          store: 'interactions',
          constraint: 'none',
          constraintAt: q.tq,
          windowDays: 7,
          alpha: 1,
          includeFuture: false,
        };
        return retriever.search(request);
      };
      // Warm-up: the first searches load the graph (both ways of asking, so neither starts cold).
      for (const q of queries.slice(0, 20)) {
        await raw(q.vector, q.tq);
        for (const strategy of strategies) await search(strategy, q);
      }
      // Interleaved: each query is asked raw and by every strategy back to back, in an order that
      // rotates, so caches and background work (merges, GC) fall on all contenders alike.
      const contenders = ['raw', ...strategies] as const;
      const times = new Map<string, number[]>(contenders.map((c) => [c, []]));
      for (const [i, q] of queries.entries()) {
        for (let j = 0; j < contenders.length; j++) {
          const contender = contenders[(i + j) % contenders.length]!;
          const started = performance.now();
          await (contender === 'raw' ? raw(q.vector, q.tq) : search(contender, q));
          times.get(contender)!.push(performance.now() - started);
        }
      }
      const sorted = (contender: string): number[] => [...times.get(contender)!].sort((x, y) => x - y);
      const rawTimes = sorted('raw');
      const rawP95 = percentile(rawTimes, 95);
      for (const strategy of strategies) {
        const mine = sorted(strategy);
        const p95 = percentile(mine, 95);
        runs.push({
          n,
          strategy,
          p50_ms: percentile(mine, 50),
          p95_ms: p95,
          p99_ms: percentile(mine, 99),
          raw_p95_ms: rawP95,
          ratio: Math.round((p95 / rawP95) * 100) / 100,
        });
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
        raw_p50_ms: percentile(rawTimes, 50),
        raw_p99_ms: percentile(rawTimes, 99),
      });
    } finally {
      // Also after a failure: a million leftover vectors would slow every later run.
      for (const index of await monthlyIndices(es, 'interactions', prefix)) await es.indices.delete({ index });
      for (const kind of ['interactions', 'chunks'] as const) {
        await es.indices.deleteIndexTemplate({ name: datastoreNames(kind, prefix).template }, { ignore: [404] });
      }
    }
  }
} finally {
  await es.close();
  await infra.release();
}

const path = writeBenchResults('query', { queries: QUERIES, k: K, dims: DIMS, runs, sizes: detail });
console.log(JSON.stringify({ runs, sizes: detail }, null, 2));
console.log('');
console.log('n          strategy   p50 ms  p95 ms  p99 ms  raw p95 ms  ratio');
for (const r of runs) {
  console.log(
    `${String(r.n).padEnd(10)} ${r.strategy.padEnd(9)} ${String(r.p50_ms).padStart(7)} ${String(r.p95_ms).padStart(7)} ` +
      `${String(r.p99_ms).padStart(7)} ${String(r.raw_p95_ms).padStart(11)} ${String(r.ratio).padStart(6)}`,
  );
}
console.log(`results: ${path}`);

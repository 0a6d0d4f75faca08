import type { Client, estypes } from '@elastic/elasticsearch';
import {
  datastoreNames,
  monthIndexExpressions,
  monthOfIndex,
  type DatastoreKind,
  type EmbeddingSpec,
} from './datastore-templates.js';
import {
  DatastoreUnavailable,
  hasTimeCondition,
  monthBounds,
  RetrievalTimeout,
  timeIntervals,
  type Datastore,
  type DatastoreWriterOptions,
  type DocumentFilter,
  type HistogramBucket,
  type HistogramRequest,
  LEXICAL_FIELDS,
  type LexicalRequest,
  type ListRequest,
  type MonthStats,
  type NearestRequest,
  type ScoredDocument,
  type StoredDocument,
} from '../datastore/datastore.js';
import { dropMonthsBefore, ensureDatastores, monthlyIndices } from './datastores.js';
import { ElasticsearchBulkSink, type BulkSinkHooks, type IndexRequest } from './elasticsearch-bulk-sink.js';
import type { Sink } from '../runtime/sink.js';

const SOURCE_FIELDS = [
  'id',
  'kind',
  'text',
  'title',
  'entity_names',
  'published_at',
  'reported_at',
  'provenance',
  'urls',
  'entity_ids',
  'subject_id',
  'subject_name',
  'object_id',
  'object_name',
  'chunk_ids',
  'article_ids',
  'article_id',
  'article_version',
  'corrects_urls',
  'correction',
];

type Time = number | string;
type Source = Omit<StoredDocument, 'published_at' | 'reported_at' | 'provenance'> & {
  published_at: Time;
  reported_at?: Time[];
  provenance?: { article_id: string; url: string; published_at: Time }[];
};

/** Dates come back as they were written (ms); a string is parsed in case another writer sent one. */
function ms(time: Time): number {
  return typeof time === 'number' ? time : Date.parse(time);
}

function stored(source: Source): StoredDocument {
  const { reported_at, provenance, ...rest } = source;
  return {
    ...rest,
    published_at: ms(source.published_at),
    ...(Array.isArray(reported_at) ? { reported_at: reported_at.map(ms).sort((a, b) => a - b) } : {}),
    ...(Array.isArray(provenance)
      ? {
          provenance: provenance.map((p) => ({
            article_id: p.article_id,
            url: p.url,
            published_at: ms(p.published_at),
          })),
        }
      : {}),
  };
}

/**
 * The filter's time conditions as one clause: some report time lies in one of the allowed intervals.
 * A range on the `reported_at` array matches when any of its values does; `published_at` (always one
 * of them) is asked too, so documents indexed before `reported_at` existed are still found by it.
 * `first` (histograms) looks at the first report alone. Undefined when the filter says nothing of time.
 */
function timeClause(filter: DocumentFilter, on: 'reports' | 'first'): estypes.QueryDslQueryContainer | undefined {
  if (!hasTimeCondition(filter)) return undefined;
  const range = (field: string, interval: { from: number; to: number }): estypes.QueryDslQueryContainer => ({
    range: {
      [field]: {
        ...(Number.isFinite(interval.from) ? { gte: interval.from } : {}),
        ...(Number.isFinite(interval.to) ? { lte: interval.to } : {}),
      },
    },
  });
  const fields = on === 'reports' ? ['reported_at', 'published_at'] : ['published_at'];
  const should = timeIntervals(filter).flatMap((interval) => fields.map((field) => range(field, interval)));
  // No interval at all: the bounds contradict each other.
  return should.length === 0 ? { match_none: {} } : { bool: { should, minimum_should_match: 1 } };
}

/**
 * The filter as Elasticsearch query clauses (all in filter context: no scoring). Time conditions
 * test each report time as a whole (see `timeIntervals`), by default over all of a document's report
 * times.
 */
export function filterClauses(
  filter: DocumentFilter,
  on: 'reports' | 'first' = 'reports',
): estypes.QueryDslQueryContainer[] {
  const clauses: estypes.QueryDslQueryContainer[] = [];
  const time = timeClause(filter, on);
  if (time !== undefined) clauses.push(time);
  if (filter.entityId !== undefined) clauses.push({ term: { entity_ids: filter.entityId } });
  if (filter.ids !== undefined) clauses.push({ terms: { id: [...filter.ids] } });
  if (filter.articleIds !== undefined) clauses.push({ terms: { article_id: [...filter.articleIds] } });
  if (filter.correctsUrls !== undefined) clauses.push({ terms: { corrects_urls: [...filter.correctsUrls] } });
  if (filter.chunkIds !== undefined) clauses.push({ terms: { chunk_ids: [...filter.chunkIds] } });
  // Documents without `article_version` are version 1: they pass a bound of 1 or less only.
  if (filter.minVersion !== undefined && filter.minVersion > 1) {
    clauses.push({ range: { article_version: { gte: filter.minVersion } } });
  }
  return clauses;
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { meta?: { statusCode?: unknown } } | undefined)?.meta?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** Client failures as the datastore's own errors: a timeout, or the store being away. Others pass. */
function translated(error: unknown, timeoutMs: number): unknown {
  if (!(error instanceof Error)) return error;
  if (error.name === 'TimeoutError') return new RetrievalTimeout(`search took longer than ${timeoutMs} ms`);
  const status = statusOf(error);
  if (
    error.name === 'ConnectionError' ||
    error.name === 'NoLivingConnectionsError' ||
    (status !== undefined && status >= 500)
  ) {
    return new DatastoreUnavailable(`Elasticsearch did not answer: ${error.message.split('\n', 1)[0] ?? ''}`, {
      cause: error,
    });
  }
  return error;
}

export interface ElasticsearchDatastoreOptions {
  es: Client;
  /** Index prefix; default `neon`. */
  prefix?: string;
  /** For people: where it is (the URL). */
  location?: string;
  shards?: number;
  replicas?: number;
  /** Bulk request hooks (metrics) for the writers. */
  bulkHooks?: BulkSinkHooks;
}

/**
 * The datastores on Elasticsearch: aliases over monthly indices from index templates (see
 * `streams/elasticsearch/datastore-templates.ts`), filtered kNN on an int8 HNSW graph, `_bulk` writes
 * whose every item is classified.
 */
export class ElasticsearchDatastore implements Datastore {
  readonly kind = 'elasticsearch';
  readonly prefix: string;
  readonly location: string;
  readonly es: Client;

  constructor(private readonly options: ElasticsearchDatastoreOptions) {
    this.es = options.es;
    this.prefix = options.prefix ?? 'neon';
    this.location = options.location ?? 'Elasticsearch';
  }

  private alias(kind: DatastoreKind): string {
    return datastoreNames(kind, this.prefix).alias;
  }

  /**
   * What a filtered search names: only the months the filter's time bounds reach, where they are
   * bounded, reaching back far enough for documents first reported earlier (see `monthBounds`).
   */
  private targets(kinds: readonly DatastoreKind[], filter: DocumentFilter): string {
    const { from, to } = monthBounds(filter);
    return kinds
      .flatMap((kind) => monthIndexExpressions(datastoreNames(kind, this.prefix), from, to) ?? [this.alias(kind)])
      .join(',');
  }

  async prepare(embedding: EmbeddingSpec): Promise<void> {
    await ensureDatastores(this.es, embedding, {
      prefix: this.prefix,
      ...(this.options.shards === undefined ? {} : { shards: this.options.shards }),
      ...(this.options.replicas === undefined ? {} : { replicas: this.options.replicas }),
    });
  }

  /**
   * From the mappings of the datastore's indices (the template writes the model into each one's
   * `_meta`), the newest month's: what the stored vectors were made with. Reading mappings needs only
   * `view_index_metadata` on the datastore, which the query service's API key has; reading the
   * template would need a cluster privilege. Undefined while the datastore has no index yet.
   */
  async embeddingModel(kind: DatastoreKind): Promise<string | undefined> {
    const found: estypes.IndicesGetMappingResponse = await this.es.indices
      .getMapping({ index: this.alias(kind), ignore_unavailable: true, allow_no_indices: true })
      .catch((error: unknown) => {
        if (statusOf(error) === 404) return {};
        throw translated(error, 0);
      });
    const newestFirst = Object.keys(found).sort().reverse();
    for (const index of newestFirst) {
      const model = (found[index]?.mappings._meta as { embedding_model?: unknown } | undefined)?.embedding_model;
      if (typeof model === 'string') return model;
    }
    return undefined;
  }

  /**
   * One search over the months a filter can reach, bounded in time, with the client's failures as the
   * datastore's own errors. Every read below goes through here.
   */
  private async search<T>(
    kinds: readonly DatastoreKind[],
    filter: DocumentFilter,
    timeoutMs: number,
    body: Omit<estypes.SearchRequest, 'index' | 'timeout' | 'ignore_unavailable' | 'allow_no_indices'>,
  ): Promise<estypes.SearchResponse<T>> {
    return this.es
      .search<T>(
        {
          index: this.targets(kinds, filter),
          ...body,
          ignore_unavailable: true,
          allow_no_indices: true,
          timeout: `${timeoutMs}ms`,
        },
        { requestTimeout: timeoutMs },
      )
      .catch((error: unknown) => {
        throw translated(error, timeoutMs);
      });
  }

  private static scored(response: estypes.SearchResponse<Source>): ScoredDocument[] {
    return response.hits.hits.flatMap((hit) =>
      hit._source ? [{ document: stored(hit._source), score: hit._score ?? 0 }] : [],
    );
  }

  async nearest(request: NearestRequest): Promise<ScoredDocument[]> {
    const filter = filterClauses(request.filter);
    const response = await this.search<Source>(request.kinds, request.filter, request.timeoutMs, {
      knn: {
        field: 'embedding',
        query_vector: [...request.vector],
        k: request.k,
        // The graph is explored num_candidates deep whatever k is: returning more of what was
        // explored (TempRALM's over-retrieval) costs little, exploring deeper costs a lot.
        num_candidates: Math.min(10_000, Math.max(100, request.k * 2)),
        ...(filter.length > 0 ? { filter } : {}),
      },
      size: request.k,
      _source: SOURCE_FIELDS,
    });
    return ElasticsearchDatastore.scored(response);
  }

  /**
   * BM25 over the text, headline and entity names (`most_fields`: each field's score, weighted, summed),
   * in query context, with the filter in filter context so it does not score.
   */
  async lexical(request: LexicalRequest): Promise<ScoredDocument[]> {
    if (request.text.trim() === '') return [];
    const response = await this.search<Source>(request.kinds, request.filter, request.timeoutMs, {
      query: {
        bool: {
          must: [
            {
              multi_match: {
                query: request.text,
                type: 'most_fields',
                fields: Object.entries(LEXICAL_FIELDS).map(([field, weight]) => `${field}^${weight}`),
              },
            },
          ],
          filter: filterClauses(request.filter),
        },
      },
      size: request.k,
      // Nothing reads the total; counting it keeps Lucene from skipping the blocks of a frequent
      // word's postings that cannot reach the top k.
      track_total_hits: false,
      _source: SOURCE_FIELDS,
    });
    return ElasticsearchDatastore.scored(response);
  }

  async list(request: ListRequest): Promise<StoredDocument[]> {
    const response = await this.search<Source>([request.kind], request.filter, request.timeoutMs, {
      query: { bool: { filter: filterClauses(request.filter) } },
      ...(request.order === 'none'
        ? {}
        : {
            sort: [
              { published_at: request.order === 'newest' ? ('desc' as const) : ('asc' as const) },
              { id: 'asc' as const },
            ],
          }),
      size: request.limit,
      _source: SOURCE_FIELDS,
    });
    return response.hits.hits.flatMap((hit) => (hit._source ? [stored(hit._source)] : []));
  }

  async histogram(request: HistogramRequest): Promise<HistogramBucket[]> {
    const response = await this.search<unknown>([request.kind], request.filter, request.timeoutMs, {
      size: 0,
      query: { bool: { filter: filterClauses(request.filter, 'first') } },
      aggs: {
        buckets: {
          date_histogram: { field: 'published_at', calendar_interval: request.granularity, min_doc_count: 1 },
        },
      },
    });
    const aggregation = response.aggregations?.buckets as { buckets: { key: number; doc_count: number }[] } | undefined;
    return (aggregation?.buckets ?? []).map((b) => ({ start: b.key, count: b.doc_count }));
  }

  async count(kind: DatastoreKind): Promise<number> {
    const response = await this.es
      .count({ index: this.alias(kind), ignore_unavailable: true, allow_no_indices: true })
      .catch((error: unknown) => {
        throw translated(error, 0);
      });
    return response.count;
  }

  writer(options: DatastoreWriterOptions): Sink<IndexRequest> {
    return new ElasticsearchBulkSink({
      stage: options.stage,
      client: this.es,
      ...(options.maxBatchDocs === undefined ? {} : { maxBatchDocs: options.maxBatchDocs }),
      ...(options.lingerMs === undefined ? {} : { lingerMs: options.lingerMs }),
      ...(options.maxQueuedDocs === undefined ? {} : { maxQueuedDocs: options.maxQueuedDocs }),
      ...(options.refresh === undefined ? {} : { refresh: options.refresh }),
      ...(this.options.bulkHooks ? { metrics: this.options.bulkHooks } : {}),
    });
  }

  months(kind: DatastoreKind): Promise<string[]> {
    return monthlyIndices(this.es, kind, this.prefix);
  }

  async monthStats(kind: DatastoreKind): Promise<MonthStats[]> {
    const names = datastoreNames(kind, this.prefix);
    const response = await this.es.indices.stats({ index: `${names.indexPrefix}*`, metric: ['docs', 'segments'] });
    return Object.entries(response.indices ?? {})
      .flatMap(([index, stats]) => {
        const month = monthOfIndex(names, index);
        if (month === undefined) return [];
        return [
          { index, month, docs: stats.primaries?.docs?.count ?? 0, segments: stats.primaries?.segments?.count ?? 0 },
        ];
      })
      .sort((a, b) => a.month - b.month);
  }

  async compact(index: string): Promise<void> {
    // Not waited for: a merge of a large month outlasts any HTTP timeout; the store runs one at a time.
    await this.es.indices.forcemerge({ index, max_num_segments: 1, wait_for_completion: false });
  }

  dropMonthsBefore(kind: DatastoreKind, keepFrom: number): Promise<string[]> {
    return dropMonthsBefore(this.es, kind, keepFrom, this.prefix);
  }

  async destroy(): Promise<void> {
    for (const kind of ['chunks', 'interactions'] as const) {
      for (const index of await this.months(kind)) await this.es.indices.delete({ index }, { ignore: [404] });
      await this.es.indices.deleteIndexTemplate(
        { name: datastoreNames(kind, this.prefix).template },
        { ignore: [404] },
      );
    }
  }

  async close(): Promise<void> {
    await this.es.close();
  }
}

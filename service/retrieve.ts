import type { Client, estypes } from '@elastic/elasticsearch';
import type { Embedder } from '../processors/embed/embedder.js';
import { publishedDay } from '../processors/index-documents.js';
import {
  DAY_MS,
  dayOf,
  rankGeneric,
  rankTempralm,
  rankTemporal,
  timeFilter,
  type Candidate,
  type Ranked,
} from '../processors/query/rank-candidates.js';
import { reformulate, type EntityLinker, type LinkedEntity } from '../processors/query/reformulate-query.js';
import type { SearchRequest, Store } from '../processors/query/search-request.js';
import { datastoreNames } from '../schemas/elasticsearch/datastore-templates.js';

/** One retrieved document, as every interface returns it. */
export interface RetrievedItem {
  id: string;
  kind: 'interaction' | 'chunk';
  text: string;
  published_at: string;
  url: string | null;
  score: number;
  semantic_score: number;
  temporal_score?: number;
  day_distance?: number;
  entity_ids: string[];
  subject?: { id: string; name: string };
  object?: { id: string; name: string } | null;
  chunk_ids: string[];
  article_ids: string[];
}

export interface RetrievalResult {
  reformulated: string;
  entities: LinkedEntity[];
  items: RetrievedItem[];
  timings_ms: Record<string, number>;
}

/** The datastore was built with another embedding model: its vectors and the query's do not compare. */
export class EmbeddingModelMismatch extends Error {
  override readonly name = 'EmbeddingModelMismatch';
}

export class RetrievalTimeout extends Error {
  override readonly name = 'RetrievalTimeout';
}

interface Source {
  id: string;
  kind: 'interaction' | 'chunk';
  text: string;
  published_at: number | string;
  urls?: string[];
  entity_ids?: string[];
  subject_id?: string;
  subject_name?: string;
  object_id?: string | null;
  object_name?: string | null;
  chunk_ids?: string[];
  article_ids?: string[];
}

interface Hit extends Candidate {
  source: Source;
}

export interface RetrieverOptions {
  es: Client;
  embedder: Embedder;
  /** Index prefix (`<prefix>-chunks`, `<prefix>-interactions`); default `neon`. */
  prefix?: string;
  linker?: EntityLinker;
  /** Per Elasticsearch call. Default 5 s. */
  timeoutMs?: number;
}

const SOURCE_FIELDS = [
  'id',
  'kind',
  'text',
  'published_at',
  'urls',
  'entity_ids',
  'subject_id',
  'subject_name',
  'object_id',
  'object_name',
  'chunk_ids',
  'article_ids',
];

function toMillis(value: number | string): number {
  return typeof value === 'number' ? value : Date.parse(value);
}

/**
 * Runs a retrieval request against the datastores: link and reformulate (NEON §2.3), embed q′, fetch
 * candidates with one filtered kNN search (two for temporal widening), rank them by the strategy,
 * and give interactions the URL of the article they came from.
 */
export class Retriever {
  private readonly timeoutMs: number;
  private modelChecked: Promise<void> | undefined;

  constructor(private readonly options: RetrieverOptions) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  /** Once: the datastores' templates must name the query embedder's model (when they exist). */
  private checkModel(): Promise<void> {
    this.modelChecked ??= (async () => {
      for (const kind of ['chunks', 'interactions'] as const) {
        const name = datastoreNames(kind, this.options.prefix).template;
        const found = await this.options.es.indices.getIndexTemplate({ name }).catch((error: unknown) => {
          if ((error as { meta?: { statusCode?: number } }).meta?.statusCode === 404) return undefined;
          throw error;
        });
        const model = (found?.index_templates[0]?.index_template._meta as { embedding_model?: string } | undefined)
          ?.embedding_model;
        if (model !== undefined && model !== this.options.embedder.model) {
          throw new EmbeddingModelMismatch(
            `${datastoreNames(kind, this.options.prefix).alias} was indexed with ${model}, but questions are ` +
              `embedded with ${this.options.embedder.model}: set NEON_EMBEDDER / NEON_EMBEDDINGS_MODEL to match`,
          );
        }
      }
    })();
    this.modelChecked.catch(() => {
      this.modelChecked = undefined;
    });
    return this.modelChecked;
  }

  private aliases(store: Store): string {
    const chunks = datastoreNames('chunks', this.options.prefix).alias;
    const interactions = datastoreNames('interactions', this.options.prefix).alias;
    return store === 'both' ? `${interactions},${chunks}` : store === 'chunks' ? chunks : interactions;
  }

  async search(request: SearchRequest): Promise<RetrievalResult> {
    await this.checkModel();
    const timings: Record<string, number> = {};
    const time = async <T>(step: string, run: () => Promise<T> | T): Promise<T> => {
      const started = performance.now();
      try {
        return await run();
      } finally {
        timings[step] = Math.round((performance.now() - started) * 100) / 100;
      }
    };
    const { text, entities } = await time('reformulate', () => reformulate(request.q, request.tq, this.options.linker));
    const [vector] = await time('embed', () => this.options.embedder.embed([text]));
    const queryVector = Array.from(vector!);
    const bounds = timeFilter(request);
    const range: estypes.QueryDslQueryContainer[] =
      bounds.from === undefined && bounds.to === undefined
        ? []
        : [
            {
              range: {
                published_at: {
                  ...(bounds.from === undefined ? {} : { gte: bounds.from }),
                  ...(bounds.to === undefined ? {} : { lte: bounds.to }),
                },
              },
            },
          ];
    const index = this.aliases(request.store);

    let ranked: Ranked<Hit>[];
    if (request.strategy === 'temporal') {
      const exactDay = publishedDay(request.tq);
      const exact = await time('retrieve', () =>
        this.knn(index, queryVector, request.k, [...range, { term: { published_day: exactDay } }]),
      );
      let pool = exact;
      if (exact.length < request.k && request.windowDays > 0) {
        const day = dayOf(request.tq);
        const ring: estypes.QueryDslQueryContainer = {
          bool: {
            filter: [
              {
                range: {
                  published_day: {
                    gte: publishedDay((day - request.windowDays) * DAY_MS),
                    lte: publishedDay((day + request.windowDays) * DAY_MS),
                  },
                },
              },
            ],
            must_not: [{ term: { published_day: exactDay } }],
          },
        };
        // Enough candidates that each ring can contribute its most similar documents.
        const want = Math.min(500, (request.k - exact.length) * (2 * request.windowDays + 1));
        const widened = await time('widen', () => this.knn(index, queryVector, want, [...range, ring]));
        pool = [...exact, ...widened];
      }
      ranked = await time('rerank', () => rankTemporal(pool, request.tq, request.k));
    } else {
      // TempRALM over-retrieves and reranks; generic takes the engine's top-k as they are.
      const want = request.strategy === 'tempralm' ? Math.min(500, Math.max(50, request.k * 5)) : request.k;
      const pool = await time('retrieve', () => this.knn(index, queryVector, want, range));
      ranked = await time('rerank', () =>
        request.strategy === 'tempralm'
          ? rankTempralm(pool, request.tq, request.k, request.alpha, request.includeFuture)
          : rankGeneric(pool, request.k),
      );
    }
    const urls = await time('cite', () => this.chunkUrls(ranked.map((r) => r.candidate.source)));
    return {
      reformulated: text,
      entities,
      items: ranked.map((r) => this.item(r, urls)),
      timings_ms: timings,
    };
  }

  /**
   * An entity's interactions (as subject or object) published as of `tq`, newest first — the
   * entity timeline. `before` pages further back.
   */
  async timeline(
    entityId: string,
    tq: number,
    limit: number,
    before?: number,
  ): Promise<{ items: RetrievedItem[]; timings_ms: Record<string, number> }> {
    const started = performance.now();
    const upTo = before === undefined ? tq : Math.min(tq, before - 1);
    const response = await this.options.es.search<Source>(
      {
        index: datastoreNames('interactions', this.options.prefix).alias,
        query: {
          bool: { filter: [{ term: { entity_ids: entityId } }, { range: { published_at: { lte: upTo } } }] },
        },
        sort: [{ published_at: 'desc' }, { id: 'asc' }],
        size: limit,
        _source: SOURCE_FIELDS,
        ignore_unavailable: true,
        allow_no_indices: true,
        timeout: `${this.timeoutMs}ms`,
      },
      { requestTimeout: this.timeoutMs },
    );
    const hits: Hit[] = response.hits.hits.flatMap((hit) =>
      hit._source
        ? [{ id: hit._source.id, score: 1, published_at: toMillis(hit._source.published_at), source: hit._source }]
        : [],
    );
    const urls = await this.chunkUrls(hits.map((h) => h.source));
    return {
      items: hits.map((candidate) => this.item({ candidate, score: 1, semantic: 1 }, urls)),
      timings_ms: { retrieve: Math.round((performance.now() - started) * 100) / 100 },
    };
  }

  private async knn(
    index: string,
    vector: number[],
    k: number,
    filter: estypes.QueryDslQueryContainer[],
  ): Promise<Hit[]> {
    const response = await this.options.es
      .search<Source>(
        {
          index,
          knn: {
            field: 'embedding',
            query_vector: vector,
            k,
            // The graph is explored num_candidates deep whatever k is: returning more of what was
            // explored (TempRALM's over-retrieval) costs little, exploring deeper costs a lot.
            num_candidates: Math.min(10_000, Math.max(100, k * 2)),
            ...(filter.length > 0 ? { filter } : {}),
          },
          size: k,
          _source: SOURCE_FIELDS,
          ignore_unavailable: true,
          allow_no_indices: true,
          timeout: `${this.timeoutMs}ms`,
        },
        { requestTimeout: this.timeoutMs },
      )
      .catch((error: unknown) => {
        if (error instanceof Error && error.name === 'TimeoutError') {
          throw new RetrievalTimeout(`search took longer than ${this.timeoutMs} ms`);
        }
        throw error;
      });
    return response.hits.hits.flatMap((hit) =>
      hit._source
        ? [
            {
              id: hit._source.id,
              score: hit._score ?? 0,
              published_at: toMillis(hit._source.published_at),
              source: hit._source,
            },
          ]
        : [],
    );
  }

  /** Chunk id → its article's URL, for the interactions among the results (tuple → chunk → article). */
  private async chunkUrls(sources: Source[]): Promise<Map<string, string>> {
    const chunkIds = [
      ...new Set(sources.filter((s) => s.kind === 'interaction').flatMap((s) => (s.chunk_ids ?? []).slice(0, 3))),
    ];
    const urls = new Map<string, string>();
    if (chunkIds.length === 0) return urls;
    const response = await this.options.es.search<Source>(
      {
        index: datastoreNames('chunks', this.options.prefix).alias,
        query: { terms: { id: chunkIds } },
        size: chunkIds.length,
        _source: ['id', 'urls'],
        ignore_unavailable: true,
        allow_no_indices: true,
      },
      { requestTimeout: this.timeoutMs },
    );
    for (const hit of response.hits.hits) {
      const url = hit._source?.urls?.[0];
      if (hit._source && url) urls.set(hit._source.id, url);
    }
    return urls;
  }

  private item(ranked: Ranked<Hit>, chunkUrls: Map<string, string>): RetrievedItem {
    const s = ranked.candidate.source;
    const url =
      s.kind === 'chunk'
        ? (s.urls?.[0] ?? null)
        : ((s.chunk_ids ?? []).map((id) => chunkUrls.get(id)).find((u) => u !== undefined) ?? null);
    return {
      id: s.id,
      kind: s.kind,
      text: s.text,
      published_at: new Date(ranked.candidate.published_at).toISOString(),
      url,
      score: ranked.score,
      semantic_score: ranked.semantic,
      ...(ranked.temporal === undefined ? {} : { temporal_score: ranked.temporal }),
      ...(ranked.dayDistance === undefined ? {} : { day_distance: ranked.dayDistance }),
      entity_ids: s.entity_ids ?? [],
      ...(s.kind === 'interaction'
        ? {
            subject: { id: s.subject_id ?? '', name: s.subject_name ?? '' },
            object: s.object_id ? { id: s.object_id, name: s.object_name ?? '' } : null,
          }
        : {}),
      chunk_ids: s.kind === 'chunk' ? [s.id] : (s.chunk_ids ?? []),
      article_ids: s.article_ids ?? [],
    };
  }
}

import MiniSearch from 'minisearch';
import { analyseWords } from '../../processors/query/analyse-words.js';
import {
  datastoreNames,
  datastoreTemplate,
  monthEnd,
  monthOfIndex,
  type DatastoreKind,
  type EmbeddingSpec,
} from '../elasticsearch/datastore-templates.js';
import {
  type Datastore,
  type DatastoreWriterOptions,
  monthBounds,
  reportTimes,
  timeIntervals,
  type TimeInterval,
  type DocumentFilter,
  type HistogramBucket,
  type HistogramRequest,
  type IndexRequest,
  BM25,
  LEXICAL_FIELDS,
  type LexicalRequest,
  type ListRequest,
  type MonthStats,
  type NearestRequest,
  type ScoredDocument,
  type StoredDocument,
} from '../datastore/datastore.js';
import { DatastoreMismatchError } from '../elasticsearch/datastores.js';
import type { Sink } from '../runtime/sink.js';
import { StageError } from '../runtime/stage-error.js';

const KINDS: readonly DatastoreKind[] = ['chunks', 'interactions'];
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

interface Entry {
  document: StoredDocument;
  /** Its report times, ascending (`reported_at`, or `published_at` for a document without it). */
  times: readonly number[];
  /** Unit length, so a dot product is the cosine. */
  vector: Float32Array;
}

interface Template {
  embedding: EmbeddingSpec;
  /** The fields the Elasticsearch mapping declares: anything else is refused, as `dynamic: strict` does. */
  fields: ReadonlySet<string>;
}

function unit(values: ArrayLike<number>): Float32Array {
  const vector = Float32Array.from(values);
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/**
 * A filter made ready for testing many entries: its time conditions as intervals (`timeIntervals`),
 * tested on every report time (Elasticsearch's range on an array field) or, for histograms, on the
 * first alone.
 */
interface Test {
  filter: DocumentFilter;
  intervals: readonly TimeInterval[];
  on: 'reports' | 'first';
  /** `filter.chunkIds` as a set: tested against every entry. */
  chunkIds: ReadonlySet<string> | undefined;
}

function test(filter: DocumentFilter, on: Test['on'] = 'reports'): Test {
  const chunkIds = filter.chunkIds === undefined ? undefined : new Set(filter.chunkIds);
  return { filter, intervals: timeIntervals(filter), on, chunkIds };
}

function passes(entry: Entry, { filter, intervals, on, chunkIds }: Test): boolean {
  const times = on === 'first' ? [entry.document.published_at] : entry.times;
  if (!times.some((t) => intervals.some((interval) => t >= interval.from && t <= interval.to))) return false;
  if (filter.entityId !== undefined && !(entry.document.entity_ids ?? []).includes(filter.entityId)) return false;
  if (filter.ids !== undefined && !filter.ids.includes(entry.document.id)) return false;
  if (filter.articleIds !== undefined) {
    const article = entry.document.article_id;
    if (article === undefined || !filter.articleIds.includes(article)) return false;
  }
  if (filter.correctsUrls !== undefined) {
    const named = entry.document.corrects_urls ?? [];
    if (!filter.correctsUrls.some((url) => named.includes(url))) return false;
  }
  if (chunkIds !== undefined && !(entry.document.chunk_ids ?? []).some((id) => chunkIds.has(id))) return false;
  if (filter.minVersion !== undefined && (entry.document.article_version ?? 1) < filter.minVersion) return false;
  return true;
}

type LexicalIndex = MiniSearch<StoredDocument>;

/** An inverted index over one monthly index's documents: BM25 (no BM25+ floor) over `LEXICAL_FIELDS`. */
function lexicalIndex(): LexicalIndex {
  return new MiniSearch<StoredDocument>({
    fields: Object.keys(LEXICAL_FIELDS),
    idField: 'id',
    extractField: (document, field) => {
      const value = (document as unknown as Record<string, unknown>)[field];
      return Array.isArray(value) ? value.join(' ') : typeof value === 'string' ? value : '';
    },
    tokenize: analyseWords,
    processTerm: (term) => term,
    searchOptions: {
      boost: { ...LEXICAL_FIELDS },
      combineWith: 'OR',
      prefix: false,
      fuzzy: false,
      bm25: { k: BM25.k1, b: BM25.b, d: 0 },
    },
  });
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

/** A chunk's provenance as retrieval reads it back (what `_source` holds on Elasticsearch). */
function provenanceOf(value: unknown): StoredDocument['provenance'] {
  if (!Array.isArray(value)) return undefined;
  return value.flatMap((p: unknown) => {
    const entry = p as Record<string, unknown> | null;
    const article = text(entry?.['article_id']);
    const url = text(entry?.['url']);
    const at = entry?.['published_at'];
    return article !== undefined && url !== undefined && typeof at === 'number'
      ? [{ article_id: article, url, published_at: at }]
      : [];
  });
}

/**
 * The embedded mode's datastores: the same monthly indices, templates, filters and scores as the
 * Elasticsearch ones, held in this process. Nearest-neighbour search is exact (a scan of the months
 * the filter can match), so it is the reference the approximate HNSW search of Elasticsearch is
 * compared with. Nothing survives the process; retention drops whole months, as on the cluster.
 */
export class EmbeddedDatastore implements Datastore {
  readonly kind = 'embedded';
  readonly location = 'in-process';
  private readonly templates = new Map<DatastoreKind, Template>();
  /** Monthly index name → id → entry. */
  private readonly indices = new Map<string, Map<string, Entry>>();
  /**
   * Monthly index name → its inverted index. One per month, as Elasticsearch keeps term statistics
   * per index (one shard each): BM25's document frequencies are those of the month, on both.
   */
  private readonly lexicalIndices = new Map<string, LexicalIndex>();

  constructor(readonly prefix = 'neon') {}

  prepare(embedding: EmbeddingSpec): Promise<void> {
    for (const kind of KINDS) {
      const existing = this.templates.get(kind);
      if (
        existing &&
        (existing.embedding.model !== embedding.model || existing.embedding.dimensions !== embedding.dimensions) &&
        this.monthsOf(kind).length > 0
      ) {
        const names = datastoreNames(kind, this.prefix);
        return Promise.reject(
          new DatastoreMismatchError(
            `${names.alias} holds vectors of ${existing.embedding.model} (${existing.embedding.dimensions} dimensions), ` +
              `not ${embedding.model} (${embedding.dimensions})`,
          ),
        );
      }
      const properties = datastoreTemplate(kind, embedding, this.prefix).template?.mappings?.properties ?? {};
      this.templates.set(kind, { embedding: { ...embedding }, fields: new Set(Object.keys(properties)) });
    }
    return Promise.resolve();
  }

  embeddingModel(kind: DatastoreKind): Promise<string | undefined> {
    return Promise.resolve(this.templates.get(kind)?.embedding.model);
  }

  private monthsOf(kind: DatastoreKind): string[] {
    const names = datastoreNames(kind, this.prefix);
    return [...this.indices.keys()].filter((index) => monthOfIndex(names, index) !== undefined).sort();
  }

  /**
   * The monthly indices a filter can match: those holding first reports within `monthBounds`, the
   * same months the Elasticsearch datastore names.
   */
  private monthsFor(kind: DatastoreKind, filter: DocumentFilter): string[] {
    const bounds = monthBounds(filter);
    const names = datastoreNames(kind, this.prefix);
    return this.monthsOf(kind).filter((index) => {
      const month = monthOfIndex(names, index)!;
      return monthEnd(month) > bounds.from && month <= bounds.to;
    });
  }

  /** The entries of the months a filter can match that pass it. */
  private *candidates(
    kinds: readonly DatastoreKind[],
    filter: DocumentFilter,
    on: Test['on'] = 'reports',
  ): Iterable<Entry> {
    const tested = test(filter, on);
    for (const kind of kinds) {
      for (const index of this.monthsFor(kind, filter)) {
        for (const entry of this.indices.get(index)!.values()) if (passes(entry, tested)) yield entry;
      }
    }
  }

  nearest(request: NearestRequest): Promise<ScoredDocument[]> {
    const query = unit(request.vector);
    // A bounded, sorted list of the best k: k is at most a few hundred, so insertion is cheap.
    const best: { entry: Entry; cos: number }[] = [];
    for (const entry of this.candidates(request.kinds, request.filter)) {
      if (entry.vector.length !== query.length) continue;
      const cos = dot(query, entry.vector);
      if (best.length === request.k && cos <= best[best.length - 1]!.cos) continue;
      let at = best.length;
      while (at > 0 && best[at - 1]!.cos < cos) at--;
      best.splice(at, 0, { entry, cos });
      if (best.length > request.k) best.pop();
    }
    return Promise.resolve(best.map(({ entry, cos }) => ({ document: entry.document, score: (1 + cos) / 2 })));
  }

  lexical(request: LexicalRequest): Promise<ScoredDocument[]> {
    if (analyseWords(request.text).length === 0) return Promise.resolve([]);
    const tested = test(request.filter);
    const found: ScoredDocument[] = [];
    for (const kind of request.kinds) {
      for (const index of this.monthsFor(kind, request.filter)) {
        const entries = this.indices.get(index)!;
        const hits = this.lexicalIndices.get(index)?.search(request.text, {
          filter: (hit) => {
            const entry = entries.get(String(hit.id));
            return entry !== undefined && passes(entry, tested);
          },
        });
        for (const hit of hits ?? []) {
          const entry = entries.get(String(hit.id));
          if (entry) found.push({ document: entry.document, score: hit.score });
        }
      }
    }
    found.sort((a, b) => b.score - a.score || (a.document.id < b.document.id ? -1 : 1));
    return Promise.resolve(found.slice(0, request.k));
  }

  list(request: ListRequest): Promise<StoredDocument[]> {
    const found = [...this.candidates([request.kind], request.filter)].map((e) => e.document);
    if (request.order !== 'none') {
      const direction = request.order === 'newest' ? -1 : 1;
      found.sort((a, b) => direction * (a.published_at - b.published_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    }
    return Promise.resolve(found.slice(0, request.limit));
  }

  histogram(request: HistogramRequest): Promise<HistogramBucket[]> {
    const size = request.granularity === 'day' ? DAY_MS : HOUR_MS;
    const counts = new Map<number, number>();
    for (const entry of this.candidates([request.kind], request.filter, 'first')) {
      const start = Math.floor(entry.document.published_at / size) * size;
      counts.set(start, (counts.get(start) ?? 0) + 1);
    }
    return Promise.resolve([...counts.entries()].sort(([a], [b]) => a - b).map(([start, count]) => ({ start, count })));
  }

  count(kind: DatastoreKind): Promise<number> {
    return Promise.resolve(this.monthsOf(kind).reduce((n, index) => n + this.indices.get(index)!.size, 0));
  }

  /** Stores one document as Elasticsearch would, or says why Elasticsearch would refuse it. */
  store(request: IndexRequest, stage: string): void {
    const kind = KINDS.find((k) => monthOfIndex(datastoreNames(k, this.prefix), request.index) !== undefined);
    const refuse = (reason: string): never => {
      throw new StageError(
        'es_document_rejected',
        `document ${request.id} refused by ${request.index}: ${reason}`,
        stage,
      );
    };
    if (kind === undefined) {
      throw new StageError(
        'internal',
        `${request.index} is not a monthly index of the ${this.prefix} datastores`,
        stage,
      );
    }
    const template = this.templates.get(kind);
    if (!template) throw new StageError('internal', `the ${kind} datastore was not prepared`, stage);
    const unknown = Object.keys(request.document).filter((field) => !template.fields.has(field));
    if (unknown.length > 0) refuse(`strict mapping: fields ${unknown.join(', ')} are not declared`);
    const doc = request.document;
    const embedding = doc['embedding'];
    if (!Array.isArray(embedding) || embedding.length !== template.embedding.dimensions) {
      refuse(`embedding must have ${template.embedding.dimensions} dimensions`);
    }
    const values = embedding as unknown[];
    if (!values.every((x) => typeof x === 'number' && Number.isFinite(x))) refuse('embedding must be finite numbers');
    if (!(values as number[]).some((x) => x !== 0)) refuse('a cosine vector must not be all zeros');
    const publishedAt = doc['published_at'];
    if (typeof publishedAt !== 'number' || !Number.isFinite(publishedAt)) refuse('published_at must be a date');
    const reportedAt = doc['reported_at'];
    if (
      reportedAt !== undefined &&
      !(Array.isArray(reportedAt) && reportedAt.every((x) => typeof x === 'number' && Number.isFinite(x)))
    ) {
      refuse('reported_at must be dates');
    }
    const provenance = provenanceOf(doc['provenance']);
    const id = text(doc['id']);
    const documentKind = text(doc['kind']);
    if (id === undefined || (documentKind !== 'chunk' && documentKind !== 'interaction')) refuse('id and kind');
    const t = publishedAt as number;
    const stored: StoredDocument = {
      id: id!,
      kind: documentKind as StoredDocument['kind'],
      text: text(doc['text']) ?? '',
      ...(text(doc['title']) !== undefined ? { title: text(doc['title'])! } : {}),
      ...(strings(doc['entity_names']) ? { entity_names: strings(doc['entity_names'])! } : {}),
      published_at: t,
      ...(Array.isArray(reportedAt) ? { reported_at: (reportedAt as number[]).slice().sort((a, b) => a - b) } : {}),
      ...(provenance ? { provenance } : {}),
      ...(strings(doc['urls']) ? { urls: strings(doc['urls'])! } : {}),
      ...(strings(doc['entity_ids']) ? { entity_ids: strings(doc['entity_ids'])! } : {}),
      ...(text(doc['subject_id']) !== undefined ? { subject_id: text(doc['subject_id'])! } : {}),
      ...(text(doc['subject_name']) !== undefined ? { subject_name: text(doc['subject_name'])! } : {}),
      ...('object_id' in doc ? { object_id: text(doc['object_id']) ?? null } : {}),
      ...('object_name' in doc ? { object_name: text(doc['object_name']) ?? null } : {}),
      ...(strings(doc['chunk_ids']) ? { chunk_ids: strings(doc['chunk_ids'])! } : {}),
      ...(strings(doc['article_ids']) ? { article_ids: strings(doc['article_ids'])! } : {}),
      ...(text(doc['article_id']) !== undefined ? { article_id: text(doc['article_id'])! } : {}),
      ...(typeof doc['article_version'] === 'number' ? { article_version: doc['article_version'] } : {}),
      ...(strings(doc['corrects_urls']) ? { corrects_urls: strings(doc['corrects_urls'])! } : {}),
      ...(doc['correction'] === 'correction' || doc['correction'] === 'retraction'
        ? { correction: doc['correction'] }
        : {}),
    };
    let index = this.indices.get(request.index);
    if (!index) {
      index = new Map();
      this.indices.set(request.index, index);
    }
    // `create` keeps the first version (a replay is done, as a 409 on create is for the bulk sink).
    if (request.op === 'create' && index.has(request.id)) return;
    index.set(request.id, { document: stored, times: reportTimes(stored), vector: unit(values as number[]) });
    let lexical = this.lexicalIndices.get(request.index);
    if (!lexical) {
      lexical = lexicalIndex();
      this.lexicalIndices.set(request.index, lexical);
    }
    // Overwrite by id, as a re-indexed Elasticsearch document replaces the old one's terms.
    if (lexical.has(stored.id)) lexical.discard(stored.id);
    lexical.add(stored);
  }

  writer(options: DatastoreWriterOptions): Sink<IndexRequest> {
    return {
      name: 'embedded-index',
      write: (request) => {
        try {
          this.store(request, options.stage);
          return Promise.resolve();
        } catch (error) {
          return Promise.reject(error instanceof Error ? error : new Error(String(error)));
        }
      },
      close: () => Promise.resolve(),
    };
  }

  months(kind: DatastoreKind): Promise<string[]> {
    return Promise.resolve(this.monthsOf(kind));
  }

  /** Held in memory, a month has no segments to merge: one each, and nothing for `compact` to do. */
  monthStats(kind: DatastoreKind): Promise<MonthStats[]> {
    const names = datastoreNames(kind, this.prefix);
    return Promise.resolve(
      this.monthsOf(kind).map((index) => ({
        index,
        month: monthOfIndex(names, index)!,
        docs: this.indices.get(index)!.size,
        segments: 1,
      })),
    );
  }

  compact(): Promise<void> {
    return Promise.resolve();
  }

  dropMonthsBefore(kind: DatastoreKind, keepFrom: number): Promise<string[]> {
    const names = datastoreNames(kind, this.prefix);
    const dropped = this.monthsOf(kind).filter((index) => monthEnd(monthOfIndex(names, index)!) <= keepFrom);
    for (const index of dropped) {
      this.indices.delete(index);
      this.lexicalIndices.delete(index);
    }
    return Promise.resolve(dropped);
  }

  destroy(): Promise<void> {
    this.indices.clear();
    this.lexicalIndices.clear();
    this.templates.clear();
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

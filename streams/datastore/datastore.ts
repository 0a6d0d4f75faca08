/**
 * What the index stages and the query service need from the datastores. Two
 * implementations behind this one interface, like the two transports: Elasticsearch for cluster
 * mode (`elasticsearch-datastore.ts`) and an in-process index for the embedded mode
 * (`embedded-datastore.ts`). The same conformance tests run against both
 * (`test/harness/datastore-conformance.ts`), so a strategy means the same thing on either.
 */
import { DEFAULT_DEDUPE_WINDOW_MS } from '../../processors/dedupe/drop-near-duplicates.js';
import { DAY_MS } from '../../processors/query/rank-candidates.js';
import type { DatastoreKind, EmbeddingSpec } from '../elasticsearch/datastore-templates.js';
import type { IndexRequest } from '../elasticsearch/elasticsearch-bulk-sink.js';
import type { Sink } from '../runtime/sink.js';

export type { DatastoreKind, EmbeddingSpec } from '../elasticsearch/datastore-templates.js';
export type { IndexRequest } from '../elasticsearch/elasticsearch-bulk-sink.js';

/** The stored fields retrieval reads back (the `_source` subset of both datastores). */
export interface StoredDocument {
  id: string;
  kind: 'interaction' | 'chunk';
  text: string;
  /**
   * ms since the epoch (Elasticsearch may give it back as a string; implementations convert): the
   * first report, which also names the document's monthly index.
   */
  published_at: number;
  /**
   * Every distinct time the content was reported, ascending, the first equal to `published_at`: a
   * deduplicated chunk's survivor is reported again by each near-duplicate merged into it (NEON §2.1).
   * Absent on documents indexed before the field existed: they were reported at `published_at` only.
   */
  reported_at?: number[];
  /** Chunks: every article that carried the content, with its URL and time (for citing a later report). */
  provenance?: { article_id: string; url: string; published_at: number }[];
  urls?: string[];
  entity_ids?: string[];
  /** Chunks: the headline of their article. */
  title?: string;
  /** Chunks: the article they were cut from. */
  article_id?: string;
  /**
   * Chunks: the revision of their article they were cut from (Article.version). Absent on documents
   * indexed before the field existed: read from the chunk id (`<article>:v<version>:<index>`).
   */
  article_version?: number;
  /** Chunks of a correction or retraction: the earlier articles it names (comparable URLs). */
  corrects_urls?: string[];
  correction?: 'correction' | 'retraction';
  /** Chunks: the names of their marked entities. */
  entity_names?: string[];
  subject_id?: string;
  subject_name?: string;
  object_id?: string | null;
  object_name?: string | null;
  chunk_ids?: string[];
  article_ids?: string[];
}

export interface ScoredDocument {
  document: StoredDocument;
  /**
   * `nearest`: cosine similarity mapped to [0, 1] as Elasticsearch scores it, (1 + cos) / 2.
   * `lexical`: the BM25 score (unbounded; comparable within one answer only).
   */
  score: number;
}

/**
 * Conjunctive filters; every bound is inclusive. Days are `YYYY-MM-DD` (UTC). The time conditions
 * (`publishedFrom`, `publishedTo`, `day`, `days`) together allow a set of instants (see
 * `timeIntervals`); a document passes them when any one of its report times (`reported_at`, or
 * `published_at` where it has none) lies in that set, so a story reported again inside a window is
 * found there even though it was first reported before it.
 */
export interface DocumentFilter {
  publishedFrom?: number;
  publishedTo?: number;
  day?: string;
  /** A report time on a day within [from, to], other than `except`. */
  days?: { from: string; to: string; except?: string };
  entityId?: string;
  ids?: readonly string[];
  /** Chunks of any of these articles (`article_id`). */
  articleIds?: readonly string[];
  /**
   * Chunks cut from this revision of their article or a later one (`article_version`); documents
   * without the field (indexed before it existed, all of version 1) pass only a bound of 1 or less.
   */
  minVersion?: number;
  /** Chunks of corrections or retractions naming any of these (comparable) URLs (`corrects_urls`). */
  correctsUrls?: readonly string[];
  /** Statements extracted from any of these chunks (`chunk_ids`). */
  chunkIds?: readonly string[];
}

const dayStart = (day: string): number => Date.parse(`${day}T00:00:00Z`);

/**
 * The earliest and latest report time (ms, inclusive; ±Infinity where open) a filter lets through.
 * Monthly indices are chosen with `monthBounds`, which widens this for later reports.
 */
export function timeBounds(filter: DocumentFilter): { from: number; to: number } {
  let from = -Infinity;
  let to = Infinity;
  if (filter.publishedFrom !== undefined) from = Math.max(from, filter.publishedFrom);
  if (filter.publishedTo !== undefined) to = Math.min(to, filter.publishedTo);
  if (filter.day !== undefined) {
    from = Math.max(from, dayStart(filter.day));
    to = Math.min(to, dayStart(filter.day) + DAY_MS - 1);
  }
  if (filter.days !== undefined) {
    from = Math.max(from, dayStart(filter.days.from));
    to = Math.min(to, dayStart(filter.days.to) + DAY_MS - 1);
  }
  return { from, to };
}

/**
 * How long after a document's first report (`published_at`, which names its monthly index) it can be
 * reported again. A survivor gains a report only from a near-duplicate decided while the survivor is
 * still in the dedupe window (near-duplicate-index.ts: `advance` to the duplicate's time first, then
 * only entries with t ≥ that time − windowMs are compared), so its later reports are at most one
 * window after its own time. The pipeline runs dedupe with the default window; a deployment that
 * widened it would widen this too. Reports carried by a duplicate that arrived late with an earlier
 * time are indexed as of the survivor's time (see `chunkReportTimes`), so none is earlier.
 */
export const REPORT_SPREAD_MS = DEFAULT_DEDUPE_WINDOW_MS;

/**
 * The first-report times (ms, inclusive) a document must have to be able to pass the filter: the
 * months a search must look in. A survivor is stored in the month of its first report, and a later
 * report inside the filter's bounds may be up to `REPORT_SPREAD_MS` after it, so the lower bound
 * moves back by that much; the upper bound stays (no report precedes the first).
 */
export function monthBounds(filter: DocumentFilter): { from: number; to: number } {
  const { from, to } = timeBounds(filter);
  return { from: from - REPORT_SPREAD_MS, to };
}

/** An inclusive range of instants, ms; either end may be infinite. */
export interface TimeInterval {
  from: number;
  to: number;
}

/** Whether the filter says anything about time. */
export function hasTimeCondition(filter: DocumentFilter): boolean {
  return (
    filter.publishedFrom !== undefined ||
    filter.publishedTo !== undefined ||
    filter.day !== undefined ||
    filter.days !== undefined
  );
}

/**
 * The instants the filter's time conditions allow, as disjoint inclusive intervals in ascending
 * order (empty: none; one unbounded interval when the filter says nothing about time). Bounds and
 * days intersect; `days.except` cuts its day out. One report time has to satisfy them all, so they
 * are tested on each report time together, not one condition on one report and another on another.
 */
export function timeIntervals(filter: DocumentFilter): TimeInterval[] {
  const { from, to } = timeBounds(filter);
  if (from > to) return [];
  const except = filter.days?.except;
  if (except === undefined) return [{ from, to }];
  const cut = { from: dayStart(except), to: dayStart(except) + DAY_MS - 1 };
  return [
    { from, to: Math.min(to, cut.from - 1) },
    { from: Math.max(from, cut.to + 1), to },
  ].filter((interval) => interval.from <= interval.to);
}

/**
 * A document's report times, ascending: `reported_at` with `published_at` (its first, so a document
 * without `reported_at` has that one), as Elasticsearch's filter asks both fields.
 */
export function reportTimes(document: StoredDocument): readonly number[] {
  return [...new Set([document.published_at, ...(document.reported_at ?? [])])].sort((a, b) => a - b);
}

/**
 * The latest of a document's report times that the filter's time conditions allow, undefined when
 * none does: the time retrieval ranks and cites the document by ("as of t_q", "in March").
 */
export function latestReportWithin(document: StoredDocument, filter: DocumentFilter): number | undefined {
  const intervals = timeIntervals(filter);
  const times = reportTimes(document);
  for (let i = times.length - 1; i >= 0; i--) {
    const t = times[i]!;
    if (intervals.some((interval) => t >= interval.from && t <= interval.to)) return t;
  }
  return undefined;
}

export interface NearestRequest {
  kinds: readonly DatastoreKind[];
  vector: readonly number[];
  k: number;
  filter: DocumentFilter;
  timeoutMs: number;
}

/**
 * The fields lexical search scores, with their weights: a document's text, its article's headline
 * (chunks) and the names of its entities (a chunk's marked entities, an interaction's subject and
 * object). BM25 per field, summed with these weights, on both datastores (Elasticsearch's
 * `most_fields`; the embedded datastore's inverted index sums the same way).
 */
export const LEXICAL_FIELDS: Readonly<Record<string, number>> = {
  text: 1,
  title: 1,
  entity_names: 0.5,
  subject_name: 0.5,
  object_name: 0.5,
};

/** BM25's parameters, Lucene's defaults, used by both datastores. */
export const BM25 = { k1: 1.2, b: 0.75 } as const;

export interface LexicalRequest {
  kinds: readonly DatastoreKind[];
  /** The words to look for; any of them may match (BM25 ranks by how many and how rare). */
  text: string;
  k: number;
  filter: DocumentFilter;
  timeoutMs: number;
}

export interface ListRequest {
  kind: DatastoreKind;
  filter: DocumentFilter;
  limit: number;
  /**
   * `newest`: published_at descending, then id ascending (a stable page order); `oldest`:
   * published_at ascending, then id ascending (what comes next after a time).
   */
  order: 'newest' | 'oldest' | 'none';
  timeoutMs: number;
}

export interface HistogramRequest {
  kind: DatastoreKind;
  filter: DocumentFilter;
  granularity: 'day' | 'hour';
  timeoutMs: number;
}

export interface HistogramBucket {
  /** Bucket start, ms since the epoch (UTC). */
  start: number;
  count: number;
}

/** A monthly index, as maintenance sees it. */
export interface MonthStats {
  index: string;
  /** The month's first instant (UTC ms). */
  month: number;
  docs: number;
  /** Lucene segments of its primary; a kNN search walks one HNSW graph per segment. */
  segments: number;
}

export interface DatastoreWriterOptions {
  /** The stage that writes (for errors and logs). */
  stage: string;
  maxBatchDocs?: number;
  lingerMs?: number;
  maxQueuedDocs?: number;
  refresh?: boolean | 'wait_for';
}

/** The datastore was built with another embedding model: its vectors and the query's do not compare. */
export class EmbeddingModelMismatch extends Error {
  override readonly name = 'EmbeddingModelMismatch';
}

/** A search took longer than it was allowed to. */
export class RetrievalTimeout extends Error {
  override readonly name = 'RetrievalTimeout';
}

/** The datastore did not answer (down, unreachable, overloaded). */
export class DatastoreUnavailable extends Error {
  override readonly name = 'DatastoreUnavailable';
}

export interface Datastore {
  readonly kind: 'elasticsearch' | 'embedded';
  /** `<prefix>-chunks`, `<prefix>-interactions`. */
  readonly prefix: string;
  /** Where it lives, for people: a URL, or "in-process". */
  readonly location: string;
  /**
   * Creates (or updates) both datastores for this embedding model. Refuses (DatastoreMismatchError)
   * to switch a datastore that holds documents to another model or size.
   */
  prepare(embedding: EmbeddingSpec): Promise<void>;
  /**
   * The model a datastore's vectors were made with; undefined before `prepare` (on Elasticsearch:
   * until its first monthly index exists, as the model is read from the indices' mappings).
   */
  embeddingModel(kind: DatastoreKind): Promise<string | undefined>;
  /** The k documents most similar to `vector` that pass the filter, best first. */
  nearest(request: NearestRequest): Promise<ScoredDocument[]>;
  /**
   * The k documents that pass the filter whose text, headline and entity names best match the words
   * of `text` by BM25 over `LEXICAL_FIELDS` (no stemming; lower-cased Unicode words), best first.
   */
  lexical(request: LexicalRequest): Promise<ScoredDocument[]>;
  /** Documents that pass the filter, without a vector (timelines, citation look-ups). */
  list(request: ListRequest): Promise<StoredDocument[]>;
  /**
   * How many documents pass the filter, per UTC day or hour of `published_at` (empty buckets left
   * out). Counted once, at their first report: its time conditions apply to `published_at` alone (a
   * story reported again is not mentioned again: dedupe emits no new mentions for it).
   */
  histogram(request: HistogramRequest): Promise<HistogramBucket[]>;
  /** Documents held by a datastore. */
  count(kind: DatastoreKind): Promise<number>;
  /**
   * A sink for the index stages: `write` resolves once the document is stored (and will be visible to
   * searches after the store's refresh), rejects with a StageError otherwise. Idempotent on the id.
   */
  writer(options: DatastoreWriterOptions): Sink<IndexRequest>;
  /** The monthly indices of a datastore, oldest first. */
  months(kind: DatastoreKind): Promise<string[]>;
  /** Documents and segments of each monthly index, oldest first (maintenance). */
  monthStats(kind: DatastoreKind): Promise<MonthStats[]>;
  /**
   * Starts merging a monthly index into one segment and returns without waiting for the merge,
   * which runs inside the store (minutes for a million vectors). Searches stay correct throughout.
   */
  compact(index: string): Promise<void>;
  /** Retention: drops the monthly indices whose whole month lies before `keepFrom`; returns them. */
  dropMonthsBefore(kind: DatastoreKind, keepFrom: number): Promise<string[]>;
  /** Removes both datastores and their templates (tests, benchmarks, `--reset`). */
  destroy(): Promise<void>;
  close(): Promise<void>;
}

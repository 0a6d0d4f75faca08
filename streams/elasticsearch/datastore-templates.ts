import type { estypes } from '@elastic/elasticsearch';

/**
 * The two Elasticsearch datastores: `neon-chunks` (NewsRAG: unique news chunks)
 * and `neon-interactions` (NEON: timestamped entity interactions). Each is an alias over monthly
 * indices (`neon-chunks-2025.01`, …) created on first write from a composable index template, so
 * retention is dropping whole old months — the integ-test Elasticsearch has no ILM and no
 * `_delete_by_query`, and dropping an index is cheaper than deleting documents anyway.
 *
 * Vectors are `dense_vector` with cosine similarity in an int8-quantised HNSW graph; their size is
 * the configured embedder's, recorded with the model in the template's `_meta`, so an index is never
 * fed vectors of another model. Analysis uses only built-in analysers (`standard`), which every
 * distribution has.
 */
export type DatastoreKind = 'chunks' | 'interactions';

export interface DatastoreNames {
  /** Read alias, e.g. `neon-chunks`. */
  alias: string;
  /** Prefix of the monthly indices, e.g. `neon-chunks-`. */
  indexPrefix: string;
  template: string;
}

export function datastoreNames(kind: DatastoreKind, prefix = 'neon'): DatastoreNames {
  const alias = `${prefix}-${kind}`;
  return { alias, indexPrefix: `${alias}-`, template: `${alias}-monthly` };
}

/** The monthly index a document of time `t` belongs to: `<prefix>YYYY.MM` (UTC). */
export function monthlyIndex(names: DatastoreNames, t: number): string {
  const date = new Date(t);
  return `${names.indexPrefix}${date.getUTCFullYear()}.${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The month (first day, UTC ms) of a monthly index name, or undefined for another name. */
export function monthOfIndex(names: DatastoreNames, index: string): number | undefined {
  if (!index.startsWith(names.indexPrefix)) return undefined;
  const match = /^(\d{4})\.(\d{2})$/.exec(index.slice(names.indexPrefix.length));
  if (match === null) return undefined;
  return Date.UTC(Number(match[1]), Number(match[2]) - 1, 1);
}

/** The first instant (UTC ms) after the month that starts at `monthStart`. */
export function monthEnd(monthStart: number): number {
  const next = new Date(monthStart);
  next.setUTCMonth(next.getUTCMonth() + 1);
  return next.getTime();
}

/** Longest index list a search names before it falls back to the alias (the request line has a limit). */
const MAX_EXPRESSIONS_LENGTH = 2_000;
/** Longest time range whose months are named one by one. */
const MAX_LISTED_MONTHS = 24;

/**
 * Index expressions that cover every monthly index from `from`'s month to `to`'s month (UTC ms;
 * `from` may be -Infinity) and none after `to`'s, so that a search skips the months its time filter
 * rules out — Elasticsearch's own pre-filter does not look inside a kNN filter, and an as-of question
 * early in the data would otherwise walk the HNSW graphs of every later month too. Short ranges are
 * named month by month; a range open to the past names the months of `to`'s year and covers earlier
 * years with one wildcard per leading digit run (`neon-chunks-1*`, `neon-chunks-200*`, …,
 * `neon-chunks-2023*`). Undefined where the range is open to the future, or the list would be too
 * long: search the alias.
 */
export function monthIndexExpressions(names: DatastoreNames, from: number, to: number): string[] | undefined {
  if (!Number.isFinite(to) || from > to) return undefined;
  const end = new Date(to);
  const year = end.getUTCFullYear();
  if (year < 1000 || year > 9999) return undefined;
  const expressions: string[] = [];
  const start = new Date(from);
  const listed = Number.isFinite(from)
    ? (year - start.getUTCFullYear()) * 12 + end.getUTCMonth() - start.getUTCMonth() + 1
    : Infinity;
  if (listed <= MAX_LISTED_MONTHS) {
    for (let i = 0; i < listed; i++) {
      expressions.push(monthlyIndex(names, Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + i, 1)));
    }
  } else {
    for (let m = 0; m <= end.getUTCMonth(); m++) expressions.push(monthlyIndex(names, Date.UTC(year, m, 1)));
    // Every four-digit year before `year`: those sharing its first i digits and a smaller next one.
    const digits = String(year);
    for (let i = 0; i < 4; i++) {
      for (let d = i === 0 ? 1 : 0; d < Number(digits[i]); d++) {
        expressions.push(`${names.indexPrefix}${digits.slice(0, i)}${d}*`);
      }
    }
  }
  return expressions.join(',').length <= MAX_EXPRESSIONS_LENGTH ? expressions : undefined;
}

export interface EmbeddingSpec {
  model: string;
  dimensions: number;
}

const provenance: estypes.MappingProperty = {
  type: 'object',
  properties: {
    article_id: { type: 'keyword' },
    url: { type: 'keyword', index: false },
    source: { type: 'keyword' },
    published_at: { type: 'date' },
  },
};

function vector(embedding: EmbeddingSpec): estypes.MappingProperty {
  return {
    type: 'dense_vector',
    dims: embedding.dimensions,
    index: true,
    similarity: 'cosine',
    index_options: { type: 'int8_hnsw', m: 16, ef_construction: 100 },
  };
}

/** Fields both datastores share: what retrieval filters and sorts on. */
function common(embedding: EmbeddingSpec): Record<string, estypes.MappingProperty> {
  return {
    id: { type: 'keyword' },
    kind: { type: 'keyword' },
    text: { type: 'text', analyzer: 'standard' },
    published_at: { type: 'date' },
    // The calendar day, for NEON's exact-date match (t_d == t_q's day) without time-zone arithmetic.
    published_day: { type: 'date', format: 'strict_date' },
    // Every time the content was reported (a deduplicated chunk: each merged article's), ascending;
    // time filters match a document when any of them passes. Added to existing months by
    // `ensureDatastores`; their older documents, without it, are filtered on published_at.
    reported_at: { type: 'date' },
    entity_ids: { type: 'keyword' },
    article_ids: { type: 'keyword' },
    urls: { type: 'keyword', index: false },
    sources: { type: 'keyword' },
    embedding: vector(embedding),
    embedding_model: { type: 'keyword' },
    indexed_at: { type: 'date' },
  };
}

export function datastoreTemplate(
  kind: DatastoreKind,
  embedding: EmbeddingSpec,
  prefix = 'neon',
  settings: { shards?: number; replicas?: number } = {},
): estypes.IndicesPutIndexTemplateRequest {
  const names = datastoreNames(kind, prefix);
  const properties: Record<string, estypes.MappingProperty> = {
    ...common(embedding),
    ...(kind === 'chunks'
      ? {
          article_id: { type: 'keyword' },
          // The article's revision: retrieval leaves out chunks of a version superseded as of t_q.
          // Added to existing months by `ensureDatastores`; their documents, without it, are version 1.
          article_version: { type: 'integer' },
          // A correction's or retraction's chunks: the earlier articles they name (comparable URLs),
          // left out of answers as of their time, and which of the two it is.
          corrects_urls: { type: 'keyword' },
          correction: { type: 'keyword' },
          chunk_index: { type: 'integer' },
          // The article's headline: scored by lexical search beside the text and the entity names.
          title: { type: 'text', analyzer: 'standard' },
          entity_names: { type: 'text', analyzer: 'standard' },
          marked_text: { type: 'text', index: false },
          provenance,
        }
      : {
          // The article's headline: scored by lexical search beside the statement and its entities.
          title: { type: 'text', analyzer: 'standard' },
          subject_id: { type: 'keyword' },
          subject_name: { type: 'text', analyzer: 'standard', fields: { raw: { type: 'keyword' } } },
          object_id: { type: 'keyword' },
          object_name: { type: 'text', analyzer: 'standard', fields: { raw: { type: 'keyword' } } },
          variant: { type: 'keyword' },
          chunk_ids: { type: 'keyword' },
          model: { type: 'keyword' },
          extracted_at: { type: 'date' },
        }),
  };
  return {
    name: names.template,
    index_patterns: [`${names.indexPrefix}*`],
    priority: 200,
    _meta: { managed_by: 'neon-stream', embedding_model: embedding.model, dimensions: embedding.dimensions },
    template: {
      aliases: { [names.alias]: {} },
      settings: {
        number_of_shards: settings.shards ?? 1,
        number_of_replicas: settings.replicas ?? 0,
        refresh_interval: '1s',
      },
      // Strict: a document with a field nobody mapped is a bug, dead-lettered rather than guessed at.
      mappings: { dynamic: 'strict', _meta: { embedding_model: embedding.model }, properties },
    },
  };
}

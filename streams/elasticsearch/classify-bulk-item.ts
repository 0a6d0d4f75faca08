import { errors } from '@elastic/elasticsearch';

/**
 * The one place that decides what a bulk response means. Everything the Elasticsearch sink does
 * after a `_bulk` call — resolve, retry only some items, dead-letter, stop — follows from these two
 * functions, so they are table-tested exhaustively (test/unit/classify-bulk-item.test.ts).
 *
 * A bulk HTTP 200 is not success: every item carries its own status and is classified on its own.
 */

/** What to do with one item of a bulk request. */
export type BulkItemOutcome = 'done' | 'retry' | 'dead_letter' | 'fatal';

/** What to do with a whole bulk request that failed before any item was processed. */
export type BulkRequestOutcome = 'retry' | 'split' | 'dead_letter' | 'fatal';

/** The only bulk actions the sink sends: both carry a caller-chosen, deterministic `_id`. */
export type BulkWriteOp = 'index' | 'create';

/** The part of a bulk response item the decision depends on (structurally a `BulkResponseItem`). */
export interface BulkItemResult {
  status: number;
  error?: { type?: string; reason?: string | null } | undefined;
}

/** Item-level 400s that are the document's fault: sending the same bytes again cannot succeed. */
export const DOCUMENT_REJECTION_TYPES: ReadonlySet<string> = new Set([
  'mapper_parsing_exception',
  'document_parsing_exception',
  'illegal_argument_exception',
  'strict_dynamic_mapping_exception',
]);

/**
 * Rules, in order:
 * - 2xx → done (201 created, 200 overwritten).
 * - 409 on `create` → done: the document with this deterministic id already exists, which is exactly
 *   what an at-least-once replay produces. On `index` (plain overwrite, no `if_seq_no`/`version`) ES
 *   never reports a conflict, so a 409 there means someone attached versioning we did not ask for;
 *   resending the same request gets the same answer, so it is dead-lettered rather than looped on.
 * - 408, 429 → retry (the node asked us to slow down or gave up waiting; nothing is wrong with the
 *   document). Flood-stage disk blocks also arrive as 429 since 7.x and clear on their own.
 * - 5xx → retry, all of them: a shard that is relocating or a node that is restarting answers 503,
 *   and there is no 5xx that means "this document is bad".
 * - 401, 403 → fatal: credentials or privileges; an operator has to act, retrying only hammers.
 * - 404 `index_not_found_exception` → fatal: indices and aliases are created up front from
 *   templates, so a missing one is misconfiguration, not a property of the document.
 * - 413 → dead_letter: this document alone is too large to ever be accepted.
 * - 400 (mapping, parsing, illegal argument, strict dynamic mapping) and any other 4xx → dead_letter.
 * - Anything else (1xx, 3xx, nonsense) → fatal: an answer we cannot interpret must neither drop the
 *   document nor retry it forever.
 */
export function classifyBulkItem(item: BulkItemResult, op: BulkWriteOp = 'index'): BulkItemOutcome {
  const { status } = item;
  if (!Number.isInteger(status)) return 'fatal';
  if (status >= 200 && status < 300) return 'done';
  if (status === 409) return op === 'create' ? 'done' : 'dead_letter';
  if (status === 408 || status === 429) return 'retry';
  if (status >= 500 && status < 600) return 'retry';
  if (status === 401 || status === 403) return 'fatal';
  if (status === 404 && item.error?.type === 'index_not_found_exception') return 'fatal';
  // 400 with a DOCUMENT_REJECTION_TYPES type, 413, and every other 4xx: the document is refused for good.
  if (status >= 400 && status < 500) return 'dead_letter';
  return 'fatal';
}

/**
 * A whole `_bulk` request failed: the client threw instead of returning per-item results.
 *
 * - ConnectionError, TimeoutError, NoLivingConnectionsError, DeserializationError → retry: the
 *   request may or may not have been applied, and deterministic ids make resending it harmless.
 * - HTTP 408, 429, 5xx → retry.
 * - HTTP 413 → split: the request body is over `http.max_content_length`; halve the batch and send
 *   both halves. A batch of one document cannot be halved → dead_letter.
 * - HTTP 401, 403 → fatal (credentials or privileges).
 * - Any other HTTP status → fatal: the sink built a request Elasticsearch does not understand (or is
 *   talking to something that is not Elasticsearch); no document is to blame and a retry repeats it.
 * - Anything else thrown (serialization errors, configuration errors, plain bugs) → fatal.
 */
export function classifyBulkResponseError(
  error: unknown,
  docsInRequest = Number.POSITIVE_INFINITY,
): BulkRequestOutcome {
  if (error instanceof errors.ResponseError) {
    const status = error.statusCode;
    if (status === undefined) return 'fatal';
    if (status === 408 || status === 429) return 'retry';
    if (status >= 500 && status < 600) return 'retry';
    if (status === 413) return docsInRequest > 1 ? 'split' : 'dead_letter';
    return 'fatal';
  }
  if (
    error instanceof errors.ConnectionError ||
    error instanceof errors.TimeoutError ||
    error instanceof errors.NoLivingConnectionsError ||
    error instanceof errors.DeserializationError
  ) {
    return 'retry';
  }
  return 'fatal';
}

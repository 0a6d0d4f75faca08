import { errors, type DiagnosticResult } from '@elastic/elasticsearch';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  classifyBulkItem,
  classifyBulkResponseError,
  DOCUMENT_REJECTION_TYPES,
  type BulkItemOutcome,
  type BulkRequestOutcome,
  type BulkWriteOp,
} from '../../streams/elasticsearch/classify-bulk-item.js';

type ItemCase = [status: number, type: string | undefined, op: BulkWriteOp, expected: BulkItemOutcome];

const ITEM_CASES: ItemCase[] = [
  // Success, whatever the op.
  [200, undefined, 'index', 'done'],
  [201, undefined, 'index', 'done'],
  [201, undefined, 'create', 'done'],
  [200, undefined, 'create', 'done'],
  [299, undefined, 'index', 'done'],
  // Conflicts: a replayed `create` finds its own earlier write.
  [409, 'version_conflict_engine_exception', 'create', 'done'],
  [409, undefined, 'create', 'done'],
  [409, 'version_conflict_engine_exception', 'index', 'dead_letter'],
  // Back-pressure and server trouble.
  [429, 'es_rejected_execution_exception', 'index', 'retry'],
  [429, 'circuit_breaking_exception', 'create', 'retry'],
  [429, 'cluster_block_exception', 'index', 'retry'],
  [408, undefined, 'index', 'retry'],
  [500, 'exception', 'index', 'retry'],
  [502, undefined, 'index', 'retry'],
  [503, 'unavailable_shards_exception', 'index', 'retry'],
  [503, 'node_not_connected_exception', 'create', 'retry'],
  [504, undefined, 'index', 'retry'],
  [507, undefined, 'index', 'retry'],
  [599, undefined, 'index', 'retry'],
  // Documents refused for good.
  [400, 'mapper_parsing_exception', 'index', 'dead_letter'],
  [400, 'document_parsing_exception', 'index', 'dead_letter'],
  [400, 'illegal_argument_exception', 'create', 'dead_letter'],
  [400, 'strict_dynamic_mapping_exception', 'index', 'dead_letter'],
  [400, 'some_future_exception', 'index', 'dead_letter'],
  [400, undefined, 'index', 'dead_letter'],
  [413, undefined, 'index', 'dead_letter'],
  [404, 'document_missing_exception', 'index', 'dead_letter'],
  [404, undefined, 'index', 'dead_letter'],
  [405, undefined, 'index', 'dead_letter'],
  [422, undefined, 'index', 'dead_letter'],
  [499, undefined, 'index', 'dead_letter'],
  // Nobody can fix these by retrying or dead-lettering.
  [401, 'security_exception', 'index', 'fatal'],
  [403, 'security_exception', 'create', 'fatal'],
  [403, 'cluster_block_exception', 'index', 'fatal'],
  [404, 'index_not_found_exception', 'index', 'fatal'],
  [404, 'index_not_found_exception', 'create', 'fatal'],
  // Statuses ES never sends for an item.
  [0, undefined, 'index', 'fatal'],
  [100, undefined, 'index', 'fatal'],
  [302, undefined, 'index', 'fatal'],
  [600, undefined, 'index', 'fatal'],
  [Number.NaN, undefined, 'index', 'fatal'],
  [200.5, undefined, 'index', 'fatal'],
];

describe('classifyBulkItem', () => {
  it.each(ITEM_CASES)('%d %s on %s → %s', (status, type, op, expected) => {
    const error = type === undefined ? undefined : { type, reason: 'because' };
    expect(classifyBulkItem({ status, error }, op)).toBe(expected);
  });

  it('covers every document-rejection type in the table', () => {
    const tabled = new Set(ITEM_CASES.filter(([s, , , o]) => s === 400 && o === 'dead_letter').map(([, t]) => t));
    for (const type of DOCUMENT_REJECTION_TYPES) expect(tabled.has(type)).toBe(true);
  });

  it('defaults to an index op, where a conflict is not expected', () => {
    expect(classifyBulkItem({ status: 409 })).toBe('dead_letter');
  });

  it('accepts a real BulkResponseItem shape, with a null reason', () => {
    const item = { _index: 'x', _id: '1', status: 400, error: { type: 'mapper_parsing_exception', reason: null } };
    expect(classifyBulkItem(item)).toBe('dead_letter');
  });

  it('never retries a 4xx other than 408/429 and never drops a 5xx, for any status and type', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 700 }),
        fc.option(fc.string(), { nil: undefined }),
        fc.constantFrom<BulkWriteOp>('index', 'create'),
        (status, type, op) => {
          const outcome = classifyBulkItem({ status, error: type === undefined ? undefined : { type } }, op);
          if (status >= 500 && status < 600) expect(outcome).toBe('retry');
          if (status >= 400 && status < 500 && status !== 408 && status !== 429) expect(outcome).not.toBe('retry');
          if (status >= 200 && status < 300) expect(outcome).toBe('done');
          if (status < 200 || status >= 600) expect(outcome).toBe('fatal');
        },
      ),
    );
  });
});

function responseError(statusCode: number, type = 'some_exception'): errors.ResponseError {
  const meta = {
    body: { error: { type, reason: 'because' }, status: statusCode },
    statusCode,
    headers: {},
    warnings: null,
    meta: {
      context: null,
      name: 'elasticsearch-js',
      request: { params: { method: 'POST', path: '/_bulk' }, options: {}, id: 1 },
      connection: null,
      attempts: 0,
      aborted: false,
    },
  } as unknown as DiagnosticResult;
  return new errors.ResponseError(meta);
}

type RequestCase = [label: string, error: unknown, docs: number, expected: BulkRequestOutcome];

const REQUEST_CASES: RequestCase[] = [
  ['429', responseError(429, 'es_rejected_execution_exception'), 10, 'retry'],
  ['429 circuit breaker', responseError(429, 'circuit_breaking_exception'), 1, 'retry'],
  ['408', responseError(408), 10, 'retry'],
  ['500', responseError(500), 10, 'retry'],
  ['502', responseError(502), 10, 'retry'],
  ['503', responseError(503, 'unavailable_shards_exception'), 10, 'retry'],
  ['504', responseError(504), 10, 'retry'],
  ['413 with many documents', responseError(413), 10, 'split'],
  ['413 with two documents', responseError(413), 2, 'split'],
  ['413 with one document', responseError(413), 1, 'dead_letter'],
  ['401', responseError(401, 'security_exception'), 10, 'fatal'],
  ['403', responseError(403, 'security_exception'), 10, 'fatal'],
  ['400 on the whole request', responseError(400, 'action_request_validation_exception'), 10, 'fatal'],
  ['404 on the whole request', responseError(404, 'index_not_found_exception'), 10, 'fatal'],
  ['connection refused', new errors.ConnectionError('connect ECONNREFUSED'), 10, 'retry'],
  ['timeout', new errors.TimeoutError('Request timed out'), 10, 'retry'],
  ['no living connections', new errors.NoLivingConnectionsError('none', responseError(503).meta), 10, 'retry'],
  ['garbled response', new errors.DeserializationError('bad json', '{'), 10, 'retry'],
  ['serialization bug', new errors.SerializationError('circular', {}), 10, 'fatal'],
  ['configuration', new errors.ConfigurationError('bad'), 10, 'fatal'],
  ['aborted', new errors.RequestAbortedError('aborted'), 10, 'fatal'],
  ['not elasticsearch', new errors.ProductNotSupportedError('Elasticsearch'), 10, 'fatal'],
  ['plain bug', new TypeError('x is undefined'), 10, 'fatal'],
  ['a thrown string', 'boom', 10, 'fatal'],
  ['undefined', undefined, 10, 'fatal'],
];

describe('classifyBulkResponseError', () => {
  it.each(REQUEST_CASES)('%s → %s', (_label, error, docs, expected) => {
    expect(classifyBulkResponseError(error, docs)).toBe(expected);
  });

  it('asks to split on 413 when the batch size is not given', () => {
    expect(classifyBulkResponseError(responseError(413))).toBe('split');
  });
});

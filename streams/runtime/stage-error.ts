/**
 * Failures inside the pipeline as values: a closed set of codes (safe as metric labels), whether a
 * retry can help, and the stage they happened in. Anything that is not a StageError is a bug and is
 * treated as fatal.
 */
export const STAGE_ERROR_CODES = [
  // The input cannot be read: dead-lettered with its original bytes.
  'undecodable',
  'unknown_schema',
  'invalid_record',
  // The processor rejected this input for good.
  'processor_rejected',
  // Elasticsearch refused a document for good (mapping conflict, malformed document).
  'es_document_rejected',
  // A webhook endpoint refused an alert (4xx) or stayed unreachable through every retry.
  'webhook_failed',
  // A record larger than Kafka takes (MESSAGE_TOO_LARGE): no retry can write it.
  'record_too_large',
  // The LLM's answer stayed invalid through a retry, or the endpoint refused the request itself (4xx).
  'llm_invalid_output',
  'llm_rejected',
  // Transient: worth retrying with backoff.
  'es_unavailable',
  'kafka_unavailable',
  'timeout',
  // The LLM endpoint is down, rate-limiting, timing out, or the hourly token budget is spent.
  'llm_unavailable',
  // Cannot continue without an operator: bad credentials, missing permission.
  'es_unauthorized',
  'llm_unauthorized',
  'internal',
] as const;

export type StageErrorCode = (typeof STAGE_ERROR_CODES)[number];

/** How a failure is handled. */
export type Disposition = 'retry' | 'dead_letter' | 'fatal';

const FATAL_CODES: ReadonlySet<StageErrorCode> = new Set(['es_unauthorized', 'llm_unauthorized', 'internal']);
const RETRIABLE_CODES: ReadonlySet<StageErrorCode> = new Set([
  'es_unavailable',
  'kafka_unavailable',
  'timeout',
  'llm_unavailable',
]);

export class StageError extends Error {
  override readonly name = 'StageError';

  constructor(
    readonly code: StageErrorCode,
    message: string,
    readonly stage = 'unknown',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  get retriable(): boolean {
    return RETRIABLE_CODES.has(this.code);
  }

  get disposition(): Disposition {
    if (FATAL_CODES.has(this.code)) return 'fatal';
    return this.retriable ? 'retry' : 'dead_letter';
  }
}

/** Anything thrown that is not a StageError is a bug: fatal, never dead-lettered as the input's fault. */
export function asStageError(error: unknown, stage: string): StageError {
  if (error instanceof StageError) return error;
  return new StageError('internal', error instanceof Error ? error.message : String(error), stage, { cause: error });
}

import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type { Secret } from '../../schemas/connection-config.js';
import { OPENAI_DEFAULTS, type RetryPolicy } from '../../processors/embed/embedder-config.js';
import {
  assertEmbeddingPurpose,
  EmbedderError,
  type Embedder,
  type EmbeddingPurpose,
} from '../../processors/embed/embedder.js';
import { normalizeInPlace } from '../../processors/embed/normalize-vector.js';
import { retryAfterFromHeaders, retryDelay } from '../../processors/retry/backoff.js';

export interface OpenAiEmbedderOptions {
  /** Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  /** Bearer key; servers that need none get a placeholder (the client insists on one). */
  apiKey?: Secret;
  model: string;
  /** Vector length. With `requestDimensions` it is also sent, for models that can shorten vectors. */
  dimensions: number;
  requestDimensions?: boolean;
  /** Texts per request (default 64; OpenAI accepts up to 2,048). */
  batchSize?: number;
  /** Requests in flight at once, across all callers (default 4). */
  concurrency?: number;
  /** Requests that may wait for a slot before `embed` refuses, retriably (default 256). */
  maxQueuedRequests?: number;
  /** Per attempt (default 20 s; the client's own default is 10 minutes, longer than a consumer session). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** For tests: how to wait between attempts. */
  sleep?: (ms: number) => Promise<unknown>;
  random?: () => number;
}

/** Statuses worth another attempt: the request may succeed later unchanged (the client's own list). */
function retriableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Error text from a server is cut short: it may echo input, and it ends up in logs. */
function brief(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine;
}

/** Maps one failed attempt to an EmbedderError whose `retriable` decides whether to try again. */
export function classifyEmbeddingFailure(error: unknown): EmbedderError {
  if (error instanceof EmbedderError) return error;
  if (error instanceof APIConnectionTimeoutError) {
    return new EmbedderError('timeout', 'the embeddings endpoint did not answer in time', true, { cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new EmbedderError('embedder_unavailable', 'the embeddings endpoint is unreachable', true, { cause: error });
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const status = error.status;
    const retriable = retriableStatus(status);
    return new EmbedderError(
      retriable ? 'embedder_unavailable' : 'embedder_rejected',
      `the embeddings endpoint answered HTTP ${status}: ${brief(error.message)}`,
      retriable,
      { cause: error },
    );
  }
  return new EmbedderError('embedder_rejected', `embedding failed: ${brief(String(error))}`, false, { cause: error });
}

/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint through the `openai` client, which is
 * told not to retry (`maxRetries: 0`) so that retries follow one policy here: full-jitter
 * exponential backoff, honouring Retry-After, on 408/409/429/5xx, timeouts and connection errors;
 * other 4xx fail at once (`embedder_rejected`, not retriable). Vectors are L2-normalised here, as
 * not every compatible server normalises.
 */
export class OpenAiEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  readonly callShape: { textsPerCall: number; callsAtOnce: number };
  readonly #client: OpenAI;
  readonly #requestDimensions: boolean;
  readonly #batchSize: number;
  readonly #concurrency: number;
  readonly #maxQueued: number;
  readonly #retry: RetryPolicy;
  readonly #sleep: (ms: number) => Promise<unknown>;
  readonly #random: () => number;
  #active = 0;
  readonly #waiting: (() => void)[] = [];
  #closed = false;

  constructor(options: OpenAiEmbedderOptions) {
    this.model = options.model;
    this.dimensions = options.dimensions;
    this.#requestDimensions = options.requestDimensions ?? false;
    this.#batchSize = options.batchSize ?? OPENAI_DEFAULTS.batchSize;
    this.#concurrency = options.concurrency ?? OPENAI_DEFAULTS.concurrency;
    this.#maxQueued = options.maxQueuedRequests ?? OPENAI_DEFAULTS.maxQueuedRequests;
    this.#retry = { ...OPENAI_DEFAULTS.retry, ...options.retry };
    this.#sleep = options.sleep ?? sleep;
    this.#random = options.random ?? Math.random;
    for (const [key, value] of Object.entries({
      dimensions: this.dimensions,
      batchSize: this.#batchSize,
      concurrency: this.#concurrency,
      maxQueuedRequests: this.#maxQueued,
      attempts: this.#retry.attempts,
    })) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`${key} must be a positive integer`);
    }
    // Latency-bound: callers keep every request slot busy with full requests.
    this.callShape = { textsPerCall: this.#batchSize, callsAtOnce: this.#concurrency };
    this.#client = new OpenAI({
      baseURL: options.baseUrl,
      // Local OpenAI-compatible servers often need no key; the client refuses to start without one.
      apiKey: options.apiKey?.reveal() ?? 'no-key',
      maxRetries: 0,
      timeout: options.timeoutMs ?? OPENAI_DEFAULTS.timeoutMs,
    });
  }

  /**
   * The purpose (`Embedder.embed`'s second argument) is not sent: the `/embeddings` API has no
   * such field, and a model behind it that wants a query instruction is given it by the caller or
   * by the server. Queries and documents get the same vector for the same text.
   */
  async embed(texts: readonly string[], purpose: EmbeddingPurpose = 'document'): Promise<Float32Array[]> {
    assertEmbeddingPurpose(purpose);
    const batches: string[][] = [];
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      batches.push(texts.slice(start, start + this.#batchSize));
    }
    // One lane per slot: a long call keeps at most `concurrency` requests waiting, so the queue
    // bound limits concurrent callers rather than the length of one call.
    const results = new Array<Float32Array[]>(batches.length);
    let next = 0;
    let failed = false;
    const lane = async (): Promise<void> => {
      while (!failed && next < batches.length) {
        const index = next++;
        try {
          results[index] = await this.#withSlot(() => this.#embedBatch(batches[index]!));
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#concurrency, batches.length) }, lane));
    return results.flat();
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  /** Requests in flight and waiting (gauges for metrics). */
  get inFlight(): number {
    return this.#active;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  async #withSlot<T>(task: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new EmbedderError('embedder_unavailable', 'the embedder is closed', true);
    if (this.#active >= this.#concurrency) {
      if (this.#waiting.length >= this.#maxQueued) {
        throw new EmbedderError(
          'embedder_unavailable',
          `${this.#waiting.length} embedding requests already waiting (the bound); try again later`,
          true,
        );
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#active += 1;
    }
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter, or free it.
      const wake = this.#waiting.shift();
      if (wake) wake();
      else this.#active -= 1;
    }
  }

  async #embedBatch(input: string[]): Promise<Float32Array[]> {
    for (let attempt = 1; ; attempt++) {
      let wait: number | undefined;
      try {
        return await this.#request(input);
      } catch (caught) {
        const failure = classifyEmbeddingFailure(caught);
        if (!failure.retriable || attempt >= this.#retry.attempts || this.#closed) throw failure;
        if (caught instanceof APIError) wait = retryAfterFromHeaders(caught.headers as Headers | undefined, Date.now());
      }
      await this.#sleep(retryDelay(attempt, this.#retry, this.#random, wait));
    }
  }

  async #request(input: string[]): Promise<Float32Array[]> {
    const response = await this.#client.embeddings.create({
      model: this.model,
      input,
      // Plain floats: base64 (the client's default) is not served by every compatible server.
      encoding_format: 'float',
      ...(this.#requestDimensions ? { dimensions: this.dimensions } : {}),
    });
    const data = Array.isArray(response.data) ? response.data : [];
    if (data.length !== input.length) {
      throw new EmbedderError(
        'embedder_rejected',
        `the embeddings endpoint returned ${data.length} vectors for ${input.length} texts`,
        false,
      );
    }
    const vectors = new Array<Float32Array>(input.length);
    for (const [position, item] of data.entries()) {
      const index = Number.isInteger(item.index) ? item.index : position;
      const embedding: unknown = item.embedding;
      if (
        index < 0 ||
        index >= input.length ||
        vectors[index] !== undefined ||
        !Array.isArray(embedding) ||
        embedding.length !== this.dimensions ||
        !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))
      ) {
        throw new EmbedderError(
          'embedder_rejected',
          `the embeddings endpoint returned a malformed vector (expected ${this.dimensions} numbers per text; check NEON_EMBEDDINGS_DIMENSIONS)`,
          false,
        );
      }
      const vector = normalizeInPlace(Float32Array.from(embedding as number[]));
      if (!vector)
        throw new EmbedderError('embedder_rejected', 'the embeddings endpoint returned a zero vector', false);
      vectors[index] = vector;
    }
    return vectors;
  }
}

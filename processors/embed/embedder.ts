/**
 * Dense vectors for chunks, interactions and queries, behind one interface so the indexing stages
 * and the query service never know which model produced them. Implementations: the local
 * all-MiniLM-L6-v2 ONNX model run in-process, an OpenAI-compatible embeddings endpoint, and a
 * hashing embedder that exists for unit tests only (never a default).
 */
export interface Embedder {
  /** Model identity stored beside every vector (e.g. `all-MiniLM-L6-v2`), so indices never mix models. */
  readonly model: string;
  /** Vector length; the Elasticsearch `dense_vector` mapping is created with it. */
  readonly dimensions: number;
  /**
   * One L2-normalised vector per text, in input order. Texts longer than the model's limit are
   * truncated, never refused. Rejects with an EmbedderError.
   */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /**
   * How callers should hand texts over: an endpoint reached over the network is bound by its round
   * trip and wants several calls in flight; an in-process model is bound by the CPU and wants one.
   * Absent: one call of 32 texts at a time.
   */
  readonly callShape?: { textsPerCall: number; callsAtOnce: number };
  /** Releases the model or connections. */
  close(): Promise<void>;
}

export type EmbedderErrorCode = 'embedder_unavailable' | 'embedder_rejected' | 'model_missing' | 'timeout';

export class EmbedderError extends Error {
  override readonly name = 'EmbedderError';
  constructor(
    readonly code: EmbedderErrorCode,
    message: string,
    readonly retriable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

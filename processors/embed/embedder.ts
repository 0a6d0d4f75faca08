/**
 * What a text is embedded as: a `document` to be found (a chunk, an interaction) or a `query` that
 * searches documents. Retrieval models trained on asymmetric pairs (bge-small-en-v1.5) want an
 * instruction before a query and none before a document, so the same text can give two different
 * vectors; models without an instruction, and endpoints, give the same vector for both.
 */
export type EmbeddingPurpose = 'document' | 'query';

export const EMBEDDING_PURPOSES: readonly EmbeddingPurpose[] = ['document', 'query'];

/** Refuses a purpose that is neither (a caller in plain JavaScript, or a cast), whatever the model. */
export function assertEmbeddingPurpose(purpose: EmbeddingPurpose): void {
  if (!EMBEDDING_PURPOSES.includes(purpose)) throw new RangeError(`purpose must be document or query, not ${purpose}`);
}

/**
 * Dense vectors for chunks, interactions and queries, behind one interface so the indexing stages
 * and the query service never know which model produced them. Implementations: the local ONNX
 * models run in-process (all-MiniLM-L6-v2, bge-small-en-v1.5, each also int8-quantised), an
 * OpenAI-compatible embeddings endpoint, and a hashing embedder that exists for unit tests only
 * (never a default).
 */
export interface Embedder {
  /** Model identity stored beside every vector (e.g. `all-MiniLM-L6-v2`), so indices never mix models. */
  readonly model: string;
  /** Vector length; the Elasticsearch `dense_vector` mapping is created with it. */
  readonly dimensions: number;
  /**
   * One L2-normalised vector per text, in input order. Texts longer than the model's limit are
   * truncated, never refused. Rejects with an EmbedderError.
   *
   * `purpose` (default `document`) says what the texts are; a question is embedded with
   * `embed([q], 'query')`. A vector depends on the text *and* the purpose: whatever keeps vectors
   * by text must keep them by purpose too, or a document's vector could answer a query.
   */
  embed(texts: readonly string[], purpose?: EmbeddingPurpose): Promise<Float32Array[]>;
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

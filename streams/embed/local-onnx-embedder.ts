import { readFile, stat } from 'node:fs/promises';
import { LOCAL_DEFAULTS } from '../../processors/embed/embedder-config.js';
import {
  assertEmbeddingPurpose,
  EmbedderError,
  type Embedder,
  type EmbeddingPurpose,
} from '../../processors/embed/embedder.js';
import type { LocalModelFiles, LocalModelPin } from '../../processors/embed/model-pins.js';
import { OnnxInferencePool, type TokenBatch } from './onnx-inference-pool.js';
import { ModelTokenizer } from '../../processors/embed/tokenize-for-model.js';

export interface LocalEmbedderOptions {
  files: Pick<LocalModelFiles, 'onnx' | 'tokenizer'>;
  pin: Pick<
    LocalModelPin,
    'name' | 'dimensions' | 'maxTokens' | 'pooling' | 'queryInstruction' | 'oneTextPerInference'
  >;
  /**
   * Texts per inference (default 1). On CPU the model's time grows with the word pieces it is fed,
   * padding included, and a batch gains nothing else: over two runs of `npm run bench -- embed` on
   * one core, 60–66 texts/s at 1, 55–59 at 16 (sorted by length), 26–28 at 64 (arrival order).
   * Larger batches may pay with more intra-op threads. Must be 1 for a pin with
   * `oneTextPerInference` (the int8-quantised models).
   */
  batchSize?: number;
  /** Inferences at once, each on its own worker thread and session (default 1). */
  concurrency?: number;
  /** Cores each inference may use (default 1, so one worker is one core). */
  intraOpNumThreads?: number;
  /** Batches that may wait for a worker before `embed` refuses, retriably (default 256). */
  maxQueuedBatches?: number;
}

/**
 * A pinned BERT-family sentence model exported to ONNX (all-MiniLM-L6-v2, bge-small-en-v1.5) run
 * in-process: tokenised here, inferred on worker threads, pooled as the pin says (mean over the
 * attention mask, or the [CLS] vector) and L2-normalised, as sentence-transformers does. Queries get
 * the pin's query instruction first, documents never. Texts are sorted by length before batching
 * so a batch pads little, and returned in input order; input longer than the model's limit is
 * truncated.
 */
export async function openLocalOnnxEmbedder(options: LocalEmbedderOptions): Promise<Embedder> {
  const batchSize = options.batchSize ?? LOCAL_DEFAULTS.batchSize;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize must be a positive integer');
  if (batchSize > 1 && options.pin.oneTextPerInference) {
    throw new RangeError(
      `${options.pin.name} runs one text per inference: its int8 activations are scaled over the whole batch, so batching would change each text's vector`,
    );
  }
  for (const path of [options.files.onnx, options.files.tokenizer]) {
    const found = await stat(path).then(
      (s) => s.isFile(),
      () => false,
    );
    if (!found) {
      throw new EmbedderError(
        'model_missing',
        `the ${options.pin.name} model file ${path} is missing; run \`npm run neon -- infra prepare\` to download it`,
        false,
      );
    }
  }
  const tokenizer = new ModelTokenizer(
    JSON.parse(await readFile(options.files.tokenizer, 'utf8')) as unknown,
    options.pin.maxTokens,
  );
  const pool = await OnnxInferencePool.open({
    modelPath: options.files.onnx,
    dimensions: options.pin.dimensions,
    pooling: options.pin.pooling,
    workers: options.concurrency ?? LOCAL_DEFAULTS.concurrency,
    intraOpNumThreads: options.intraOpNumThreads ?? LOCAL_DEFAULTS.intraOpNumThreads,
    maxQueuedBatches: options.maxQueuedBatches ?? LOCAL_DEFAULTS.maxQueuedBatches,
  });
  return new LocalOnnxEmbedder(
    options.pin.name,
    options.pin.dimensions,
    options.pin.queryInstruction ?? '',
    tokenizer,
    pool,
    batchSize,
    options.concurrency ?? LOCAL_DEFAULTS.concurrency,
  );
}

class LocalOnnxEmbedder implements Embedder {
  constructor(
    readonly model: string,
    readonly dimensions: number,
    private readonly queryInstruction: string,
    private readonly tokenizer: ModelTokenizer,
    private readonly pool: OnnxInferencePool,
    private readonly batchSize: number,
    private readonly lanes: number,
  ) {}

  async embed(texts: readonly string[], purpose: EmbeddingPurpose = 'document'): Promise<Float32Array[]> {
    assertEmbeddingPurpose(purpose);
    if (texts.length === 0) return [];
    // The instruction is part of the text the model reads (and counts towards its word pieces), as
    // with sentence-transformers' prompts; a model without one embeds queries as documents.
    const prefix = purpose === 'query' ? this.queryInstruction : '';
    const encoded = texts.map((text) => this.tokenizer.encode(prefix + text));
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[a]!.length - encoded[b]!.length);
    const batches: number[][] = [];
    for (let start = 0; start < order.length; start += this.batchSize) {
      batches.push(order.slice(start, start + this.batchSize));
    }
    const vectors = new Array<Float32Array>(texts.length);
    // One lane per worker: a call of any size keeps at most `concurrency` batches in the pool, so
    // the pool's queue bound limits concurrent callers, not the length of one call.
    let next = 0;
    let failed = false;
    const lane = async (): Promise<void> => {
      while (!failed && next < batches.length) {
        const rows = batches[next++]!;
        try {
          const pooled = await this.pool.run(
            padBatch(
              rows.map((i) => encoded[i]!),
              this.tokenizer.padId,
            ),
          );
          rows.forEach((textIndex, row) => {
            vectors[textIndex] = pooled.slice(row * this.dimensions, (row + 1) * this.dimensions);
          });
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.lanes, batches.length) }, lane));
    return vectors;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Right-pads token id rows to the longest; the mask marks real tokens. */
export function padBatch(rows: readonly number[][], padId: number): TokenBatch {
  const columns = Math.max(...rows.map((r) => r.length));
  const ids = new BigInt64Array(rows.length * columns).fill(BigInt(padId));
  const mask = new BigInt64Array(rows.length * columns);
  rows.forEach((row, r) => {
    row.forEach((id, t) => {
      ids[r * columns + t] = BigInt(id);
      mask[r * columns + t] = 1n;
    });
  });
  return { rows: rows.length, columns, ids, mask };
}

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { EmbedderError } from '../../processors/embed/embedder.js';
import type { SentencePooling } from '../../processors/embed/model-pins.js';

/**
 * Runs a sentence model's ONNX graph on worker threads, one InferenceSession per worker, and
 * returns pooled (mean or CLS, as the model's pin says), L2-normalised sentence vectors.
 *
 * Why threads: onnxruntime-node runs `session.run` synchronously on the calling thread, so a batch
 * of 32 chunks would stall the event loop — Kafka heartbeats, HTTP handlers, metrics — for half a
 * second or more. On a worker the main thread only tokenises and waits. The number of workers is the
 * bound on concurrent inference; each uses `intraOpNumThreads` cores (1 by default, so one worker
 * is one core and figures are honest). Batches beyond the workers wait in a queue bounded by
 * `maxQueuedBatches`; past it `run` refuses with a retriable `embedder_unavailable`.
 *
 * A graph is accepted when it takes `input_ids` and `attention_mask` (int64), optionally
 * `token_type_ids` (fed zeros: one segment), and nothing else, and gives batch × sequence ×
 * `dimensions` token vectors (`last_hidden_state`, else its only output); anything else fails at
 * load, not at the first batch.
 *
 * The worker is plain CommonJS evaluated from a string and loads onnxruntime-node by resolved path,
 * so it runs the same under tsx, vitest and the compiled `dist/`.
 */
const WORKER_SOURCE = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ortPath);
const { modelPath, dimensions, intraOpNumThreads, pooling } = workerData;
const KNOWN_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids'];

ort.InferenceSession.create(modelPath, {
  intraOpNumThreads,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
}).then(
  (session) => {
    const missing = ['input_ids', 'attention_mask'].filter((name) => !session.inputNames.includes(name));
    const unknown = session.inputNames.filter((name) => !KNOWN_INPUTS.includes(name));
    if (missing.length > 0 || unknown.length > 0) {
      parentPort.postMessage({
        type: 'failed',
        message: 'the graph takes ' + JSON.stringify(session.inputNames) + '; a BERT-family sentence model takes input_ids, attention_mask and optionally token_type_ids',
      });
      return;
    }
    const output = session.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : session.outputNames[0];
    parentPort.on('message', (job) => run(session, output, job));
    parentPort.postMessage({ type: 'ready', inputs: session.inputNames, outputs: session.outputNames });
  },
  (error) => parentPort.postMessage({ type: 'failed', message: String(error && error.message || error) }),
);

async function run(session, outputName, job) {
  try {
    const { rows, columns, ids, mask } = job;
    const shape = [rows, columns];
    const feeds = {
      input_ids: new ort.Tensor('int64', ids, shape),
      attention_mask: new ort.Tensor('int64', mask, shape),
    };
    if (session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(rows * columns), shape);
    }
    const output = await session.run(feeds);
    const hidden = output[outputName];
    if (!hidden || hidden.dims.length !== 3 || hidden.dims[0] !== rows || hidden.dims[1] !== columns || hidden.dims[2] !== dimensions) {
      throw new Error('unexpected output shape ' + JSON.stringify(hidden && hidden.dims));
    }
    const states = hidden.data;
    const vectors = new Float32Array(rows * dimensions);
    // sentence-transformers' Pooling + Normalize, accumulated in float64. mean: over the positions
    // the attention mask keeps (padding excluded); cls: the first position, [CLS] (rows are
    // right-padded, so it is always there).
    const sum = new Float64Array(dimensions);
    for (let r = 0; r < rows; r++) {
      sum.fill(0);
      let kept = 0;
      for (let t = 0; t < (pooling === 'cls' ? 1 : columns); t++) {
        if (mask[r * columns + t] === 0n) continue;
        kept++;
        const base = (r * columns + t) * dimensions;
        for (let d = 0; d < dimensions; d++) sum[d] += states[base + d];
      }
      let norm = 0;
      for (let d = 0; d < dimensions; d++) {
        sum[d] /= Math.max(kept, 1);
        norm += sum[d] * sum[d];
      }
      norm = Math.sqrt(norm) || 1;
      for (let d = 0; d < dimensions; d++) vectors[r * dimensions + d] = sum[d] / norm;
    }
    parentPort.postMessage({ type: 'done', id: job.id, vectors }, [vectors.buffer]);
  } catch (error) {
    parentPort.postMessage({ type: 'error', id: job.id, message: String(error && error.message || error) });
  }
}
`;

export interface InferencePoolOptions {
  modelPath: string;
  dimensions: number;
  /** How each row's token vectors become its sentence vector (the model pin's `pooling`). */
  pooling: SentencePooling;
  /** Concurrent inferences: one worker thread and one session each. */
  workers: number;
  intraOpNumThreads: number;
  maxQueuedBatches: number;
}

/** One padded batch: `rows × columns` int64 token ids and attention mask, row-major. */
export interface TokenBatch {
  rows: number;
  columns: number;
  ids: BigInt64Array;
  mask: BigInt64Array;
}

interface Job extends TokenBatch {
  id: number;
  resolve: (vectors: Float32Array) => void;
  reject: (error: EmbedderError) => void;
}

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'done'; id: number; vectors: Float32Array }
  | { type: 'error'; id: number; message: string };

interface Slot {
  worker: Worker;
  job: Job | undefined;
}

const ortPath = createRequire(import.meta.url).resolve('onnxruntime-node');

function startWorker(options: InferencePoolOptions): Promise<Worker> {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      ortPath,
      modelPath: options.modelPath,
      dimensions: options.dimensions,
      pooling: options.pooling,
      intraOpNumThreads: options.intraOpNumThreads,
    },
  });
  return new Promise((resolve, reject) => {
    const fail = (message: string): void => {
      void worker.terminate();
      reject(new EmbedderError('model_missing', `cannot load the ONNX model ${options.modelPath}: ${message}`, false));
    };
    worker.once('message', (message: WorkerMessage) => {
      worker.removeAllListeners('error');
      worker.removeAllListeners('exit');
      if (message.type === 'ready') resolve(worker);
      else fail(message.type === 'failed' ? message.message : `unexpected ${message.type}`);
    });
    worker.once('error', (error) => fail(error.message));
    worker.once('exit', (code) => fail(`worker exited with code ${code}`));
  });
}

export class OnnxInferencePool {
  readonly #options: InferencePoolOptions;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #nextId = 0;
  #closed = false;

  private constructor(options: InferencePoolOptions) {
    this.#options = options;
  }

  /** Starts every worker and resolves once each has loaded the model. */
  static async open(options: InferencePoolOptions): Promise<OnnxInferencePool> {
    // Checked at run time too: the worker treats anything but 'cls' as mean.
    if (!(['mean', 'cls'] as readonly string[]).includes(options.pooling)) {
      throw new RangeError(`pooling must be mean or cls, not ${options.pooling}`);
    }
    for (const key of ['workers', 'intraOpNumThreads', 'maxQueuedBatches'] as const) {
      if (!Number.isInteger(options[key]) || options[key] < 1)
        throw new RangeError(`${key} must be a positive integer`);
    }
    const pool = new OnnxInferencePool(options);
    const started = await Promise.allSettled(Array.from({ length: options.workers }, () => startWorker(options)));
    for (const result of started) if (result.status === 'fulfilled') pool.#adopt(result.value);
    const failure = started.find((r) => r.status === 'rejected');
    if (failure) {
      await pool.close();
      throw failure.reason;
    }
    return pool;
  }

  /** Batches waiting for a worker (a gauge for metrics). */
  get queued(): number {
    return this.#queue.length;
  }

  /** Batches being inferred now. */
  get busy(): number {
    return this.#slots.filter((s) => s.job !== undefined).length;
  }

  /** `rows × dimensions` floats: one unit vector per row. */
  run(batch: TokenBatch): Promise<Float32Array> {
    if (this.#closed) {
      return Promise.reject(new EmbedderError('embedder_unavailable', 'the local embedder is closed', true));
    }
    if (this.#slots.length === 0) {
      return Promise.reject(new EmbedderError('embedder_unavailable', 'no inference worker is running', false));
    }
    if (this.#queue.length >= this.#options.maxQueuedBatches) {
      return Promise.reject(
        new EmbedderError(
          'embedder_unavailable',
          `${this.#queue.length} embedding batches already waiting (the bound); try again later`,
          true,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ ...batch, id: this.#nextId++, resolve, reject });
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closing = new EmbedderError('embedder_unavailable', 'the local embedder was closed', true);
    for (const job of this.#queue.splice(0)) job.reject(closing);
    const slots = this.#slots.splice(0);
    // A worker terminated in the middle of a run aborts the whole process in onnxruntime's native
    // code, so let each finish the batch it is on (a fraction of a second), within a bound.
    const idle = (slot: Slot): Promise<void> =>
      new Promise((resolve) => {
        const check = (): void => {
          if (slot.job === undefined) resolve();
          else setTimeout(check, 10);
        };
        check();
      });
    await Promise.race([Promise.all(slots.map(idle)), new Promise((resolve) => setTimeout(resolve, 5_000))]);
    for (const slot of slots) slot.job?.reject(closing);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  #adopt(worker: Worker): void {
    const slot: Slot = { worker, job: undefined };
    // Idle workers must not keep the process alive; busy ones must (a pending embed is work).
    worker.unref();
    worker.on('message', (message: WorkerMessage) => {
      const job = slot.job;
      if (!job || (message.type !== 'done' && message.type !== 'error') || message.id !== job.id) return;
      slot.job = undefined;
      worker.unref();
      if (message.type === 'done') job.resolve(message.vectors);
      else job.reject(new EmbedderError('embedder_rejected', `inference failed: ${message.message}`, false));
      this.#dispatch();
    });
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      const index = this.#slots.indexOf(slot);
      if (index === -1) return;
      this.#slots.splice(index, 1);
      slot.job?.reject(new EmbedderError('embedder_unavailable', 'an inference worker stopped unexpectedly', true));
      if (!this.#closed) this.#replaceWorker();
    });
    this.#slots.push(slot);
  }

  /** A crashed worker is replaced once; if the model no longer loads, waiting batches fail. */
  #replaceWorker(): void {
    startWorker(this.#options).then(
      (worker) => {
        if (this.#closed) {
          void worker.terminate();
          return;
        }
        this.#adopt(worker);
        this.#dispatch();
      },
      (error: unknown) => {
        if (this.#slots.length > 0) return;
        const failure =
          error instanceof EmbedderError
            ? error
            : new EmbedderError('embedder_unavailable', 'no inference worker could be restarted', false);
        for (const job of this.#queue.splice(0)) job.reject(failure);
      },
    );
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (slot.job !== undefined) continue;
      const job = this.#queue.shift();
      if (!job) return;
      slot.job = job;
      slot.worker.ref();
      // Copies, not transfers: the caller's arrays stay usable (they are small next to the model).
      slot.worker.postMessage({ id: job.id, rows: job.rows, columns: job.columns, ids: job.ids, mask: job.mask });
    }
  }
}

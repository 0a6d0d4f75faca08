import type { Embedder } from '../../processors/embed/embedder.js';

export interface EmbeddingBatcherOptions {
  /** Texts per model call. Default: the embedder's `callShape`, else 32. */
  maxBatch: number;
  /** How long a text waits for companions. */
  lingerMs: number;
  /** Model calls at once; texts beyond wait in the (bounded by the stage's in-flight limit) queue. */
  maxConcurrent: number;
  /** Vectors of recent texts kept, so a text seen again is not embedded again (0: none). */
  cacheSize: number;
}

const DEFAULTS: EmbeddingBatcherOptions = { maxBatch: 32, lingerMs: 5, maxConcurrent: 1, cacheSize: 4_096 };

/**
 * Stages embed one record at a time; models are far cheaper per text in batches. This gathers the
 * texts of concurrent records into batches (by count or linger time) and hands each caller its own
 * vector. The queue holds at most what the stage admitted (its in-flight bound), so it is bounded.
 *
 * Calls are shaped by the embedder (`callShape`): a remote endpoint gets several full requests in
 * flight, an in-process model one call at a time. The same text is embedded once: a text already
 * waiting or in a call is joined, and the vectors of the last `cacheSize` texts are kept (a
 * redelivered record, or the same tuple found by both extraction variants, costs no model call).
 * Everything it embeds is a document (index stages), so a vector depends on the text alone and
 * sharing it is exact; queries must not come through here (`Embedder.embed`'s purpose).
 */
export class EmbeddingBatcher {
  private readonly options: EmbeddingBatcherOptions;
  private queue: { text: string; resolve: (v: Float32Array) => void; reject: (e: unknown) => void }[] = [];
  private readonly pending = new Map<string, Promise<Float32Array>>();
  private readonly recent = new Map<string, Float32Array>();
  private timer: NodeJS.Timeout | undefined;
  private running = 0;
  /** Texts answered without a model call (from the cache or joined to a pending one). */
  reused = 0;

  constructor(
    private readonly embedder: Embedder,
    options: Partial<EmbeddingBatcherOptions> = {},
  ) {
    const shape = embedder.callShape;
    this.options = {
      ...DEFAULTS,
      ...(shape ? { maxBatch: shape.textsPerCall, maxConcurrent: shape.callsAtOnce } : {}),
      ...options,
    };
  }

  embed(text: string): Promise<Float32Array> {
    const known = this.recent.get(text);
    if (known) {
      // Refreshed as the most recent entry: a Map iterates in insertion order.
      this.recent.delete(text);
      this.recent.set(text, known);
      this.reused += 1;
      return Promise.resolve(known);
    }
    const waiting = this.pending.get(text);
    if (waiting) {
      this.reused += 1;
      return waiting;
    }
    const vector = new Promise<Float32Array>((resolve, reject) => {
      this.queue.push({ text, resolve, reject });
      if (this.queue.length >= this.options.maxBatch) this.pump();
      else this.timer ??= setTimeout(() => this.pump(), this.options.lingerMs);
    });
    this.pending.set(text, vector);
    vector.then(
      (v) => {
        this.pending.delete(text);
        this.remember(text, v);
      },
      () => this.pending.delete(text),
    );
    return vector;
  }

  private remember(text: string, vector: Float32Array): void {
    if (this.options.cacheSize <= 0) return;
    this.recent.set(text, vector);
    if (this.recent.size > this.options.cacheSize) {
      const oldest = this.recent.keys().next().value as string;
      this.recent.delete(oldest);
    }
  }

  private pump(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.running < this.options.maxConcurrent && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.running += 1;
      this.embedder
        .embed(
          batch.map((item) => item.text),
          'document',
        )
        .then(
          (vectors) => batch.forEach((item, i) => item.resolve(vectors[i]!)),
          (error: unknown) => batch.forEach((item) => item.reject(error)),
        )
        .finally(() => {
          this.running -= 1;
          if (this.queue.length > 0) this.pump();
        });
    }
  }
}

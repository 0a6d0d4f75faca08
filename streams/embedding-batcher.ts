import type { Embedder } from '../processors/embed/embedder.js';

export interface EmbeddingBatcherOptions {
  /** Texts per model call. */
  maxBatch: number;
  /** How long a text waits for companions. */
  lingerMs: number;
  /** Model calls at once; texts beyond wait in the (bounded by the stage's in-flight limit) queue. */
  maxConcurrent: number;
}

const DEFAULTS: EmbeddingBatcherOptions = { maxBatch: 32, lingerMs: 5, maxConcurrent: 1 };

/**
 * Stages embed one record at a time; models are far cheaper per text in batches. This gathers the
 * texts of concurrent records into batches (by count or linger time) and hands each caller its own
 * vector. The queue holds at most what the stage admitted (its in-flight bound), so it is bounded.
 */
export class EmbeddingBatcher {
  private readonly options: EmbeddingBatcherOptions;
  private queue: { text: string; resolve: (v: Float32Array) => void; reject: (e: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running = 0;

  constructor(
    private readonly embedder: Embedder,
    options: Partial<EmbeddingBatcherOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  embed(text: string): Promise<Float32Array> {
    return new Promise((resolve, reject) => {
      this.queue.push({ text, resolve, reject });
      if (this.queue.length >= this.options.maxBatch) this.pump();
      else this.timer ??= setTimeout(() => this.pump(), this.options.lingerMs);
    });
  }

  private pump(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.running < this.options.maxConcurrent && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.running += 1;
      this.embedder
        .embed(batch.map((item) => item.text))
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

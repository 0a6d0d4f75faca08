/**
 * Markup's text analysis (analyse-text.ts: sentences, tagging, dates) on worker threads.
 *
 * Why: tagging is some 10 ms per thousand characters on one core, all of it synchronous. On the
 * stage's own thread a long article (news pages reach 100,000 characters: over a second) stalls the
 * event loop — the consumer's heartbeats, the API in the single-process mode — and every article
 * queued behind it. On workers the stage's thread only links mentions to the registry, articles are
 * analysed side by side, and one stage uses as many cores as it has workers.
 *
 * Jobs wait in one queue and go to whichever worker is free, so a long article holds up one worker,
 * not the articles behind it. A worker that dies (out of memory on a pathological text) is replaced;
 * its article is tried once more on the new worker and then refused with the reason, so one poison
 * article is dead-lettered rather than retried for ever. The threads are unref'd: they never keep
 * the process alive.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { TextAnalysis } from './analyse-text.js';

export class MarkupWorkerError extends Error {
  override readonly name = 'MarkupWorkerError';
  constructor(
    message: string,
    /** True when no worker can start at all: nothing to do with the article, the stage cannot work. */
    readonly broken = false,
  ) {
    super(message);
  }
}

/** Workers that die before they are ready, one after another, before the pool gives up. */
const MAX_START_FAILURES = 3;

interface Job {
  id: number;
  text: string;
  publishedAt: number;
  attempts: number;
  resolve: (analysis: TextAnalysis) => void;
  reject: (error: Error) => void;
}

interface Reply {
  id?: number;
  ready?: true;
  analysis?: TextAnalysis;
  error?: string;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
  ready: boolean;
}

export interface MarkupWorkerOptions {
  /** Heap limits per worker (e.g. maxOldGenerationSizeMb): a pathological text kills its worker, not the process. */
  resourceLimits?: ResourceLimits;
}

/**
 * The worker's module. From the compiled `dist/` it is the sibling `.js`; run from source (tsx, the
 * tests) it is the `.ts`, which a worker can only load after registering tsx's loader itself.
 */
function spawn(options: MarkupWorkerOptions): Worker {
  const limits = options.resourceLimits ? { resourceLimits: options.resourceLimits } : {};
  const self = import.meta.url;
  if (!self.endsWith('.ts')) return new Worker(new URL('./analyse-text-worker.js', self), limits);
  const tsxApi = createRequire(self)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs');
  const entry = new URL('./analyse-text-worker.ts', self).href;
  const bootstrap =
    `import { register } from ${JSON.stringify(pathToFileURL(tsxApi).href)};\n` +
    `register();\nawait import(${JSON.stringify(entry)});\n`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`), limits);
}

export class MarkupWorkers {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;
  private startFailures = 0;
  private broken: MarkupWorkerError | undefined;

  constructor(
    readonly size: number,
    private readonly options: MarkupWorkerOptions = {},
  ) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`markup workers: a whole number ≥ 1, got ${size}`);
    for (let i = 0; i < size; i++) this.slots.push(this.start());
  }

  /**
   * analyseText(text, publishedAt) on a worker. Rejects with a MarkupWorkerError when the analysis
   * threw or its worker died twice (the article's fault), or, `broken`, when workers cannot start.
   */
  analyse(text: string, publishedAt: number): Promise<TextAnalysis> {
    if (this.broken) return Promise.reject(this.broken);
    if (this.closed) return Promise.reject(new MarkupWorkerError('markup workers are closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, text, publishedAt, attempts: 0, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops the workers; what is still queued or being analysed is rejected. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(this.broken ?? new MarkupWorkerError('markup workers closed'));
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
  }

  private start(): Slot {
    const slot: Slot = { worker: spawn(this.options), job: undefined, ready: false };
    slot.worker.unref();
    slot.worker.on('message', (reply: Reply) => this.settle(slot, reply));
    slot.worker.on('error', (error) => this.replace(slot, error.message));
    slot.worker.on('exit', (code) => this.replace(slot, `exited with code ${code}`));
    return slot;
  }

  private settle(slot: Slot, reply: Reply): void {
    if (reply.ready) {
      slot.ready = true;
      this.startFailures = 0;
      return;
    }
    const job = slot.job;
    if (job === undefined || job.id !== reply.id) return;
    slot.job = undefined;
    if (reply.analysis !== undefined) job.resolve(reply.analysis);
    else job.reject(new MarkupWorkerError(reply.error ?? 'no analysis'));
    this.dispatch();
  }

  private replace(slot: Slot, why: string): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return; // already replaced ('error' is followed by 'exit')
    const job = slot.job;
    slot.job = undefined;
    if (this.closed) {
      job?.reject(this.broken ?? new MarkupWorkerError('markup workers closed'));
      return;
    }
    if (!slot.ready && ++this.startFailures >= MAX_START_FAILURES) {
      this.broken = new MarkupWorkerError(`markup workers cannot start (${MAX_START_FAILURES} in a row): ${why}`, true);
      job?.reject(this.broken);
      this.slots.splice(index, 1);
      void this.close();
      return;
    }
    this.slots[index] = this.start();
    if (job !== undefined) {
      // A worker that died while starting says nothing about the article.
      if (slot.ready) job.attempts += 1;
      if (job.attempts >= 2) job.reject(new MarkupWorkerError(`its markup worker died twice: ${why}`));
      else this.queue.unshift(job);
    }
    this.dispatch();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.job !== undefined) continue;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.worker.postMessage({ id: job.id, text: job.text, publishedAt: job.publishedAt });
    }
  }
}

/**
 * M2's chunk batching in a stream: the chunks of each selected pair (s, o) are gathered k at a time
 * (NEON §2.1 step 3). A stream has no "all chunks of the pair", so a batch also closes when it has
 * waited `lingerMs` — the price of a partial batch is one more call, the price of waiting longer is
 * a later interaction and inputs held uncommitted. The extractor sorts each batch by time.
 *
 * Each chunk comes with a waiter (whoever must hear that its batch was extracted: the stage's
 * commit). A chunk already in the open batch of its pair (a redelivery) only adds its waiter.
 * Pure: the clock is passed in.
 */
import type { Chunk, ChunkEntity } from '../../schemas/records.generated.js';

export interface PairBatch<W> {
  key: string;
  subject: ChunkEntity;
  object: ChunkEntity;
  chunks: Chunk[];
  waiters: W[];
  openedAt: number;
}

export interface PairBatchOptions {
  /** Chunks per batch (the paper's k). */
  k: number;
  /** Longest a partial batch waits for more chunks, in milliseconds. */
  lingerMs: number;
}

export const DEFAULT_PAIR_BATCHING: PairBatchOptions = { k: 4, lingerMs: 5_000 };

export const pairKey = (subjectId: string, objectId: string): string => `${subjectId}\u0000${objectId}`;

export class PairBatches<W> {
  private readonly options: PairBatchOptions;
  private readonly open = new Map<string, PairBatch<W>>();

  constructor(options: Partial<PairBatchOptions> = {}) {
    this.options = { ...DEFAULT_PAIR_BATCHING, ...options };
    if (!Number.isInteger(this.options.k) || this.options.k < 1) throw new Error('k must be a positive integer');
  }

  get size(): number {
    return this.open.size;
  }

  /** Adds a chunk to its pair's batch; returns the batch when this chunk filled it. */
  add(subject: ChunkEntity, object: ChunkEntity, chunk: Chunk, waiter: W, now: number): PairBatch<W> | undefined {
    const key = pairKey(subject.id, object.id);
    let batch = this.open.get(key);
    if (!batch) {
      batch = { key, subject, object, chunks: [], waiters: [], openedAt: now };
      this.open.set(key, batch);
    }
    batch.waiters.push(waiter);
    if (!batch.chunks.some((c) => c.id === chunk.id)) batch.chunks.push(chunk);
    if (batch.chunks.length < this.options.k) return undefined;
    this.open.delete(key);
    return batch;
  }

  /** Batches that have waited their linger out, oldest first. */
  due(now: number): PairBatch<W>[] {
    const due = [...this.open.values()].filter((b) => now - b.openedAt >= this.options.lingerMs);
    for (const batch of due) this.open.delete(batch.key);
    return due.sort((a, b) => a.openedAt - b.openedAt);
  }

  /** When the oldest open batch falls due (undefined: none open). */
  nextDueAt(): number | undefined {
    let first: number | undefined;
    for (const batch of this.open.values()) first = Math.min(first ?? Infinity, batch.openedAt);
    return first === undefined ? undefined : first + this.options.lingerMs;
  }

  /** Every open batch, whatever its size: at shutdown, or at the end of a finite replay. */
  drain(): PairBatch<W>[] {
    const all = [...this.open.values()];
    this.open.clear();
    return all;
  }
}

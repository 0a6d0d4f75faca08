/**
 * M2's chunk batching in a stream (NEON §2.1 step 3): "retrieved chunks sorted by time-stamp are
 * partitioned into batches of size k", so information from similar dates shares a prompt. A stream
 * never has "all the chunks of the pair", so a batch is a consecutive slice of the pair's chunks in
 * the order they come (time order, for a stream published in time order), and it closes on what
 * the chunks themselves say, never on the wall clock:
 *
 * - **count**: it holds k chunks;
 * - **event time**: a chunk arrives (of any pair) whose time is at least `spanMs` past the time of
 *   the chunk that opened the batch — the stream has moved on from those dates;
 * - **held bound**: more than `maxHeldChunks` chunks wait in open batches (each counted once); the
 *   batches opened first close until it holds again. A waiting chunk keeps its input uncommitted
 *   and takes a place of the stage's in-flight bound, so the bound is what keeps a backlog moving
 *   without a clock: it counts chunks, so the same input closes the same batches.
 *
 * Closing by these rules, the same chunks in the same order give the same batches however they were
 * grouped into polls, however fast the LLM answered and however long the stream paused. (The
 * wall-clock safety flush of a quiet stream is in batch-rounds.ts: it extracts a batch early without
 * closing it, so it changes no batch.)
 *
 * A batch may open with chunks the pair co-occurred in before it was selected (`earlier`, kept by
 * the planner): those chunks were committed long ago and do not wait. Pure: no clock, no I/O.
 */
import type { Chunk, ChunkEntity } from '../../schemas/records.generated.js';

export const DAY_MS = 86_400_000;

export interface PairBatchOptions {
  /** Chunks per batch (the paper's k). */
  k: number;
  /** Event time a batch stays open, from the time of the chunk that opened it. */
  spanMs: number;
  /** Chunks waiting in open batches, at most (each once, whatever the number of its pairs). */
  maxHeldChunks: number;
  /**
   * Wall clock: once no new chunk has come for this long, open batches are extracted as they stand
   * (batch-rounds.ts), so a stream that went quiet does not hold its last chunks forever.
   */
  quietMs: number;
}

export const DEFAULT_PAIR_BATCHING: PairBatchOptions = {
  k: 4,
  spanMs: DAY_MS,
  maxHeldChunks: 128,
  quietMs: 30_000,
};

export const pairKey = (subjectId: string, objectId: string): string => `${subjectId}\u0000${objectId}`;

/** Time order, then id: the order chunks stand in a batch and in its prompt. */
export const byTimeThenId = (a: Chunk, b: Chunk): number => a.t - b.t || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export type BatchCloseReason = 'full' | 'event_time' | 'held' | 'stop';

export class PairBatch {
  /** Chunks in time order. */
  readonly chunks: Chunk[] = [];
  /** Chunks that joined when they arrived and wait for the batch (the earlier ones do not). */
  readonly held = new Set<string>();
  closedBy: BatchCloseReason | undefined;

  constructor(
    readonly key: string,
    readonly subject: ChunkEntity,
    readonly object: ChunkEntity,
    /** Event time of the chunk that opened it: the span counts from here. */
    readonly openedAt: number,
    /** Order of opening, for ties. */
    readonly seq: number,
  ) {}

  get open(): boolean {
    return this.closedBy === undefined;
  }

  has(chunkId: string): boolean {
    return this.chunks.some((c) => c.id === chunkId);
  }

  /** Takes a chunk in at its place in time order; false when it is already in. */
  insert(chunk: Chunk): boolean {
    if (this.has(chunk.id)) return false;
    let at = this.chunks.length;
    while (at > 0 && byTimeThenId(this.chunks[at - 1]!, chunk) > 0) at -= 1;
    this.chunks.splice(at, 0, chunk);
    return true;
  }

  /** Puts a newer version of a chunk (more sources merged in) in place of the one held; false if not held or unchanged. */
  replace(chunk: Chunk): boolean {
    const at = this.chunks.findIndex((c) => c.id === chunk.id);
    if (at < 0 || sameSources(this.chunks[at]!, chunk)) return false;
    this.chunks[at] = chunk;
    return true;
  }
}

function sameSources(a: Chunk, b: Chunk): boolean {
  return (
    a.provenance.length === b.provenance.length &&
    a.provenance.every((p, i) => p.article_id === b.provenance[i]!.article_id && p.url === b.provenance[i]!.url)
  );
}

export function resolvePairBatching(options: Partial<PairBatchOptions> = {}): PairBatchOptions {
  const resolved = { ...DEFAULT_PAIR_BATCHING, ...options };
  if (!Number.isInteger(resolved.k) || resolved.k < 1) throw new Error('k must be a positive integer');
  if (!(resolved.spanMs > 0)) throw new Error('spanMs must be positive');
  if (!Number.isInteger(resolved.maxHeldChunks) || resolved.maxHeldChunks < 1) {
    throw new Error('maxHeldChunks must be a positive integer');
  }
  if (!(resolved.quietMs >= 0)) throw new Error('quietMs must not be negative');
  return resolved;
}

/** The open batch of every selected pair, closed by count, event time and the held bound. */
export class PairBatches {
  readonly options: PairBatchOptions;
  private readonly open = new Map<string, PairBatch>();
  /** chunk id → open batches it waits in. */
  private readonly heldIn = new Map<string, number>();
  private eventTime = -Infinity;
  private nextSeq = 0;

  constructor(options: Partial<PairBatchOptions> = {}) {
    this.options = resolvePairBatching(options);
  }

  get size(): number {
    return this.open.size;
  }

  /** Chunks waiting in open batches, each once. */
  get heldChunks(): number {
    return this.heldIn.size;
  }

  /** The stream's event time moves to `t` (never back): the batches it has passed close, oldest first. */
  advance(t: number): PairBatch[] {
    if (t > this.eventTime) this.eventTime = t;
    const due = [...this.open.values()].filter((b) => b.openedAt + this.options.spanMs <= this.eventTime);
    return this.closeAll(due.sort(openingOrder), 'event_time');
  }

  /**
   * Adds an arriving chunk to its pair's open batch, opening one (with `earlier` chunks of the pair)
   * if there is none. Returns the batch, and whether this chunk filled it (it is then closed).
   */
  add(
    subject: ChunkEntity,
    object: ChunkEntity,
    chunk: Chunk,
    earlier: readonly Chunk[] = [],
  ): { batch: PairBatch; full: boolean } {
    const key = pairKey(subject.id, object.id);
    let batch = this.open.get(key);
    if (!batch) {
      batch = new PairBatch(key, subject, object, chunk.t, this.nextSeq++);
      this.open.set(key, batch);
      for (const c of earlier) batch.insert(c);
    }
    if (batch.insert(chunk) && !batch.held.has(chunk.id)) {
      batch.held.add(chunk.id);
      this.heldIn.set(chunk.id, (this.heldIn.get(chunk.id) ?? 0) + 1);
    }
    if (batch.chunks.length < this.options.k) return { batch, full: false };
    this.close(batch, 'full');
    return { batch, full: true };
  }

  /** Closes the batches opened first until no more than `maxHeldChunks` chunks wait. */
  enforceHeldBound(): PairBatch[] {
    if (this.heldIn.size <= this.options.maxHeldChunks) return [];
    const closed: PairBatch[] = [];
    for (const batch of [...this.open.values()].sort(openingOrder)) {
      if (this.heldIn.size <= this.options.maxHeldChunks) break;
      this.close(batch, 'held');
      closed.push(batch);
    }
    return closed;
  }

  /** A newer version of a chunk (a survivor re-emitted with more sources): the open batches that hold it take it. */
  update(chunk: Chunk): PairBatch[] {
    return [...this.open.values()].filter((b) => b.replace(chunk));
  }

  /** Every open batch, oldest first: at shutdown, or at the end of a finite list. */
  drain(): PairBatch[] {
    return this.closeAll([...this.open.values()].sort(openingOrder), 'stop');
  }

  private closeAll(batches: PairBatch[], reason: BatchCloseReason): PairBatch[] {
    for (const batch of batches) this.close(batch, reason);
    return batches;
  }

  private close(batch: PairBatch, reason: BatchCloseReason): void {
    batch.closedBy = reason;
    this.open.delete(batch.key);
    for (const id of batch.held) {
      const n = (this.heldIn.get(id) ?? 1) - 1;
      if (n <= 0) this.heldIn.delete(id);
      else this.heldIn.set(id, n);
    }
  }
}

function openingOrder(a: PairBatch, b: PairBatch): number {
  return a.openedAt - b.openedAt || a.seq - b.seq;
}

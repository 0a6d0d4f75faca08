/**
 * Back-fill on spikes (NEON §2.1 extracts for an entity over its spike window, not only from the
 * moment it was found spiking). Targets are judged per chunk as it arrives, and the spike alert that
 * makes an entity a target is decided from the very chunks that mention it, so those chunks — the
 * coverage that made it spike, which SpikeTargets counts in scope from `beforeStartMs` before the
 * episode — have passed extraction before the alert reached it. This keeps, per entity, the recent
 * chunks that mentioned it while it was not a target, and hands them back as M1 calls once the
 * entity is a target for their time.
 *
 * When: at the entity's first chunk planned as a target after its episode started (its first
 * forward extraction of the episode), inside the synchronous, input-ordered planning, so the
 * back-fill is an output of that chunk and its offset is committed only once the back-filled
 * interactions are acknowledged (at-least-once, like every other call).
 *
 * What: M1 only, through the extractor's own `m1(subject, chunk)`: ids come from the statement and
 * the chunk's time alone (interaction-extractor.ts), so a back-filled record is the record a
 * forward extraction of that chunk writes, and a chunk back-filled and later redelivered, replayed
 * or extracted forward overwrites it. M2 is left alone: its batches are a function of the input
 * order (extraction-plan.ts) and a back-fill would make them depend on when an alert arrived.
 *
 * Bounded: chunks by event time (`lookbackMs` behind the newest), in all (`maxBufferedChunks`, the
 * oldest forgotten first) and per episode (`maxChunksPerEpisode`, the ones nearest the spike kept:
 * the rest are dropped and counted, never queued, so a burst cannot flood the LLM budget).
 */
import type { Chunk, ChunkEntity } from '../../schemas/records.generated.js';
import type { ExtractionTargets } from './extraction-targets.js';

const DAY_MS = 86_400_000;

export interface BackfillOptions {
  /** How far back (event time, behind the newest chunk) chunks are kept for a back-fill; 0 turns it off. */
  lookbackMs: number;
  /** Chunks back-filled per entity and episode, at most: the newest of those due. */
  maxChunksPerEpisode: number;
  /** Back-fill calls running at once: forward extraction keeps the rest of the LLM's concurrency. */
  concurrency: number;
  /** Chunks kept in all, whatever their time. */
  maxBufferedChunks: number;
}

/**
 * Three days: the spike rule's rolling window and SpikeTargets' default `beforeStartMs`, so every
 * chunk the targets count in an episode's scope and that came before its alert is still kept.
 */
export const DEFAULT_BACKFILL: BackfillOptions = {
  lookbackMs: 3 * DAY_MS,
  maxChunksPerEpisode: 50,
  concurrency: 2,
  maxBufferedChunks: 50_000,
};

export interface BackfillCall {
  subject: ChunkEntity;
  chunk: Chunk;
}

export interface BackfillDecision {
  calls: BackfillCall[];
  /** Chunks that were due but over the episode's cap: not extracted. */
  dropped: number;
}

interface Held {
  chunk: Chunk;
  /** Entities this chunk still waits to be extracted for. */
  pending: Set<string>;
}

export class SpikeBackfill {
  readonly options: BackfillOptions;
  /** chunk id → chunk and the entities it is held for, in arrival order (nearly time order). */
  private readonly held = new Map<string, Held>();
  /** entity id → ids of the chunks held for it. */
  private readonly byEntity = new Map<string, Set<string>>();
  private latest = -Infinity;

  constructor(options: Partial<BackfillOptions> = {}) {
    this.options = { ...DEFAULT_BACKFILL, ...options };
  }

  get enabled(): boolean {
    return this.options.lookbackMs > 0 && this.options.maxChunksPerEpisode > 0;
  }

  /** Chunks held now (for tests and metrics). */
  size(): number {
    return this.held.size;
  }

  /**
   * A chunk read back on a restart, from before the stage's committed position: whether it was
   * extracted for an entity then is not known, so it is held for all of them. At worst a chunk is
   * extracted again, which writes the same records; never is one missed.
   */
  remember(chunk: Chunk): void {
    if (!this.enabled) return;
    this.hold(
      chunk,
      chunk.entities.map((e) => e.id),
    );
  }

  /**
   * Must be called in input order with each chunk and the subjects it was planned with (those the
   * forward path extracts for). Returns the back-fill that chunk triggers.
   */
  observe(chunk: Chunk, subjectIds: ReadonlySet<string>, targets: ExtractionTargets): BackfillDecision {
    const decision: BackfillDecision = { calls: [], dropped: 0 };
    if (!this.enabled) return decision;
    for (const id of subjectIds) this.release(chunk.id, id);
    for (const id of subjectIds) {
      const due = this.due(id, targets);
      decision.calls.push(...due.calls);
      decision.dropped += due.dropped;
    }
    const others = chunk.entities.map((e) => e.id).filter((id) => !subjectIds.has(id));
    this.hold(chunk, others);
    return decision;
  }

  /** The held chunks of `entityId` that it is now a target for, newest first up to the cap. */
  private due(entityId: string, targets: ExtractionTargets): BackfillDecision {
    const ids = this.byEntity.get(entityId);
    if (!ids || ids.size === 0) return { calls: [], dropped: 0 };
    const due: Chunk[] = [];
    for (const id of ids) {
      const chunk = this.held.get(id)?.chunk;
      if (chunk && targets.isTarget(entityId, chunk.t)) due.push(chunk);
    }
    if (due.length === 0) return { calls: [], dropped: 0 };
    for (const chunk of due) this.release(chunk.id, entityId);
    // Nearest the spike first; then in time order, so the calls come in the order a forward run made them.
    due.sort((a, b) => b.t - a.t || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const kept = due.slice(0, this.options.maxChunksPerEpisode);
    kept.sort((a, b) => a.t - b.t || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const calls = kept.flatMap((chunk) => {
      const subject = chunk.entities.find((e) => e.id === entityId);
      return subject ? [{ subject, chunk }] : [];
    });
    return { calls, dropped: due.length - kept.length };
  }

  private hold(chunk: Chunk, entityIds: readonly string[]): void {
    if (chunk.t > this.latest) this.latest = chunk.t;
    if (chunk.t < this.latest - this.options.lookbackMs) return;
    const known = this.held.get(chunk.id);
    // A later version of a chunk (dedupe merged a duplicate's source in) replaces the one held, so a back-fill cites every source.
    const held: Held = known ? { chunk, pending: known.pending } : { chunk, pending: new Set() };
    for (const id of entityIds) {
      held.pending.add(id);
      let ids = this.byEntity.get(id);
      if (!ids) {
        ids = new Set();
        this.byEntity.set(id, ids);
      }
      ids.add(chunk.id);
    }
    if (held.pending.size > 0) this.held.set(chunk.id, held);
    this.evict();
  }

  private release(chunkId: string, entityId: string): void {
    const held = this.held.get(chunkId);
    if (!held?.pending.delete(entityId)) return;
    const ids = this.byEntity.get(entityId);
    ids?.delete(chunkId);
    if (ids?.size === 0) this.byEntity.delete(entityId);
    if (held.pending.size === 0) this.held.delete(chunkId);
  }

  private evict(): void {
    // The front holds the oldest arrivals; an older chunk behind a newer one is forgotten a little later, never early.
    for (const [id, held] of this.held) {
      if (this.held.size <= this.options.maxBufferedChunks && held.chunk.t >= this.latest - this.options.lookbackMs) {
        break;
      }
      for (const entityId of [...held.pending]) this.release(id, entityId);
    }
  }
}

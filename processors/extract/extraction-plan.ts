/**
 * What extraction does with one unique chunk, shared by the Kafka stage and by finite runs (the
 * evaluation, the benchmark):
 *
 * - subjects: the chunk's entities that are targets at the chunk's time (none: no M1 call, which is
 *   the cost spike gating saves);
 * - M1: one call per subject;
 * - M2: the chunk counts towards the co-occurrence statistics once, and joins the batch of every
 *   selected pair (subject, object) it mentions (pair-batches.ts).
 *
 * A chunk id comes more than once: a redelivery, and above all a dedupe survivor written again with
 * the sources of a duplicate merged in. Only its first sight counts in TF-IDF and joins batches; a
 * later version replaces the one an open batch holds, so the batch cites every source.
 *
 * A pair is selected from its `minCooccurrences`-th shared chunk on (pair-selection.ts), so the
 * chunks it shared before would never reach M2: the last k − 1 of them are kept per pair while it is
 * not selected, and open its first batch with the chunk that selects it (the paper batches all of a
 * pair's chunks). Bounded: chunk ids by event time (the statistics' window) and count, pairs by count.
 */
import type { Chunk, ChunkEntity, Interaction, InteractionVariant } from '../../schemas/records.generated.js';
import { BatchRounds, type BatchRound } from './batch-rounds.js';
import type { ExtractionTargets } from './extraction-targets.js';
import type { RejectReason } from './ground-interactions.js';
import type { InteractionExtractor } from './interaction-extractor.js';
import { pairKey, PairBatches, type PairBatch, type PairBatchOptions } from './pair-batches.js';
import { PairSelector, type PairSelectionOptions } from './pair-selection.js';
import { RecentInteractions } from './recent-interactions.js';

export interface ChunkPlan {
  subjects: ChunkEntity[];
  /** False for a chunk id seen before: it counts and joins nothing again. */
  firstSight: boolean;
  /** Batches this chunk joined (open, or closed by it). */
  joined: PairBatch[];
  /** Open batches that took this (newer) version of a chunk they hold. */
  updated: PairBatch[];
  /** Batches closed by this chunk's arrival, in the order they closed. */
  closed: PairBatch[];
}

export interface PlannerOptions {
  /** Whether M2 runs: without it, nothing is counted or batched. */
  m2: boolean;
  batching?: Partial<PairBatchOptions>;
  pairSelection?: Partial<PairSelectionOptions>;
  /** Chunk ids remembered at most, besides the event-time window. Default 200,000. */
  maxRememberedChunks?: number;
  /** Pairs whose earlier chunks are remembered, at most. Default 10,000. */
  maxRememberedPairs?: number;
}

export class ExtractionPlanner {
  readonly selector: PairSelector | null;
  readonly batches: PairBatches;
  private readonly windowMs: number;
  private readonly maxRememberedChunks: number;
  private readonly maxRememberedPairs: number;
  /** chunk id → t, in arrival order. */
  private readonly seen = new Map<string, number>();
  /** pair key → its last k − 1 chunks while it was not selected. */
  private readonly earlier = new Map<string, Chunk[]>();
  private latest = -Infinity;

  constructor(
    private readonly targets: ExtractionTargets,
    options: PlannerOptions,
  ) {
    this.selector = options.m2 ? new PairSelector(options.pairSelection) : null;
    this.batches = new PairBatches(options.batching);
    this.windowMs = this.selector?.windowMs ?? 0;
    this.maxRememberedChunks = options.maxRememberedChunks ?? 200_000;
    this.maxRememberedPairs = options.maxRememberedPairs ?? 10_000;
  }

  plan(chunk: Chunk): ChunkPlan {
    const subjects = chunk.entities.filter((e) => this.targets.isTarget(e.id, chunk.t));
    const plan: ChunkPlan = { subjects, firstSight: true, joined: [], updated: [], closed: [] };
    const selector = this.selector;
    if (!selector) return plan;
    if (this.seen.has(chunk.id)) {
      plan.firstSight = false;
      plan.updated = this.batches.update(chunk);
      return plan;
    }
    this.remember(chunk);
    // Every chunk counts towards document frequencies, targets or not: that is what IDF weighs by.
    selector.observe(
      chunk,
      subjects.map((s) => s.id),
    );
    plan.closed.push(...this.batches.advance(chunk.t));
    const k = this.batches.options.k;
    const objects = [...new Map(chunk.entities.map((e) => [e.id, e])).values()];
    for (const subject of subjects) {
      const selected = new Set(selector.selectedObjects(subject.id, chunk));
      for (const object of objects) {
        if (object.id === subject.id) continue;
        const key = pairKey(subject.id, object.id);
        if (!selected.has(object.id)) {
          this.keepEarlier(key, chunk, k - 1);
          continue;
        }
        const { batch, full } = this.batches.add(subject, object, chunk, this.takeEarlier(key));
        plan.joined.push(batch);
        if (full) plan.closed.push(batch);
      }
    }
    plan.closed.push(...this.batches.enforceHeldBound());
    return plan;
  }

  private remember(chunk: Chunk): void {
    this.seen.set(chunk.id, chunk.t);
    if (chunk.t > this.latest) this.latest = chunk.t;
    // Arrival order is nearly time order: the front holds the oldest, and an older one behind a
    // newer one is forgotten a little later, never early.
    for (const [id, t] of this.seen) {
      if (this.seen.size <= this.maxRememberedChunks && t >= this.latest - this.windowMs) break;
      this.seen.delete(id);
    }
  }

  private keepEarlier(key: string, chunk: Chunk, keep: number): void {
    if (keep <= 0) return;
    const list = this.earlier.get(key) ?? [];
    this.earlier.delete(key); // re-inserted last: the map's order is least recently used first
    list.push(chunk);
    this.earlier.set(key, list.slice(-keep));
    while (this.earlier.size > this.maxRememberedPairs) this.earlier.delete(this.earlier.keys().next().value!);
  }

  private takeEarlier(key: string): Chunk[] {
    const list = this.earlier.get(key);
    if (!list) return [];
    this.earlier.delete(key);
    return list.filter((c) => c.t >= this.latest - this.windowMs);
  }
}

export interface FiniteExtractionOptions {
  extractor: InteractionExtractor;
  targets: ExtractionTargets;
  variants: readonly InteractionVariant[];
  batching?: Partial<PairBatchOptions>;
  pairSelection?: Partial<PairSelectionOptions>;
  /** Calls in flight at once. */
  concurrency?: number;
}

export interface FiniteExtractionReport {
  interactions: Interaction[];
  chunks: number;
  /** Chunks no target was involved in: no call made. */
  skippedNoTarget: number;
  calls: Record<InteractionVariant, number>;
  /** Chunks in each M2 call, in call order. */
  m2BatchSizes: number[];
  rejected: Partial<Record<RejectReason, number>>;
  /** Calls whose reply stayed invalid through the retry. */
  invalid: number;
}

/**
 * Extracts from a finite, time-ordered list of chunks (a replay, the evaluation) as the stage does
 * — M1 per chunk and subject, M2 per batch as the batches close, the open ones at the end — and keeps
 * each statement once, merged as the stage writes it (recent-interactions.ts), so the result does
 * not depend on the order the calls finished in.
 */
export async function extractFromChunks(
  chunks: readonly Chunk[],
  options: FiniteExtractionOptions,
): Promise<FiniteExtractionReport> {
  const variants = options.variants.filter((v) => options.extractor.variants.includes(v));
  const planner = new ExtractionPlanner(options.targets, {
    m2: variants.includes('M2'),
    // A list has no quiet moments, and no in-flight bound unless asked for one (to compare with a
    // stage): batches close by count and event time.
    batching: { maxHeldChunks: Number.MAX_SAFE_INTEGER, ...options.batching, quietMs: Infinity },
    ...(options.pairSelection ? { pairSelection: options.pairSelection } : {}),
  });
  const report: FiniteExtractionReport = {
    interactions: [],
    chunks: chunks.length,
    skippedNoTarget: 0,
    calls: { M1: 0, M2: 0 },
    m2BatchSizes: [],
    rejected: {},
    invalid: 0,
  };
  // Results are merged in the order the calls were planned, not the order they finished in.
  const results: Interaction[][] = [];
  const jobs: (() => Promise<void>)[] = [];
  const collect = async (variant: InteractionVariant, run: () => ReturnType<InteractionExtractor['m1']>) => {
    report.calls[variant] += 1;
    const slot = results.length;
    results.push([]);
    try {
      const result = await run();
      results[slot] = result.interactions;
      for (const [reason, n] of Object.entries(result.rejected) as [RejectReason, number][]) {
        report.rejected[reason] = (report.rejected[reason] ?? 0) + n;
      }
    } catch (error) {
      if ((error as { code?: string }).code !== 'llm_invalid_output') throw error;
      report.invalid += 1;
    }
  };
  const rounds = new BatchRounds({
    quietMs: Infinity,
    extract: (round: BatchRound) => {
      report.m2BatchSizes.push(round.chunks.length);
      jobs.push(() => collect('M2', () => options.extractor.m2(round.batch.subject, round.batch.object, round.chunks)));
      return Promise.resolve();
    },
  });
  for (const chunk of chunks) {
    const plan = planner.plan(chunk);
    if (plan.subjects.length === 0) report.skippedNoTarget += 1;
    if (variants.includes('M1')) {
      for (const subject of plan.subjects) jobs.push(() => collect('M1', () => options.extractor.m1(subject, chunk)));
    }
    rounds.accept(plan);
  }
  await rounds.drain(planner.batches.drain());
  const concurrency = Math.max(1, options.concurrency ?? 4);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
  const merged = new Map<string, Interaction>();
  const statements = new RecentInteractions(Number.MAX_SAFE_INTEGER);
  for (const interactions of results)
    for (const record of statements.claim(interactions)) merged.set(record.id, record);
  report.interactions = [...merged.values()].sort((a, b) => a.t - b.t || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return report;
}

/**
 * What extraction does with one unique chunk, shared by the Kafka stage and by finite runs (the
 * evaluation, the benchmark):
 *
 * - subjects: the chunk's entities that are targets at the chunk's time (none: the chunk is skipped,
 *   which is the cost spike gating saves);
 * - M1: one call per subject;
 * - M2: the chunk counts towards the co-occurrence statistics, and joins the batch of every selected
 *   pair (subject, object) it mentions.
 */
import type { Chunk, ChunkEntity, Interaction, InteractionVariant } from '../../schemas/records.generated.js';
import type { ExtractionTargets } from './extraction-targets.js';
import type { RejectReason } from './ground-interactions.js';
import type { InteractionExtractor } from './interaction-extractor.js';
import { PairBatches, type PairBatch, type PairBatchOptions } from './pair-batches.js';
import { PairSelector, type PairSelectionOptions } from './pair-selection.js';
import { statementKey } from './recent-interactions.js';

export interface ChunkPlan {
  subjects: ChunkEntity[];
  pairs: { subject: ChunkEntity; object: ChunkEntity }[];
}

export function planChunk(chunk: Chunk, targets: ExtractionTargets, selector: PairSelector | null): ChunkPlan {
  const subjects = chunk.entities.filter((e) => targets.isTarget(e.id, chunk.t));
  if (!selector) return { subjects, pairs: [] };
  // Every chunk counts towards document frequencies, targets or not: that is what IDF weighs by.
  selector.observe(
    chunk,
    subjects.map((s) => s.id),
  );
  if (subjects.length === 0) return { subjects, pairs: [] };
  const byId = new Map(chunk.entities.map((e) => [e.id, e]));
  const pairs = subjects.flatMap((subject) =>
    selector.selectedObjects(subject.id, chunk).map((objectId) => ({ subject, object: byId.get(objectId)! })),
  );
  return { subjects, pairs };
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
  rejected: Partial<Record<RejectReason, number>>;
  /** Calls whose reply stayed invalid through the retry. */
  invalid: number;
}

/**
 * Extracts from a finite, time-ordered list of chunks (a replay, the evaluation): M1 per chunk and
 * subject, M2 per full batch and, at the end, per partial batch. Interactions with the same statement
 * (variant, time, text and pair of entities: the same tuple from two chunks sharing a sentence, or one link
 * extracted for each of its two entities) are kept once, as the extract stage writes them once.
 */
export async function extractFromChunks(
  chunks: readonly Chunk[],
  options: FiniteExtractionOptions,
): Promise<FiniteExtractionReport> {
  const variants = options.variants.filter((v) => options.extractor.variants.includes(v));
  const selector = variants.includes('M2') ? new PairSelector(options.pairSelection) : null;
  const batches = new PairBatches<null>({ ...options.batching, lingerMs: Infinity });
  const report: FiniteExtractionReport = {
    interactions: [],
    chunks: chunks.length,
    skippedNoTarget: 0,
    calls: { M1: 0, M2: 0 },
    rejected: {},
    invalid: 0,
  };
  const byStatement = new Map<string, Interaction>();
  const jobs: (() => Promise<void>)[] = [];
  const collect = async (variant: InteractionVariant, run: () => ReturnType<InteractionExtractor['m1']>) => {
    report.calls[variant] += 1;
    try {
      const result = await run();
      for (const interaction of result.interactions) {
        const key = statementKey(interaction);
        // The smallest id wins, whatever order the calls finished in: the same input, the same records.
        const kept = byStatement.get(key);
        if (kept === undefined || interaction.id < kept.id) byStatement.set(key, interaction);
      }
      for (const [reason, n] of Object.entries(result.rejected) as [RejectReason, number][]) {
        report.rejected[reason] = (report.rejected[reason] ?? 0) + n;
      }
    } catch (error) {
      if ((error as { code?: string }).code !== 'llm_invalid_output') throw error;
      report.invalid += 1;
    }
  };
  const m2 = (batch: PairBatch<null>) => () =>
    collect('M2', () => options.extractor.m2(batch.subject, batch.object, batch.chunks));
  for (const chunk of chunks) {
    const plan = planChunk(chunk, options.targets, selector);
    if (plan.subjects.length === 0) report.skippedNoTarget += 1;
    if (variants.includes('M1')) {
      for (const subject of plan.subjects) jobs.push(() => collect('M1', () => options.extractor.m1(subject, chunk)));
    }
    for (const { subject, object } of plan.pairs) {
      const full = batches.add(subject, object, chunk, null, 0);
      if (full) jobs.push(m2(full));
    }
  }
  for (const batch of batches.drain()) jobs.push(m2(batch));
  const concurrency = Math.max(1, options.concurrency ?? 4);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
  report.interactions = [...byStatement.values()].sort((a, b) => a.t - b.t || a.id.localeCompare(b.id));
  return report;
}

/**
 * Extraction over a stream of unique chunks, as the extract stage runs it, without the transport:
 * `plan` takes the chunks one by one in input order and says which calls each one waits for; `m1`
 * and `m2` run those calls and write what they found; `drain` extracts the batches still open.
 *
 * Everything that decides what is written — subjects, pair selection, batches, the merging of a
 * statement found by several calls — depends on the chunks and their order alone, never on when
 * they came or how fast a call answered (extraction-plan.ts, pair-batches.ts, batch-rounds.ts,
 * recent-interactions.ts). Writing goes through `write`, which throws when it could not (the
 * records are then written again by the retry).
 */
import type { Chunk, ChunkEntity, Interaction, InteractionVariant } from '../../schemas/records.generated.js';
import { BatchRounds, type BatchRound, type Timer } from './batch-rounds.js';
import { ExtractionPlanner, type ChunkPlan } from './extraction-plan.js';
import type { ExtractionTargets } from './extraction-targets.js';
import type { ExtractionResult, InteractionExtractor } from './interaction-extractor.js';
import { resolvePairBatching, type PairBatch, type PairBatchOptions } from './pair-batches.js';
import type { PairSelectionOptions } from './pair-selection.js';
import { RecentInteractions } from './recent-interactions.js';
import { SpikeBackfill, type BackfillCall, type BackfillOptions } from './spike-backfill.js';

export interface M1Call {
  subject: ChunkEntity;
  chunk: Chunk;
}

export interface M2Wait {
  batch: PairBatch;
  chunkId: string;
}

export interface StreamExtractionOptions {
  extractor: InteractionExtractor;
  targets: ExtractionTargets;
  /** Default: every variant the extractor has. */
  variants?: readonly InteractionVariant[];
  batching?: Partial<PairBatchOptions>;
  pairSelection?: Partial<PairSelectionOptions>;
  /** Writes records (in order); rejects if it could not. */
  write: (records: readonly Interaction[]) => Promise<void>;
  /** The quiet-stream flush's timer (batch-rounds.ts). */
  timer?: Timer;
  /** What a failed call throws to its caller (the stage: its StageError). */
  failure?: (error: unknown) => unknown;
  /** A failure (as `failure` made it) nobody will retry: its batch is given up. */
  isFinal?: (error: unknown) => boolean;
  /** Told of every call's outcome: how many records it wrote. */
  onPublished?: (variant: InteractionVariant, result: ExtractionResult, written: number) => void;
  /** Told of every M2 call as it starts. */
  onRound?: (round: BatchRound) => void;
  /** Back-fill on spikes (spike-backfill.ts); off when absent, or when M1 does not run. */
  backfill?: Partial<BackfillOptions>;
}

export interface PlannedChunk {
  plan: ChunkPlan;
  m1: M1Call[];
  /** The batches the chunk waits for: those it joined, or (seen before) those it is still in. */
  m2: M2Wait[];
  /** Earlier chunks of an entity that has become a target, extracted (M1) as this chunk's work. */
  backfill: BackfillCall[];
  /** Chunks that were due for a back-fill but over their episode's cap. */
  backfillDropped: number;
}

export class StreamExtraction {
  readonly variants: readonly InteractionVariant[];
  readonly planner: ExtractionPlanner;
  readonly rounds: BatchRounds;
  private readonly recent = new RecentInteractions();
  /** Null when back-fill is off. */
  readonly backfill: SpikeBackfill | null;
  private readonly failure: (error: unknown) => unknown;

  constructor(private readonly options: StreamExtractionOptions) {
    const { extractor } = options;
    this.variants = (options.variants ?? extractor.variants).filter((v) => extractor.variants.includes(v));
    const batching = resolvePairBatching(options.batching);
    this.planner = new ExtractionPlanner(options.targets, {
      m2: this.variants.includes('M2'),
      batching,
      ...(options.pairSelection ? { pairSelection: options.pairSelection } : {}),
    });
    this.failure = options.failure ?? ((error) => error);
    const backfill = options.backfill && this.variants.includes('M1') ? new SpikeBackfill(options.backfill) : null;
    this.backfill = backfill?.enabled ? backfill : null;
    this.rounds = new BatchRounds({
      quietMs: batching.quietMs,
      ...(options.timer ? { timer: options.timer } : {}),
      ...(options.isFinal ? { isFinal: options.isFinal } : {}),
      extract: async (round) => {
        options.onRound?.(round);
        await this.call('M2', () => extractor.m2(round.batch.subject, round.batch.object, round.chunks));
      },
    });
  }

  /** Must be called in input order. */
  plan(chunk: Chunk): PlannedChunk {
    const plan = this.planner.plan(chunk);
    this.rounds.accept(plan);
    const m1 = this.variants.includes('M1') ? plan.subjects.map((subject) => ({ subject, chunk })) : [];
    // A chunk seen before waits for the batches it is still in: a redelivery must not be committed ahead of them.
    const batches = plan.firstSight ? plan.joined : this.rounds.unfinishedBatchesOf(chunk.id);
    const backfill = this.backfill?.observe(chunk, new Set(plan.subjects.map((s) => s.id)), this.options.targets);
    return {
      plan,
      m1,
      m2: batches.map((batch) => ({ batch, chunkId: chunk.id })),
      backfill: backfill?.calls ?? [],
      backfillDropped: backfill?.dropped ?? 0,
    };
  }

  /** A chunk from before a restart's committed position, read back so a later back-fill can find it. */
  remember(chunk: Chunk): void {
    this.backfill?.remember(chunk);
  }

  m1({ subject, chunk }: M1Call): Promise<void> {
    return this.call('M1', () => this.options.extractor.m1(subject, chunk));
  }

  /** Resolves once an extraction of the batch that holds this chunk has been written. */
  m2({ batch, chunkId }: M2Wait): Promise<void> {
    return this.rounds.settle(batch, chunkId);
  }

  /** Extracts every open batch and waits for every call running. */
  drain(): Promise<void> {
    return this.rounds.drain(this.planner.batches.drain());
  }

  private async call(variant: InteractionVariant, run: () => Promise<ExtractionResult>): Promise<void> {
    let result: ExtractionResult;
    try {
      result = await run();
    } catch (error) {
      throw this.failure(error);
    }
    const records = this.recent.claim(result.interactions);
    try {
      await this.options.write(records);
    } catch (error) {
      // Not written: the retry of this call must write these statements again.
      this.recent.release(records);
      throw this.failure(error);
    }
    this.options.onPublished?.(variant, result, records.length);
  }
}

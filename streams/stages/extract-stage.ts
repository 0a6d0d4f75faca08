import type { Registry } from 'prom-client';
import { ChatModelError } from '../../processors/extract/chat-model.js';
import { planChunk } from '../../processors/extract/extraction-plan.js';
import type { ExtractionTargets } from '../../processors/extract/extraction-targets.js';
import type { RejectReason } from '../../processors/extract/ground-interactions.js';
import {
  ExtractionError,
  type ExtractionResult,
  type InteractionExtractor,
} from '../../processors/extract/interaction-extractor.js';
import { PairBatches, type PairBatch, type PairBatchOptions } from '../../processors/extract/pair-batches.js';
import { PairSelector, type PairSelectionOptions } from '../../processors/extract/pair-selection.js';
import { RecentInteractions } from '../../processors/extract/recent-interactions.js';
import type { Chunk, ChunkEntity, Interaction, InteractionVariant } from '../../schemas/records.generated.js';
import { KafkaSink } from '../kafka/kafka-sink.js';
import { counterOf, METRIC_FAMILIES } from '../telemetry/metrics.js';
import { stageDecoder, topicRecord } from '../runtime/record-codec.js';
import { startStage, type RunningStage, type StageOutput } from '../runtime/run-stage.js';
import type { Sink } from '../runtime/sink.js';
import { StageError } from '../runtime/stage-error.js';
import { TOPICS } from '../pipeline/topics.js';
import type { Transport } from '../runtime/transport.js';
import { pipelineTopics, type StageBindingOptions } from '../pipeline/pipeline-topics.js';

export interface ExtractStageOptions extends StageBindingOptions {
  extractor: InteractionExtractor;
  targets: ExtractionTargets;
  /** Default: every variant the extractor has. */
  variants?: readonly InteractionVariant[];
  batching?: Partial<PairBatchOptions>;
  pairSelection?: Partial<PairSelectionOptions>;
  /** Default `neon.interactions`. */
  interactionsTopic?: string;
  /** Where the `neon_extract_*` families go. */
  registry?: Registry;
  /** Wall clock of the M2 linger; injected in tests. */
  now?: () => number;
}

interface M1Job {
  subject: ChunkEntity;
  chunk: Chunk;
}

interface M2Job extends M1Job {
  object: ChunkEntity;
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** An LLM failure as the runtime handles it: retried, dead-lettered or fatal. */
function asExtractError(error: unknown): unknown {
  if (error instanceof ExtractionError) return new StageError('llm_invalid_output', error.message, 'extract');
  if (error instanceof ChatModelError) {
    if (error.code === 'llm_unauthorized') return new StageError('llm_unauthorized', error.message, 'extract');
    if (error.code === 'llm_rejected') return new StageError('llm_rejected', error.message, 'extract');
    return new StageError('llm_unavailable', `${error.code}: ${error.message}`, 'extract', { cause: error });
  }
  return error;
}

function extractMetrics(registry: Registry | undefined) {
  if (!registry) return undefined;
  return {
    chunks: counterOf(registry, METRIC_FAMILIES.extractChunks),
    interactions: counterOf(registry, METRIC_FAMILIES.extractInteractions),
    repeated: counterOf(registry, METRIC_FAMILIES.extractRepeated),
    rejected: counterOf(registry, METRIC_FAMILIES.extractRejected),
    repaired: counterOf(registry, METRIC_FAMILIES.extractRepaired),
    batches: counterOf(registry, METRIC_FAMILIES.extractM2Batches),
  };
}

/**
 * `news.chunks.unique` → NEON extraction (M1 and M2) → `neon.interactions`, keyed by subject.
 *
 * Per chunk: the entities that are targets at the chunk's time are its subjects (none: skipped,
 * counted as `no_target`). M1 makes one call per subject. M2 counts the chunk's co-occurrences and
 * adds it to the batch of each selected pair; a batch is extracted when it holds k chunks or has
 * waited its linger out. Calls run inside the sinks, so the runtime's rules apply to them: a chunk's
 * offset is committed only once every interaction derived from it — its M1 calls and every M2 batch
 * it joined — is acknowledged by Kafka; an LLM outage or a spent token budget is retried with
 * backoff while the in-flight bound holds the consumer back.
 *
 * Delivery: at-least-once; interaction ids are deterministic and replies are cached by prompt, so a
 * redelivered chunk costs no call and overwrites the same records. Dead letters: undecodable
 * chunks; `llm_invalid_output` (a reply invalid through its retry: every chunk of the call);
 * `llm_rejected` (the endpoint refused the request, e.g. too long). Fatal: `llm_unauthorized`.
 */
export async function startExtractStage(transport: Transport, options: ExtractStageOptions): Promise<RunningStage> {
  const topics = pipelineTopics(options.topics);
  const interactionsTopic = options.interactionsTopic ?? TOPICS.interactions;
  const { extractor, targets } = options;
  const variants = (options.variants ?? extractor.variants).filter((v) => extractor.variants.includes(v));
  const selector = variants.includes('M2') ? new PairSelector(options.pairSelection) : null;
  const now = options.now ?? Date.now;
  const metrics = extractMetrics(options.registry);
  const output = new KafkaSink(transport.producer(), { name: 'interactions' });
  const recent = new RecentInteractions();

  const publish = async (variant: InteractionVariant, result: ExtractionResult): Promise<void> => {
    const fresh = recent.claim(result.interactions);
    try {
      await Promise.all(
        fresh.map((i: Interaction) => output.write(topicRecord(interactionsTopic, 'Interaction', i.subject_id, i))),
      );
    } catch (error) {
      // Not written: the retry of this call must not find these statements taken.
      recent.release(fresh);
      throw error;
    }
    metrics?.interactions.inc({ variant }, fresh.length);
    metrics?.repeated.inc({ variant }, result.interactions.length - fresh.length);
    if (result.repaired > 0) metrics?.repaired.inc({ variant }, result.repaired);
    for (const [reason, n] of Object.entries(result.rejected) as [RejectReason, number][]) {
      metrics?.rejected.inc({ reason }, n);
    }
  };

  const m1Sink: Sink<M1Job> = {
    name: 'm1',
    write: async ({ subject, chunk }) => {
      try {
        await publish('M1', await extractor.m1(subject, chunk));
      } catch (error) {
        throw asExtractError(error);
      }
    },
    close: () => Promise.resolve(),
  };

  const batches = new PairBatches<Waiter>(options.batching);
  let timer: NodeJS.Timeout | undefined;
  const running = new Set<Promise<void>>();
  const extractBatch = (batch: PairBatch<Waiter>, closedBy: 'full' | 'linger' | 'stop'): void => {
    metrics?.batches.inc({ closed_by: closedBy });
    const run = extractor
      .m2(batch.subject, batch.object, batch.chunks)
      .then((result) => publish('M2', result))
      .then(
        () => batch.waiters.forEach((w) => w.resolve()),
        (error: unknown) => {
          const failure = asExtractError(error);
          batch.waiters.forEach((w) => w.reject(failure));
        },
      );
    running.add(run);
    void run.finally(() => running.delete(run));
  };
  const schedule = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const dueAt = batches.nextDueAt();
    if (dueAt === undefined) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        for (const batch of batches.due(now())) extractBatch(batch, 'linger');
        schedule();
      },
      Math.max(0, dueAt - now()),
    );
  };
  const m2Sink: Sink<M2Job> = {
    name: 'm2',
    write: ({ subject, object, chunk }) =>
      new Promise<void>((resolve, reject) => {
        const full = batches.add(subject, object, chunk, { resolve, reject }, now());
        if (full) extractBatch(full, 'full');
        schedule();
      }),
    close: async () => {
      if (timer) clearTimeout(timer);
      for (const batch of batches.drain()) extractBatch(batch, 'stop');
      await Promise.allSettled([...running]);
      await output.close();
    },
  };

  return startStage<Chunk>(transport, {
    name: 'extract',
    ...(options.groupId ? { groupId: options.groupId } : {}),
    inputTopics: [topics.uniqueChunks],
    deadLetterTopic: topics.deadLetters,
    decode: stageDecoder('Chunk'),
    process: ({ value: chunk }): StageOutput[] => {
      const plan = planChunk(chunk, targets, selector);
      metrics?.chunks.inc({ outcome: plan.subjects.length === 0 ? 'no_target' : 'targeted' });
      const outputs: StageOutput[] = [];
      if (variants.includes('M1')) {
        for (const subject of plan.subjects) {
          outputs.push({ sink: 'm1', id: `${chunk.id}/${subject.id}`, item: { subject, chunk } satisfies M1Job });
        }
      }
      for (const { subject, object } of plan.pairs) {
        outputs.push({
          sink: 'm2',
          id: `${chunk.id}/${subject.id}/${object.id}`,
          item: { subject, object, chunk } satisfies M2Job,
        });
      }
      return outputs;
    },
    sinks: { m1: m1Sink, m2: m2Sink },
    maxInFlight: options.maxInFlight ?? 256,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}

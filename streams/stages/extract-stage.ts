import type { Registry } from 'prom-client';
import type { Timer } from '../../processors/extract/batch-rounds.js';
import { ChatModelError } from '../../processors/extract/chat-model.js';
import type { ExtractionTargets } from '../../processors/extract/extraction-targets.js';
import type { RejectReason } from '../../processors/extract/ground-interactions.js';
import { ExtractionError, type InteractionExtractor } from '../../processors/extract/interaction-extractor.js';
import { resolvePairBatching, type PairBatchOptions } from '../../processors/extract/pair-batches.js';
import type { PairSelectionOptions } from '../../processors/extract/pair-selection.js';
import { StreamExtraction, type M1Call, type M2Wait } from '../../processors/extract/stream-extraction.js';
import type { Chunk, Interaction, InteractionVariant } from '../../schemas/records.generated.js';
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
  /** Timer of the quiet-stream flush of M2 batches; injected in tests. */
  timer?: Timer;
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
 * counted as `no_target`). M1 makes one call per subject. M2 counts the chunk's co-occurrences once
 * (a survivor dedupe writes again is the same chunk) and adds it to the batch of each selected pair
 * (extraction-plan.ts); batches close by count, by event time and by the number of chunks waiting
 * (pair-batches.ts), and a quiet stream's open batches are extracted as they stand after
 * `quietMs` (batch-rounds.ts). Deciding in `process`, which sees the chunks in input order, makes
 * the batches a function of the input alone: a replay gets the same batches, prompts and records.
 *
 * Calls run inside the sinks, so the runtime's rules apply to them: a chunk's offset is committed
 * only once every interaction derived from it — its M1 calls and every M2 batch it joined — is
 * acknowledged by Kafka; an LLM outage or a spent token budget is retried with backoff while the
 * in-flight bound holds the consumer back. The chunks waiting in open batches are kept to half the
 * in-flight bound, so a backlog never stalls on its own batches.
 *
 * Delivery: at-least-once; interaction ids come from the statement and replies are cached by
 * prompt, so a redelivered chunk costs no call and overwrites the same records; a statement found
 * by several calls is one record citing all their chunks (recent-interactions.ts). Dead letters:
 * undecodable chunks; `llm_invalid_output` (a reply invalid through its retry: every chunk of the
 * call); `llm_rejected` (the endpoint refused the request, e.g. too long). Fatal: `llm_unauthorized`.
 */
export async function startExtractStage(transport: Transport, options: ExtractStageOptions): Promise<RunningStage> {
  const topics = pipelineTopics(options.topics);
  const interactionsTopic = options.interactionsTopic ?? TOPICS.interactions;
  const maxInFlight = options.maxInFlight ?? 256;
  const batching = resolvePairBatching(options.batching);
  const metrics = extractMetrics(options.registry);
  const output = new KafkaSink(transport.producer(), { name: 'interactions' });

  const extraction = new StreamExtraction({
    extractor: options.extractor,
    targets: options.targets,
    ...(options.variants ? { variants: options.variants } : {}),
    batching: {
      ...batching,
      maxHeldChunks: Math.max(1, Math.min(batching.maxHeldChunks, Math.floor(maxInFlight / 2))),
    },
    ...(options.pairSelection ? { pairSelection: options.pairSelection } : {}),
    ...(options.timer ? { timer: options.timer } : {}),
    write: async (records) => {
      await Promise.all(
        records.map((i: Interaction) => output.write(topicRecord(interactionsTopic, 'Interaction', i.subject_id, i))),
      );
    },
    failure: asExtractError,
    isFinal: (error) => error instanceof StageError && error.disposition !== 'retry',
    onRound: (round) => metrics?.batches.inc({ closed_by: round.reason }),
    onPublished: (variant, result, written) => {
      metrics?.interactions.inc({ variant }, written);
      metrics?.repeated.inc({ variant }, Math.max(0, result.interactions.length - written));
      if (result.repaired > 0) metrics?.repaired.inc({ variant }, result.repaired);
      for (const [reason, n] of Object.entries(result.rejected) as [RejectReason, number][]) {
        metrics?.rejected.inc({ reason }, n);
      }
    },
  });

  const m1Sink: Sink<M1Call> = {
    name: 'm1',
    write: (call) => extraction.m1(call),
    close: () => Promise.resolve(),
  };
  const m2Sink: Sink<M2Wait> = {
    name: 'm2',
    write: (wait) => extraction.m2(wait),
    close: async () => {
      await extraction.drain();
      await output.close();
    },
  };

  return startStage<Chunk>(transport, {
    name: 'extract',
    ...(options.groupId ? { groupId: options.groupId } : {}),
    inputTopics: [topics.uniqueChunks],
    deadLetterTopic: topics.deadLetters,
    decode: stageDecoder('Chunk'),
    // Synchronous, so chunks are planned in the order they come: batches depend on the input alone.
    process: ({ value: chunk }): StageOutput[] => {
      const { plan, m1, m2 } = extraction.plan(chunk);
      metrics?.chunks.inc({ outcome: plan.subjects.length === 0 ? 'no_target' : 'targeted' });
      return [
        ...m1.map((call) => ({ sink: 'm1', id: `${chunk.id}/${call.subject.id}`, item: call })),
        ...m2.map((wait) => ({
          sink: 'm2',
          id: `${chunk.id}/${wait.batch.subject.id}/${wait.batch.object.id}`,
          item: wait,
        })),
      ];
    },
    sinks: { m1: m1Sink, m2: m2Sink },
    maxInFlight,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}

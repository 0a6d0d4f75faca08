import type { Registry } from 'prom-client';
import type { Timer } from '../../processors/extract/batch-rounds.js';
import { ChatModelError } from '../../processors/extract/chat-model.js';
import { ALL_ENTITIES, type ExtractionTargets } from '../../processors/extract/extraction-targets.js';
import type { RejectReason } from '../../processors/extract/ground-interactions.js';
import { ExtractionError, type InteractionExtractor } from '../../processors/extract/interaction-extractor.js';
import { resolvePairBatching, type PairBatchOptions } from '../../processors/extract/pair-batches.js';
import type { PairSelectionOptions } from '../../processors/extract/pair-selection.js';
import { RequestSlots } from '../../processors/extract/request-slots.js';
import { DEFAULT_BACKFILL, type BackfillCall, type BackfillOptions } from '../../processors/extract/spike-backfill.js';
import { StreamExtraction, type M1Call, type M2Wait } from '../../processors/extract/stream-extraction.js';
import type { Chunk, Interaction, InteractionVariant } from '../../schemas/records.generated.js';
import { KafkaSink } from '../kafka/kafka-sink.js';
import { counterOf, METRIC_FAMILIES } from '../telemetry/metrics.js';
import { stageDecoder, topicRecord } from '../runtime/record-codec.js';
import { startStage, type RunningStage, type StageOutput } from '../runtime/run-stage.js';
import { readTopicOnce } from '../runtime/topic-tail.js';
import type { Sink } from '../runtime/sink.js';
import { StageError } from '../runtime/stage-error.js';
import { NAME_PREFIX, TOPICS } from '../pipeline/topics.js';
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
  /**
   * Back-fill on spikes (spike-backfill.ts). Default DEFAULT_BACKFILL; off with `lookbackMs: 0`,
   * and always off when every entity is a target (nothing is ever left behind then).
   */
  backfill?: Partial<BackfillOptions>;
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
    backfilled: counterOf(registry, METRIC_FAMILIES.extractBackfilledChunks),
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
  const groupId = options.groupId ?? `${NAME_PREFIX}neon.extract`;
  const backfill: BackfillOptions =
    options.targets === ALL_ENTITIES
      ? { ...DEFAULT_BACKFILL, lookbackMs: 0 }
      : { ...DEFAULT_BACKFILL, ...options.backfill };

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
    backfill,
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

  // Back-fill calls take at most `concurrency` of the LLM's slots, so forward extraction is never
  // queued behind a back-fill; both go through the same client, hence the same token budget.
  const backfillSlots = new RequestSlots(Math.max(1, Math.floor(backfill.concurrency)), Number.MAX_SAFE_INTEGER);
  const backfillSink: Sink<BackfillCall> = {
    name: 'backfill',
    write: async (call) => {
      const release = await backfillSlots.acquire();
      try {
        await extraction.m1(call);
        metrics?.backfilled.inc({ outcome: 'extracted' });
      } catch (error) {
        // A back-fill that can never succeed (an invalid reply, a refused request) is given up and
        // counted: dead-lettering would blame the chunk that triggered it, whose own work is fine.
        if (error instanceof StageError && error.disposition !== 'retry' && error.code !== 'llm_unauthorized') {
          metrics?.backfilled.inc({ outcome: 'failed' });
          return;
        }
        throw error;
      } finally {
        release();
      }
    },
    close: () => Promise.resolve(),
  };

  if (extraction.backfill) await rememberBeforeRestart(transport, topics.uniqueChunks, groupId, extraction);

  return startStage<Chunk>(transport, {
    name: 'extract',
    groupId,
    inputTopics: [topics.uniqueChunks],
    deadLetterTopic: topics.deadLetters,
    decode: stageDecoder('Chunk'),
    // Synchronous, so chunks are planned in the order they come: batches depend on the input alone.
    process: ({ value: chunk }): StageOutput[] => {
      const { plan, m1, m2, backfill: earlier, backfillDropped } = extraction.plan(chunk);
      metrics?.chunks.inc({ outcome: plan.subjects.length === 0 ? 'no_target' : 'targeted' });
      if (backfillDropped > 0) metrics?.backfilled.inc({ outcome: 'over_cap' }, backfillDropped);
      return [
        ...m1.map((call) => ({ sink: 'm1', id: `${chunk.id}/${call.subject.id}`, item: call })),
        ...m2.map((wait) => ({
          sink: 'm2',
          id: `${chunk.id}/${wait.batch.subject.id}/${wait.batch.object.id}`,
          item: wait,
        })),
        // Outputs of the chunk that triggered them: its offset waits for them (at-least-once).
        ...earlier.map((call) => ({
          sink: 'backfill',
          id: `backfill/${call.chunk.id}/${call.subject.id}`,
          item: call,
        })),
      ];
    },
    sinks: { m1: m1Sink, m2: m2Sink, backfill: backfillSink },
    maxInFlight,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}

/**
 * Why the held chunks come from the topic and not from memory alone or the chunk datastore: after a
 * restart the stage resumes at its committed offset, so the chunks before it — the ones a spike
 * starting now needs — are no longer in memory; the datastore holds chunks only once the index
 * stage has written them, which is ordered by nothing with respect to this stage. The topic is the
 * input itself: everything before the committed position is read back (bounded by the look-back
 * and the held-chunk cap) before consuming, so a back-fill decided after the restart finds what it
 * would have found without one. A group with nothing committed reads the topic from its start
 * through the stage itself and needs no such read.
 */
async function rememberBeforeRestart(
  transport: Transport,
  topic: string,
  groupId: string,
  extraction: StreamExtraction,
): Promise<void> {
  const committed = await transport.committedOffsets(groupId, topic);
  if (committed.every((offset) => offset === null || offset === 0n)) return;
  const decode = stageDecoder('Chunk');
  await readTopicOnce(
    transport,
    topic,
    (record) => {
      const before = committed[record.partition];
      if (before === null || before === undefined || BigInt(record.offset) >= before) return;
      try {
        extraction.remember(decode(record));
      } catch {
        // Undecodable: the stage dead-lettered it when it first read it.
      }
    },
    { purpose: 'extract-backfill' },
  );
}

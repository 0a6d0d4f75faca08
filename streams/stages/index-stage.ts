import { EmbedderError, type Embedder } from '../../processors/embed/embedder.js';
import {
  chunkDocument,
  interactionDocument,
  interactionEmbeddingText,
} from '../../processors/index/index-documents.js';
import type { Chunk, Interaction, RecordName, RecordTypes } from '../../schemas/records.generated.js';
import { datastoreNames, monthlyIndex, type DatastoreKind } from '../elasticsearch/datastore-templates.js';
import type { Registry } from 'prom-client';
import type { Datastore, DatastoreWriterOptions, IndexRequest } from '../datastore/datastore.js';
import { histogramOf, METRIC_FAMILIES } from '../telemetry/metrics.js';
import type { Sink } from '../runtime/sink.js';
import { EmbeddingBatcher } from '../embed/embedding-batcher.js';
import { stageDecoder } from '../runtime/record-codec.js';
import { startStage, stderrLogger, type RunningStage } from '../runtime/run-stage.js';
import { asStageError, StageError } from '../runtime/stage-error.js';
import { WriteOrder, type WriteTurn } from '../runtime/write-order.js';
import { TOPICS } from '../pipeline/topics.js';
import type { Transport } from '../runtime/transport.js';
import type { StageBindingOptions } from '../pipeline/pipeline-topics.js';

export interface IndexStageOptions extends Omit<StageBindingOptions, 'topics'> {
  /** Elasticsearch in cluster mode, the in-process index in the embedded mode. */
  datastore: Datastore;
  embedder: Embedder;
  /** Input topic; default `news.chunks.unique` / `neon.interactions`. */
  inputTopic?: string;
  deadLetterTopic?: string;
  /** Batching of the writes (Elasticsearch `_bulk` requests). */
  bulk?: Omit<DatastoreWriterOptions, 'stage'>;
  now?: () => number;
  /** Where `neon_freshness_seconds` (publish → indexed) is recorded; none: not recorded. */
  registry?: Registry;
}

type TimedIndexRequest = IndexRequest & { publishedAt: number; turn: WriteTurn };

/**
 * The datastore's writer, writing the versions of one document in the order their records arrived
 * (see write-order.ts: a re-emitted statement record carries more citations than the one before),
 * and recording how long after its article's publish time each document was
 * acknowledged (then searchable within the index refresh interval, 1 s): the freshness users see.
 */
function freshnessRecordingSink(
  inner: Sink<IndexRequest>,
  kind: DatastoreKind,
  registry: Registry | undefined,
  now: () => number,
): Sink<TimedIndexRequest> {
  const freshness = registry ? histogramOf(registry, METRIC_FAMILIES.freshness) : undefined;
  return {
    name: inner.name,
    write: async ({ publishedAt, turn, ...request }) => {
      await turn.ready;
      try {
        await inner.write(request);
      } catch (error) {
        // A retriable failure is retried by the runtime with this same item: the turn stays held,
        // so a later version of the document cannot go first and be overwritten by this one.
        if (asStageError(error, inner.name).disposition !== 'retry') turn.release();
        throw error;
      }
      turn.release();
      freshness?.observe({ datastore: kind }, Math.max(0, now() - publishedAt) / 1000);
    },
    close: () => inner.close(),
  };
}

interface IndexSpec<N extends RecordName> {
  kind: DatastoreKind;
  record: N;
  defaultTopic: string;
  id: (value: RecordTypes[N]) => string;
  time: (value: RecordTypes[N]) => number;
  text: (value: RecordTypes[N]) => string;
  document: (value: RecordTypes[N], vector: Float32Array, model: string, now: number) => Record<string, unknown>;
}

/**
 * A topic of records → embed → the datastore's monthly index (`_id` = the record's id).
 * Delivery: at-least-once, idempotent on `_id`; an offset is committed only after the datastore
 * acknowledged the document (the bulk sink classifies every item). Dead letters: undecodable input,
 * documents Elasticsearch refuses, text the embedder refuses. An unavailable embedder is retried.
 */
async function startIndexStage<N extends RecordName>(
  transport: Transport,
  spec: IndexSpec<N>,
  options: IndexStageOptions,
): Promise<RunningStage> {
  const names = datastoreNames(spec.kind, options.datastore.prefix);
  const batcher = new EmbeddingBatcher(options.embedder);
  const now = options.now ?? Date.now;
  const name = `index-${spec.kind}`;
  const writeOrder = new WriteOrder();
  const sink = freshnessRecordingSink(
    options.datastore.writer({ ...options.bulk, stage: name }),
    spec.kind,
    options.registry,
    now,
  );
  return startStage<RecordTypes[N]>(transport, {
    name,
    ...(options.groupId ? { groupId: options.groupId } : {}),
    inputTopics: [options.inputTopic ?? spec.defaultTopic],
    ...(options.deadLetterTopic ? { deadLetterTopic: options.deadLetterTopic } : {}),
    decode: stageDecoder(spec.record),
    process: async ({ value, topic, partition, offset }) => {
      const id = spec.id(value);
      const turn = writeOrder.turn(id, `${topic}/${partition}/${offset}`);
      let vector: Float32Array;
      try {
        vector = await batcher.embed(spec.text(value));
      } catch (error) {
        if (error instanceof EmbedderError && !error.retriable) {
          turn.release();
          throw new StageError('processor_rejected', `embedding refused: ${error.message}`, name);
        }
        throw new StageError('timeout', `embedder unavailable: ${String(error)}`, name, { cause: error });
      }
      return [
        {
          sink: 'es',
          id,
          item: {
            index: monthlyIndex(names, spec.time(value)),
            id,
            document: spec.document(value, vector, options.embedder.model, now()),
            publishedAt: spec.time(value),
            turn,
          },
        },
      ];
    },
    sinks: { es: sink },
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    log: options.log ?? stderrLogger,
  });
}

/** `news.chunks.unique` → `neon-chunks` (NewsRAG datastore). A duplicate's merged provenance overwrites. */
export function startChunkIndexStage(transport: Transport, options: IndexStageOptions): Promise<RunningStage> {
  return startIndexStage(
    transport,
    {
      kind: 'chunks',
      record: 'Chunk',
      defaultTopic: TOPICS.uniqueChunks,
      id: (chunk: Chunk) => chunk.id,
      time: (chunk: Chunk) => chunk.t,
      text: (chunk: Chunk) => chunk.text,
      document: chunkDocument,
    },
    options,
  );
}

/** `neon.interactions` → `neon-interactions` (NEON datastore). */
export function startInteractionIndexStage(transport: Transport, options: IndexStageOptions): Promise<RunningStage> {
  return startIndexStage(
    transport,
    {
      kind: 'interactions',
      record: 'Interaction',
      defaultTopic: TOPICS.interactions,
      id: (interaction: Interaction) => interaction.id,
      time: (interaction: Interaction) => interaction.t,
      text: interactionEmbeddingText,
      document: interactionDocument,
    },
    options,
  );
}

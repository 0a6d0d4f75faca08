import { chunkArticle, resolveChunkOptions, type ChunkOptions } from '../../processors/chunk/chunk-article.js';
import type { MarkedArticle } from '../../schemas/records.generated.js';
import { KafkaSink } from '../kafka/kafka-sink.js';
import { stageDecoder, topicRecord } from '../runtime/record-codec.js';
import { startStage, type RunningStage, type StageOutput } from '../runtime/run-stage.js';
import type { Transport } from '../runtime/transport.js';
import { refusedAs } from '../runtime/state-topic.js';
import { pipelineTopics, type StageBindingOptions } from '../pipeline/pipeline-topics.js';

/**
 * `news.marked` → m-sentence windows → `news.chunks`, keyed by article id (so an article's chunks
 * stay in order on one partition). Delivery: at-least-once; chunk ids are deterministic, so a
 * redelivered article yields the same chunks. Dead letters: undecodable input, and articles the
 * chunker refuses (`processor_rejected`).
 */
export async function startChunkStage(
  transport: Transport,
  options: StageBindingOptions & { chunking?: Partial<ChunkOptions> } = {},
): Promise<RunningStage> {
  const topics = pipelineTopics(options.topics);
  // Bad options fail the start, not every article.
  const chunking = resolveChunkOptions(options.chunking);
  const sink = new KafkaSink(transport.producer(), { name: 'kafka' });
  return startStage<MarkedArticle>(transport, {
    name: 'chunk',
    ...(options.groupId ? { groupId: options.groupId } : {}),
    inputTopics: [topics.marked],
    deadLetterTopic: topics.deadLetters,
    decode: stageDecoder('MarkedArticle'),
    process: ({ value: marked }): StageOutput[] => {
      const chunks = refusedAs('chunk', `article ${marked.article.id}`, () => chunkArticle(marked, chunking));
      return chunks.map((chunk) => ({
        sink: 'kafka',
        id: chunk.id,
        item: topicRecord(topics.chunks, 'Chunk', chunk.article_id, chunk),
      }));
    },
    sinks: { kafka: sink },
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}

import { pipelineTopics, type PipelineTopics } from '../streams/pipeline/pipeline-topics.js';
import type { Transport } from '../streams/runtime/transport.js';
import { freshTopic } from './fresh-names.js';

/**
 * Fresh topics for the spike stage (mentions in, alerts and the compacted state changelog out, dead
 * letters), created with `partitions` each; the rest of the pipeline's names are fresh but not
 * created. Returns the names to remove afterwards too.
 */
/** The pipeline's topics under fresh names of their own (`<label>.<topic>`), none created. */
export function freshPipelineTopics(label: string): PipelineTopics {
  const topic = (name: string): string => freshTopic(`${label}.${name}`);
  return pipelineTopics({
    articles: topic('articles'),
    marked: topic('marked'),
    chunks: topic('chunks'),
    uniqueChunks: topic('unique'),
    mentions: topic('mentions'),
    registry: topic('registry'),
    spikes: topic('spikes'),
    spikeState: topic('spike-state'),
    deadLetters: topic('dlq'),
  });
}

export async function freshSpikeTopics(
  transport: Transport,
  label: string,
  partitions: number,
): Promise<{ topics: PipelineTopics; created: string[] }> {
  const topics = freshPipelineTopics(label);
  const created = [topics.mentions, topics.spikes, topics.spikeState, topics.deadLetters];
  await transport.ensureTopics(
    created.map((name) => ({
      topic: name,
      partitions,
      ...(name === topics.spikeState ? { configs: { 'cleanup.policy': 'compact' } } : {}),
    })),
  );
  return { topics, created };
}

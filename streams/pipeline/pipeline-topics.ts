import { TOPICS } from './topics.js';

/** The topics one run of the article pipeline reads and writes; tests pass fresh names. */
export interface PipelineTopics {
  articles: string;
  marked: string;
  chunks: string;
  uniqueChunks: string;
  mentions: string;
  registry: string;
  spikes: string;
  spikeState: string;
  deadLetters: string;
}

export const DEFAULT_PIPELINE_TOPICS: PipelineTopics = {
  articles: TOPICS.articles,
  marked: TOPICS.marked,
  chunks: TOPICS.chunks,
  uniqueChunks: TOPICS.uniqueChunks,
  mentions: TOPICS.mentions,
  registry: TOPICS.registry,
  spikes: TOPICS.spikes,
  spikeState: TOPICS.spikeState,
  deadLetters: TOPICS.deadLetters,
};

/** What every stage binding takes besides its own settings. */
export interface StageBindingOptions {
  topics?: Partial<PipelineTopics>;
  /** Consumer group; default `neon.<stage>`. */
  groupId?: string;
  maxInFlight?: number;
  metrics?: import('../telemetry/metrics.js').StageMetrics;
  log?: import('../runtime/run-stage.js').StageLogger;
}

export function pipelineTopics(overrides: Partial<PipelineTopics> = {}): PipelineTopics {
  return { ...DEFAULT_PIPELINE_TOPICS, ...overrides };
}

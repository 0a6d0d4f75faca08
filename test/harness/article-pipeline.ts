import type { ChunkOptions } from '../../processors/chunk/chunk-article.js';
import type { DedupeOptions } from '../../processors/dedupe/drop-near-duplicates.js';
import type { MarkupOptions } from '../../processors/markup/mark-article.js';
import type { StageMetrics } from '../../streams/telemetry/metrics.js';
import type { StageLogger } from '../../streams/runtime/run-stage.js';
import type { Transport } from '../../streams/runtime/transport.js';
import { startChunkStage } from '../../streams/stages/chunk-stage.js';
import { startDedupeStage, type DedupeStage } from '../../streams/stages/dedupe-stage.js';
import { startMarkupStage, type MarkupStage } from '../../streams/stages/markup-stage.js';
import { pipelineTopics, type PipelineTopics } from '../../streams/pipeline/pipeline-topics.js';
import type { RunningStage } from '../../streams/runtime/run-stage.js';

export interface ArticlePipelineOptions {
  topics?: Partial<PipelineTopics>;
  /** Prefix of the consumer groups (`<prefix>.markup` …); default `neon`. */
  groupPrefix?: string;
  markup?: Partial<MarkupOptions>;
  chunking?: Partial<ChunkOptions>;
  dedupe?: Partial<DedupeOptions>;
  metricsFor?: (stage: string) => StageMetrics;
  log?: StageLogger;
}

export interface ArticlePipeline {
  readonly markup: MarkupStage;
  readonly chunk: RunningStage;
  readonly dedupe: DedupeStage;
  /** Rejects when any stage dies. */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * news.articles → markup → news.marked → chunk → news.chunks → dedupe → news.chunks.unique and
 * entity.mentions, as three independent consumer groups on one transport, for the tests of that
 * chain alone (the product starts every stage through streams/pipeline/neon-pipeline.ts).
 */
export async function startArticlePipeline(
  transport: Transport,
  options: ArticlePipelineOptions = {},
): Promise<ArticlePipeline> {
  const topics = pipelineTopics(options.topics);
  const prefix = options.groupPrefix ?? 'neon';
  const common = (stage: string) => ({
    topics,
    groupId: `${prefix}.${stage}`,
    ...(options.metricsFor ? { metrics: options.metricsFor(stage) } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  // Downstream first, so nothing waits on a stage that is not there yet.
  const dedupe = await startDedupeStage(transport, {
    ...common('dedupe'),
    ...(options.dedupe ? { dedupe: options.dedupe } : {}),
  });
  const chunk = await startChunkStage(transport, {
    ...common('chunk'),
    ...(options.chunking ? { chunking: options.chunking } : {}),
  });
  const markup = await startMarkupStage(transport, {
    ...common('markup'),
    ...(options.markup ? { markup: options.markup } : {}),
  });
  const stages = [markup, chunk, dedupe];
  return {
    markup,
    chunk,
    dedupe,
    done: Promise.all(stages.map((s) => s.done)).then(() => undefined),
    // Upstream first: each stage drains what it holds before the next one stops.
    stop: async () => {
      for (const stage of stages) await stage.stop();
    },
  };
}

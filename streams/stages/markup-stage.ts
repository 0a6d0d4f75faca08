import { EntityRegistry } from '../../processors/markup/entity-registry.js';
import type { TextAnalysis } from '../../processors/markup/analyse-text.js';
import { markArticle, resolveMarkupOptions, type MarkupOptions } from '../../processors/markup/mark-article.js';
import { MarkupWorkerError, MarkupWorkers } from '../../processors/markup/markup-workers.js';
import { RegistryChangeThrottle } from '../../processors/markup/throttle-registry-changes.js';
import type { Article, RegistryEntity } from '../../schemas/records.generated.js';
import { KafkaSink } from '../kafka/kafka-sink.js';
import { stageDecoder, topicRecord } from '../runtime/record-codec.js';
import { startStage, stderrLogger, type RunningStage, type StageOutput } from '../runtime/run-stage.js';
import { StageError } from '../runtime/stage-error.js';
import { ArrivalOrder } from '../runtime/arrival-order.js';
import type { Transport } from '../runtime/transport.js';
import { followStateTopic, refusedAs, stageWithTails } from '../runtime/state-topic.js';
import { pipelineTopics, type StageBindingOptions } from '../pipeline/pipeline-topics.js';

export interface MarkupStage extends RunningStage {
  readonly registry: EntityRegistry;
}

/** How the in-memory registry stays bounded (EntityRegistry.forgetIdle). */
export interface RegistryRetention {
  /** Entities with fewer mentions than this … */
  keepMentions: number;
  /** … are forgotten when not seen for this long (event time). */
  idleMs: number;
  /** Checked every this many articles. */
  everyArticles: number;
}

export const DEFAULT_REGISTRY_RETENTION: RegistryRetention = {
  keepMentions: 3,
  idleMs: 30 * 86_400_000,
  everyArticles: 500,
};

/**
 * `news.articles` → markup → `news.marked` (keyed by article id) and registry changes → the
 * compacted `entity.registry` (keyed by entity id).
 *
 * Delivery: at-least-once; an article's offset is committed only after its marked article and the
 * registry changes it caused are acknowledged, so a crash re-marks it and re-sends the same ids.
 * The registry is rebuilt from `entity.registry` before the first article is taken, and follows it
 * while running, so replicas learn each other's aliases. Only significant changes are written
 * (RegistryChangeThrottle), so the changelog stays far quieter than the article stream. Memory is
 * bounded by forgetting rarely mentioned entities idle for 30 days of event time (configurable).
 * Dead letters: undecodable input, and articles the markup refuses (`processor_rejected`).
 *
 * With `workers` ≥ 1 (the product's default: NEON_MARKUP_WORKERS) the text analysis — tagging,
 * nearly all of markup's time — runs on that many worker threads (MarkupWorkers) and only registry
 * linking runs here, as each analysis comes back; 0 does everything on the stage's own thread.
 */
export async function startMarkupStage(
  transport: Transport,
  options: StageBindingOptions & {
    markup?: Partial<MarkupOptions>;
    registryRetention?: Partial<RegistryRetention>;
    /** Worker threads for the text analysis; 0 (the default here): on the stage's own thread. */
    workers?: number;
  } = {},
): Promise<MarkupStage> {
  const retention = { ...DEFAULT_REGISTRY_RETENTION, ...options.registryRetention };
  const topics = pipelineTopics(options.topics);
  const log = options.log ?? stderrLogger;
  const markup = resolveMarkupOptions(options.markup);
  const registry = new EntityRegistry();
  const throttle = new RegistryChangeThrottle();
  // Event time: the newest sighting the registry knows of, then the newest article marked.
  let newestSeen = 0;
  // What retention forgets stays in the compacted log: a record of it read later — this stage's
  // own write coming back, or another replica's older one — must not bring it back.
  const forgettable = (entity: RegistryEntity): boolean =>
    entity.mentions < retention.keepMentions && entity.last_seen_at < newestSeen - retention.idleMs;
  const tail = await followStateTopic(
    transport,
    topics.registry,
    'RegistryEntity',
    (entity) => {
      if (forgettable(entity) && !registry.has(entity.id)) return;
      registry.apply(entity);
      throttle.remember(entity);
    },
    { stage: 'markup', purpose: 'markup-registry', log },
  );
  // What the log already holds is not news to write back.
  registry.takeChanges();
  for (const entity of registry.entities()) newestSeen = Math.max(newestSeen, entity.last_seen_at);
  let sinceRetention = 0;
  const applyRetention = (): void => {
    sinceRetention = 0;
    if (registry.forgetIdle(newestSeen, retention.idleMs, retention.keepMentions) > 0) {
      throttle.prune((id) => registry.has(id));
    }
  };
  applyRetention();

  const workers = (options.workers ?? 0) > 0 ? new MarkupWorkers(options.workers!) : undefined;
  const analyse = async (article: Article): Promise<TextAnalysis | undefined> => {
    if (workers === undefined) return undefined; // markArticle analyses in place
    try {
      return await workers.analyse(article.text, article.published_at);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      // Workers that cannot start fail the stage; anything else is this article's doing.
      if (error instanceof MarkupWorkerError && error.broken) throw new StageError('internal', why, 'markup');
      throw new StageError('processor_rejected', `markup refused article ${article.id}: ${why}`, 'markup');
    }
  };

  const linking = new ArrivalOrder();
  const sink = new KafkaSink(transport.producer(), { name: 'kafka' });
  const stage = await startStage<Article>(transport, {
    name: 'markup',
    ...(options.groupId ? { groupId: options.groupId } : {}),
    inputTopics: [topics.articles],
    deadLetterTopic: topics.deadLetters,
    decode: stageDecoder('Article'),
    // Analyses run side by side; linking follows the articles' arrival order (see ArrivalOrder).
    process: ({ value: article }): Promise<StageOutput[]> =>
      linking.run(analyse(article), (analysis): StageOutput[] => {
        const marked = refusedAs('markup', `article ${article.id}`, () =>
          markArticle(article, registry, markup, analysis),
        );
        // Linking (markArticle given its analysis) and takeChanges run in one synchronous turn: the
        // changes are this article's.
        const changes = throttle.select(registry.takeChanges());
        newestSeen = Math.max(newestSeen, article.published_at);
        if (++sinceRetention >= retention.everyArticles) applyRetention();
        return [
          { sink: 'kafka', id: article.id, item: topicRecord(topics.marked, 'MarkedArticle', article.id, marked) },
          ...changes.map((entity) => ({
            sink: 'kafka',
            id: entity.id,
            item: topicRecord(topics.registry, 'RegistryEntity', entity.id, entity),
          })),
        ];
      }),
    sinks: { kafka: sink },
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    log,
  });
  if (workers !== undefined) void stage.done.finally(() => workers.close()).catch(() => undefined);
  return stageWithTails(stage, [tail], { registry });
}

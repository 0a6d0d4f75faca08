import type { Registry } from 'prom-client';
import type { AlertBudget } from '../../processors/spikes/alert-desk.js';
import type { Embedder } from '../../processors/embed/embedder.js';
import type { ChatModel } from '../../processors/extract/chat-model.js';
import type { ExtractConfig } from '../../processors/extract/extract-config.js';
import { ALL_ENTITIES, ConfiguredTargets, unionTargets } from '../../processors/extract/extraction-targets.js';
import {
  LlmInteractionExtractor,
  OfflineInteractionExtractor,
  type InteractionExtractor,
} from '../../processors/extract/interaction-extractor.js';
import { EntityDirectory } from '../../processors/query/entity-directory.js';
import { EntityLinker } from '../../processors/query/reformulate-query.js';
import type { WebhookEndpoint } from '../../processors/spikes/deliver-webhook.js';
import type { FetchAllowList } from '../../schemas/outbound-address-policy.js';
import type { SpikeConfig } from '../../processors/spikes/spike-config.js';
import type { InteractionVariant } from '../../schemas/records.generated.js';
import { Retriever } from '../retrieval/retrieve.js';
import type { Datastore } from '../datastore/datastore.js';
import { stageMetrics } from '../telemetry/metrics.js';
import { followRegistryLinker } from '../views/registry-linker.js';
import type { RunningStage, StageLogger } from '../runtime/run-stage.js';
import { followSpikes, hubFeed, SpikeHub, type SpikeFeed } from '../views/spike-feed.js';
import { STAGE_CATALOG, stageDescriptor, type StageName } from './stage-catalog.js';
import { stageLag } from '../telemetry/stage-lag.js';
import { startChunkStage } from '../stages/chunk-stage.js';
import { startDedupeStage } from '../stages/dedupe-stage.js';
import { startExtractStage } from '../stages/extract-stage.js';
import { startChunkIndexStage, startInteractionIndexStage } from '../stages/index-stage.js';
import { startMarkupStage, type MarkupStage } from '../stages/markup-stage.js';
import { startQueryStage } from '../stages/query-stage.js';
import { startSpikeStage, type SpikeStage } from '../stages/spike-stage.js';
import { startWebhookStage } from '../stages/webhook-stage.js';
import { localTopicSpecs, TOPICS } from './topics.js';
import type { Transport } from '../runtime/transport.js';

export interface NeonPipelineOptions {
  transport: Transport;
  datastore: Datastore;
  embedder: Embedder;
  /** The LLM for extraction and answers; none: the offline extractor and extractive answers. */
  chat?: ChatModel;
  /** Which processors run in this process (all of them by default). */
  stages?: readonly StageName[];
  extract: ExtractConfig;
  spikes: SpikeConfig;
  /** The spike stories delivered per day and hour (the API's digest and stream); default the desk's. */
  alertBudget?: Partial<AlertBudget>;
  webhooks?: readonly WebhookEndpoint[];
  /** Internal addresses webhook endpoints may be on (`NEON_FETCH_ALLOW`); default none. */
  fetchAllow?: FetchAllowList;
  /** Worker threads of the markup stage's text analysis; 0 or absent: on the stage's own thread. */
  markupWorkers?: number;
  /** Prometheus registry for every stage's metrics. */
  registry: Registry;
  log?: StageLogger;
  /** Topic partitions when topics are created here (embedded mode, local broker). Default 6. */
  partitions?: number;
  /**
   * This process also serves the API (spike list and stream, entity directory): it then follows
   * `entity.spikes` and `entity.registry` whatever stages it runs. Default true.
   */
  serving?: boolean;
}

export interface StageProgress {
  stage: StageName;
  group: string;
  /** Records on its input topics not yet committed by its group (null when unknown). */
  lag: number | null;
  /** This process's counters (zero for a stage that runs elsewhere). */
  received: number;
  completed: number;
  dead_lettered: number;
  running: boolean;
}

export interface NeonPipeline {
  readonly stages: ReadonlyMap<StageName, RunningStage>;
  readonly markup: MarkupStage | undefined;
  readonly spikeStage: SpikeStage | undefined;
  readonly feed: SpikeFeed;
  readonly linker: EntityLinker;
  readonly directory: EntityDirectory;
  readonly retriever: Retriever;
  readonly extraction: {
    configured: ConfiguredTargets;
    mode: 'gated' | 'all';
    extractor: string;
    variants: InteractionVariant[];
  };
  /** Rejects when a stage dies, or following `entity.spikes` or `entity.registry` fails. */
  readonly done: Promise<void>;
  /** Stages started here that are no longer running (a liveness failure). */
  ended(): StageName[];
  /** Topics this process follows for the API and extraction but no longer can (a liveness failure). */
  lostFollows(): string[];
  /** Lag and counters of every stage of the catalog. */
  progress(): Promise<StageProgress[]>;
  /** Upstream first; `drainMs` overrides each stage's drain budget (0: give in-flight work up). */
  stop(drainMs?: number): Promise<void>;
}

/** Downstream first, so nothing waits on a stage that is not there yet. */
const START_ORDER: readonly StageName[] = [
  'index-chunks',
  'index-interactions',
  'query',
  'extract',
  'spikes',
  'dedupe',
  'chunk',
  'markup',
  'webhooks',
];

/**
 * The whole product's processing on one transport and one datastore: the same wiring for the
 * embedded mode (`neon start`: in-process topics and index) and for cluster mode (`neon pipeline`:
 * Kafka and Elasticsearch, where `stages` picks what one replica runs). Besides the stages it follows
 * `entity.spikes` (the spike list, the extraction targets) and `entity.registry` (entity linking and
 * the entity directory), which the API reads.
 */
export async function startNeonPipeline(options: NeonPipelineOptions): Promise<NeonPipeline> {
  const { transport, datastore, embedder, chat, registry, log } = options;
  const selected = new Set(options.stages ?? START_ORDER);
  const serving = options.serving ?? true;
  // Only the topics this process touches: on a cluster the operator owns them, and a processor's
  // credentials may describe nothing else.
  const used = topicsUsed([...selected], serving);
  await transport.ensureTopics(localTopicSpecs(options.partitions ?? 6).filter((spec) => used.has(spec.topic)));
  // Templates and aliases are the indexers' to create; the query side only reads them.
  if (selected.has('index-chunks') || selected.has('index-interactions')) {
    await datastore.prepare({ model: embedder.model, dimensions: embedder.dimensions });
  }
  const metricsFor = (stage: string) => stageMetrics(registry, stage);
  const common = (stage: string) => ({ metrics: metricsFor(stage), ...(log ? { log } : {}) });

  const followsRegistry = serving || selected.has('query');
  const followsSpikes = serving || selected.has('extract');
  const {
    linker,
    directory,
    tail: registryTail,
  } = followsRegistry
    ? await followRegistryLinker(transport, log ? { log } : {})
    : { linker: new EntityLinker(), directory: new EntityDirectory(), tail: undefined };
  const feed = followsSpikes
    ? await followSpikes(transport, TOPICS.spikes, {
        ...(log ? { log } : {}),
        ...(options.alertBudget ? { budget: options.alertBudget } : {}),
      })
    : hubFeed(new SpikeHub({}, options.alertBudget));
  // The configured model also plans multi-hop retrieval's later hops (asked for per request).
  const retriever = new Retriever({ datastore, embedder, linker, ...(chat ? { planner: chat } : {}) });
  const extractor: InteractionExtractor = chat ? new LlmInteractionExtractor(chat) : new OfflineInteractionExtractor();
  const configured = new ConfiguredTargets(options.extract.subjects);
  const mode = options.extract.targets ?? (chat ? 'gated' : 'all');
  const webhooks = options.webhooks ?? [];

  const stages = new Map<StageName, RunningStage>();
  let markup: MarkupStage | undefined;
  let spikeStage: SpikeStage | undefined;
  const stopAll = async (drainMs?: number): Promise<void> => {
    // Upstream first: each stage drains what it holds before the next one stops.
    for (const name of [...START_ORDER].reverse()) await stages.get(name)?.stop(drainMs);
    await feed.stop();
    await registryTail?.stop();
  };
  try {
    for (const name of START_ORDER) {
      if (!selected.has(name)) continue;
      switch (name) {
        case 'index-chunks':
          stages.set(name, await startChunkIndexStage(transport, { datastore, embedder, registry, ...common(name) }));
          break;
        case 'index-interactions':
          stages.set(
            name,
            await startInteractionIndexStage(transport, { datastore, embedder, registry, ...common(name) }),
          );
          break;
        case 'query':
          stages.set(name, await startQueryStage(transport, { retriever, ...(chat ? { chat } : {}), ...common(name) }));
          break;
        case 'extract':
          stages.set(
            name,
            await startExtractStage(transport, {
              extractor,
              targets: mode === 'all' ? ALL_ENTITIES : unionTargets(configured, feed.targets),
              variants: options.extract.variants,
              batching: options.extract.batching,
              pairSelection: options.extract.pairSelection,
              ...(options.extract.backfill ? { backfill: options.extract.backfill } : {}),
              registry,
              ...common(name),
            }),
          );
          break;
        case 'spikes':
          spikeStage = await startSpikeStage(transport, { registry, detector: options.spikes, ...common(name) });
          stages.set(name, spikeStage);
          break;
        case 'dedupe':
          stages.set(name, await startDedupeStage(transport, common(name)));
          break;
        case 'chunk':
          stages.set(name, await startChunkStage(transport, common(name)));
          break;
        case 'markup':
          markup = await startMarkupStage(transport, { workers: options.markupWorkers ?? 0, ...common(name) });
          stages.set(name, markup);
          break;
        case 'webhooks':
          if (webhooks.length > 0) {
            stages.set(
              name,
              await startWebhookStage(transport, {
                endpoints: webhooks,
                ...(options.fetchAllow ? { fetchAllow: options.fetchAllow } : {}),
                ...common(name),
              }),
            );
          }
          break;
      }
    }
  } catch (error) {
    await stopAll().catch(() => undefined);
    throw error;
  }

  const running = new Set<StageName>(stages.keys());
  for (const [name, stage] of stages) void stage.done.finally(() => running.delete(name)).catch(() => undefined);
  // A follower that failed (its group denied, say) leaves the spike list, the extraction targets or
  // entity linking stale for good: as dead as a stage.
  const follows = [
    ...(followsSpikes ? [{ topic: TOPICS.spikes, done: feed.done }] : []),
    ...(registryTail ? [{ topic: TOPICS.registry, done: registryTail.done }] : []),
  ];
  const lost = new Set<string>();
  for (const follow of follows) void follow.done.catch(() => lost.add(follow.topic));

  return {
    stages,
    markup,
    spikeStage,
    feed,
    linker,
    directory,
    retriever,
    extraction: {
      configured,
      mode,
      extractor: extractor.model,
      variants: options.extract.variants.filter((v) => extractor.variants.includes(v)),
    },
    done: Promise.all([...[...stages.values()].map((s) => s.done), ...follows.map((f) => f.done)]).then(
      () => undefined,
    ),
    ended: () => [...stages.keys()].filter((name) => !running.has(name)),
    lostFollows: () => [...lost],
    progress: async () =>
      Promise.all(
        STAGE_CATALOG.map(async (descriptor) => {
          const stats = stages.get(descriptor.name)?.stats();
          let lag: number | null;
          try {
            const found = await stageLag(transport, descriptor);
            // A group that never committed and does not run here has no consumer: no lag to speak of.
            lag = found.everCommitted || stages.has(descriptor.name) ? found.lag : null;
          } catch {
            lag = null;
          }
          return {
            stage: descriptor.name,
            group: descriptor.group,
            lag,
            received: stats?.received ?? 0,
            completed: stats?.completed ?? 0,
            dead_lettered: stats?.deadLettered ?? 0,
            running: running.has(descriptor.name),
          };
        }),
      ),
    stop: stopAll,
  };
}

/** Every topic the selected stages read, follow or write, and what the API follows when served here. */
function topicsUsed(stages: readonly StageName[], serving: boolean): Set<string> {
  const used = new Set<string>(serving ? [TOPICS.spikes, TOPICS.registry] : []);
  for (const name of stages) {
    const descriptor = stageDescriptor(name);
    for (const topic of [...descriptor.reads, ...descriptor.follows, ...descriptor.writes]) used.add(topic);
  }
  return used;
}

import type { Registry } from 'prom-client';
import { ensureEmbeddingModel } from '../../infra/models/download-embedding-model.js';
import { createEmbedder } from '../../streams/embed/create-embedder.js';
import { EmbedderError, type Embedder } from '../../processors/embed/embedder.js';
import type { ChatModel } from '../../processors/extract/chat-model.js';
import { OpenAiChatModel } from '../../streams/llm/openai-chat-model.js';
import type { ArticlePublisher } from '../../processors/intake/article-input.js';
import { redactUrl } from '../../schemas/connection-config.js';
import { startApiServer, type ApiServer } from '../../service/api-server.js';
import type { FeedStatus, StatusDocument } from '../../service/status-routes.js';
import type { Datastore } from '../../streams/datastore/datastore.js';
import { createMetricsRegistry } from '../../streams/telemetry/metrics.js';
import { healthFrom } from '../../streams/telemetry/health-checks.js';
import { startMetricsServer, type HealthReport, type MetricsServer } from '../../streams/telemetry/metrics-server.js';
import { MonthCompactor } from '../../streams/datastore/month-compactor.js';
import { startNeonPipeline, type NeonPipeline } from '../../streams/pipeline/neon-pipeline.js';
import type { StageLogger } from '../../streams/runtime/run-stage.js';
import { STAGE_NAMES, stageDescriptor, type StageName } from '../../streams/pipeline/stage-catalog.js';
import { TOPICS } from '../../streams/pipeline/topics.js';
import type { Transport } from '../../streams/runtime/transport.js';
import type { ProductConfig } from './product-config.js';

/** How often retention and month merging run (a month is merged after a whole interval without writes). */
const MAINTENANCE_INTERVAL_MS = 3_600_000;

export interface ProductRuntimeOptions {
  mode: 'embedded' | 'cluster';
  transport: Transport;
  datastore: Datastore;
  config: ProductConfig;
  /** Which processors run here; default all. */
  stages?: readonly StageName[];
  /** The API (and dashboard) on this port; null: no API in this process. */
  api: { port: number; host?: string } | null;
  /** Prometheus metrics and the health probes on their own port; null: none. */
  metricsPort: number | null;
  /** Where the metrics port listens (default loopback; `0.0.0.0` in a pod). */
  metricsHost?: string;
  /** What is feeding the pipeline, for `/v1/status`. */
  feedStatus?: () => FeedStatus;
  /** Where `POST /v1/articles` publishes (with `intakeTokens`). */
  intake?: { publisher: ArticlePublisher; tokens: readonly string[] };
  log?: StageLogger;
  /** Progress lines for people (model download…). */
  say: (line: string) => void;
  registry?: Registry;
}

export interface ProductRuntime {
  readonly pipeline: NeonPipeline;
  readonly embedder: Embedder;
  readonly chat: ChatModel | undefined;
  readonly api: ApiServer | undefined;
  readonly metrics: MetricsServer | undefined;
  readonly registry: Registry;
  /** Liveness (no stage died) and readiness (the transport and, where used, the datastore answer). */
  health(): Promise<HealthReport>;
  status(): Promise<StatusDocument>;
  /** Everything, upstream first; `drainMs` overrides each stage's drain budget (see NeonPipeline.stop). */
  stop(drainMs?: number): Promise<void>;
}

/**
 * One running neon-stream: the processing (all or some stages), the API with its status, and
 * metrics — the same for `neon start` (embedded) and `neon pipeline` (Kafka + Elasticsearch).
 * Everything started here is stopped by `stop`, upstream first.
 */
export async function startProductRuntime(options: ProductRuntimeOptions): Promise<ProductRuntime> {
  const { config, transport, datastore } = options;
  const startedAt = new Date().toISOString();
  const registry = options.registry ?? createMetricsRegistry({ defaultMetrics: true });
  // Only indexing, the query stage and the API embed: a markup or chunk replica does not load a model.
  const embeds =
    options.api !== null ||
    (options.stages ?? STAGE_NAMES).some((name) => name === 'query' || name.startsWith('index-'));
  const embedder = embeds
    ? await createEmbedder(config.embedder, {
        obtainModel: (cacheDir, pin) => ensureEmbeddingModel(cacheDir, pin, options.say),
      })
    : unusedEmbedder();
  const chat = config.llm.kind === 'none' ? undefined : new OpenAiChatModel(config.llm, { registry });
  let pipeline: NeonPipeline | undefined;
  let api: ApiServer | undefined;
  let metrics: MetricsServer | undefined;
  let maintenance: NodeJS.Timeout | undefined;
  const stop = async (drainMs?: number): Promise<void> => {
    clearInterval(maintenance);
    await api?.close();
    await pipeline?.stop(drainMs);
    await metrics?.close();
    await chat?.close();
    await embedder.close();
    await datastore.close();
    await transport.close();
  };
  try {
    pipeline = await startNeonPipeline({
      transport,
      datastore,
      embedder,
      ...(chat ? { chat } : {}),
      ...(options.stages ? { stages: options.stages } : {}),
      extract: config.extract,
      spikes: config.spikes,
      alertBudget: config.alertBudget,
      webhooks: config.webhooks,
      fetchAllow: config.fetchAllow,
      markupWorkers: config.markupWorkers,
      registry,
      serving: options.api !== null,
      ...(options.log ? { log: options.log } : {}),
    });
    const running = pipeline;
    const usesDatastore =
      options.api !== null || [...running.stages.keys()].some((name) => stageDescriptor(name).datastores.length > 0);
    const health = healthFrom(
      () => [
        ...running.ended().map((name) => `stage ${name} stopped`),
        ...running.lostFollows().map((topic) => `no longer following ${topic}`),
      ],
      [
        { name: 'transport', run: () => transport.endOffsets(TOPICS.deadLetters) },
        ...(usesDatastore ? [{ name: 'datastore', run: () => datastore.count('interactions') }] : []),
      ],
    );
    const count = (kind: 'chunks' | 'interactions'): Promise<number | null> => datastore.count(kind).catch(() => null);
    const status = async (): Promise<StatusDocument> => {
      const [stages, chunks, interactions] = await Promise.all([
        running.progress(),
        count('chunks'),
        count('interactions'),
      ]);
      return {
        mode: options.mode,
        started_at: startedAt,
        server_time: new Date().toISOString(),
        feed: options.feedStatus?.() ?? {
          kind: 'none',
          name: 'none in this process',
          articles_total: null,
          articles_replayed: 0,
          articles_rejected: 0,
          position: null,
          done: false,
        },
        stages: stages.map((s) => ({
          stage: s.stage,
          group: s.group,
          lag: s.lag,
          received: s.received,
          sent: s.completed,
          dead_lettered: s.dead_lettered,
          running: s.running,
        })),
        // Served to anyone with API access: a location given with credentials shows without them.
        datastores: { location: redactUrl(datastore.location), chunks, interactions },
        entities: running.directory.size,
        spikes: {
          open: running.feed.book.query({ state: 'open', limit: 100_000 }).length,
          total: running.feed.book.size(),
        },
        embedder: embedder.model,
        llm: chat?.model ?? null,
        extractor: running.extraction.extractor,
      };
    };
    if (options.api) {
      api = await startApiServer({
        port: options.api.port,
        ...(options.api.host ? { host: options.api.host } : {}),
        apiKeys: config.apiKeys,
        spikes: running.feed,
        retriever: running.retriever,
        directory: running.directory,
        status,
        ...(chat ? { chat } : {}),
        extraction: {
          configured: running.extraction.configured,
          spiking: running.feed.targets,
          mode: running.extraction.mode,
        },
        ...(options.intake ? { intake: options.intake } : {}),
        registry,
      });
    }
    if (options.metricsPort !== null) {
      metrics = await startMetricsServer({
        registry,
        port: options.metricsPort,
        ...(options.metricsHost ? { host: options.metricsHost } : {}),
        health,
      });
    }
    // Maintenance of the months this process indexes, at start and then hourly: retention drops
    // whole months past it (the integ-test Elasticsearch has no ILM), and finished months are merged
    // into one segment (see MonthCompactor). Both are harmless to repeat, so every replica may run them.
    const indexed = (['chunks', 'interactions'] as const).filter((kind) => running.stages.has(`index-${kind}`));
    if (indexed.length > 0) {
      const retentionDays = config.retentionDays;
      const compactor = new MonthCompactor(datastore, indexed);
      const maintain = async (): Promise<void> => {
        if (retentionDays !== undefined) {
          const keepFrom = Date.now() - retentionDays * 86_400_000;
          for (const kind of ['chunks', 'interactions'] as const) {
            const dropped = await datastore.dropMonthsBefore(kind, keepFrom).catch(() => []);
            if (dropped.length > 0) options.say(`retention: dropped ${dropped.join(', ')}`);
          }
        }
        const pass = await compactor.pass().catch((error: unknown) => {
          options.say(`maintenance: could not merge finished months (${String(error)}); trying again in an hour`);
          return { merging: [], unmerged: [] };
        });
        if (pass.unmerged.length > 0) {
          options.say(
            `maintenance: ${pass.unmerged.join(', ')} still not merged an hour after asking (is the merge refused? ` +
              'the indexer key needs the maintenance privilege); asking again',
          );
        }
        if (pass.merging.length > 0)
          options.say(`maintenance: merging ${pass.merging.join(', ')} into one segment each`);
      };
      await maintain();
      maintenance = setInterval(() => void maintain(), MAINTENANCE_INTERVAL_MS);
      maintenance.unref();
    }
    return { pipeline, embedder, chat, api, metrics, registry, health, status, stop };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}

/** Stands in where no stage embeds, so the pipeline's wiring stays the same without a model in memory. */
function unusedEmbedder(): Embedder {
  return {
    model: 'none (no stage here embeds)',
    dimensions: 0,
    embed: () =>
      Promise.reject(new EmbedderError('embedder_unavailable', 'no stage in this process embeds text', false)),
    close: () => Promise.resolve(),
  };
}

import type { Command } from 'commander';
import { createMetricsRegistry, stageMetrics } from '../../streams/metrics.js';
import { startMetricsServer } from '../../streams/metrics-server.js';
import { startArticlePipeline } from '../../streams/stages/article-pipeline.js';
import { untilSignalled } from '../../streams/stop-on-signals.js';
import { webhookEnvSchema } from '../../processors/spikes/deliver-webhook.js';
import { spikeConfigFromEnv } from '../../processors/spikes/spike-config.js';
import { apiKeysFrom, startApiServer } from '../../service/api-server.js';
import { ConfigError } from '../../schemas/local-infra-config.js';
import { followSpikes } from '../../streams/spike-feed.js';
import { startSpikeStage } from '../../streams/stages/spike-stage.js';
import { startWebhookStage } from '../../streams/stages/webhook-stage.js';
import { TOPICS } from '../../streams/topics.js';
import type { RunningStage } from '../../streams/run-stage.js';
import { ensureDatastores } from '../../streams/datastores.js';
import { followRegistryLinker } from '../../streams/registry-linker.js';
import { startChunkIndexStage, startInteractionIndexStage } from '../../streams/stages/index-stage.js';
import { startQueryStage } from '../../streams/stages/query-stage.js';
import { Retriever } from '../../service/retrieve.js';
import { chatModelFromEnv } from '../../processors/extract/openai-chat-model.js';
import { extractConfigFromEnv } from '../../processors/extract/extract-config.js';
import { ALL_ENTITIES, ConfiguredTargets, unionTargets } from '../../processors/extract/extraction-targets.js';
import {
  LlmInteractionExtractor,
  OfflineInteractionExtractor,
} from '../../processors/extract/interaction-extractor.js';
import { startExtractStage } from '../../streams/stages/extract-stage.js';
import { clusterElasticsearch, configuredEmbedder, indexPrefix } from './cluster-services.js';
import { clusterTransport } from './cluster-transport.js';

/**
 * `neon pipeline` — runs markup → chunk → dedupe → spike detection and the indexing of chunks and
 * interactions on Kafka + Elasticsearch until SIGTERM / Ctrl-C, with webhooks when configured, the
 * Kafka query stage, and the API (`/v1/ask`, `/v1/search`, `/v1/spikes`, its event stream) and
 * metrics on /metrics. Each stage is its own consumer group, so more processes running this scale out.
 */
export function registerPipelineCommand(program: Command): void {
  program
    .command('pipeline')
    .description('run every stage on Kafka + Elasticsearch (KAFKA_BROKERS / ES_URL, or the local ones) with the API')
    .option('--metrics-port <port>', 'serve Prometheus metrics on this port (0: any free port)', '9464')
    .option('--api-port <port>', 'serve the API on this port (0: any free port)', '8080')
    .action(async (flags: { metricsPort: string; apiPort: string }) => {
      const say = (line: string): void => void process.stdout.write(`${line}\n`);
      const webhooks = webhookEnvSchema.safeParse(process.env);
      if (!webhooks.success) {
        throw new ConfigError(webhooks.error.issues.map((i) => `${String(i.path[0] ?? '')}: ${i.message}`));
      }
      const spikeConfig = spikeConfigFromEnv(process.env);
      if (!spikeConfig.ok) throw new ConfigError(spikeConfig.problems);
      const extractConfig = extractConfigFromEnv(process.env);
      if (!extractConfig.ok) throw new ConfigError(extractConfig.problems);
      const { transport, brokers } = await clusterTransport('neon-pipeline');
      const { es, url: esUrl } = clusterElasticsearch();
      const embedder = await configuredEmbedder();
      const prefix = indexPrefix();
      await ensureDatastores(es, { model: embedder.model, dimensions: embedder.dimensions }, { prefix });
      const registry = createMetricsRegistry({ defaultMetrics: true });
      const metrics = await startMetricsServer({ registry, port: Number(flags.metricsPort) });
      const metricsFor = (stage: string) => stageMetrics(registry, stage);
      const { linker, tail: registryTail } = await followRegistryLinker(transport);
      const retriever = new Retriever({ es, embedder, linker, prefix });
      const chat = chatModelFromEnv(process.env, { registry });
      // Downstream first, so nothing waits on a stage that is not there yet.
      const stages: RunningStage[] = [
        await startChunkIndexStage(transport, { es, embedder, prefix, metrics: metricsFor('index-chunks') }),
        await startInteractionIndexStage(transport, {
          es,
          embedder,
          prefix,
          metrics: metricsFor('index-interactions'),
        }),
        await startQueryStage(transport, { retriever, metrics: metricsFor('query'), ...(chat ? { chat } : {}) }),
      ];
      // Extraction targets: configured subjects ∪ spiking entities (or every entity, offline by default).
      const feed = await followSpikes(transport, TOPICS.spikes);
      const extractor = chat ? new LlmInteractionExtractor(chat) : new OfflineInteractionExtractor();
      const configured = new ConfiguredTargets(extractConfig.config.subjects);
      const targetMode = extractConfig.config.targets ?? (chat ? 'gated' : 'all');
      stages.push(
        await startExtractStage(transport, {
          extractor,
          targets: targetMode === 'all' ? ALL_ENTITIES : unionTargets(configured, feed.targets),
          variants: extractConfig.config.variants,
          batching: extractConfig.config.batching,
          pairSelection: extractConfig.config.pairSelection,
          registry,
          metrics: metricsFor('extract'),
        }),
      );
      const spikes = await startSpikeStage(transport, {
        metrics: metricsFor('spikes'),
        registry,
        detector: spikeConfig.config,
      });
      stages.push(spikes);
      const pipeline = await startArticlePipeline(transport, { metricsFor });
      if (webhooks.data.length > 0) {
        stages.push(await startWebhookStage(transport, { endpoints: webhooks.data, metrics: metricsFor('webhooks') }));
      }
      const api = await startApiServer({
        port: Number(flags.apiPort),
        apiKeys: apiKeysFrom(process.env),
        spikes: feed,
        retriever,
        ...(chat ? { chat } : {}),
        extraction: { configured, spiking: feed.targets, mode: targetMode },
      });
      say(
        `pipeline running on ${brokers.join(',')} and ${esUrl}: news.articles → markup → chunk → dedupe → ` +
          'spikes, extract, index (embeddings: ' +
          `${embedder.model})`,
      );
      say(
        `registry: ${pipeline.markup.registry.size} entities; spike state: ${spikes.detector.size().entities} entities`,
      );
      say(
        `API at ${api.url}: /v1/ask, /v1/search, /v1/spikes (live: /v1/spikes/stream); metrics at ${metrics.url}/metrics`,
      );
      if (webhooks.data.length > 0) say(`webhooks: ${webhooks.data.length} endpoint(s)`);
      say(chat ? `answers written by ${chat.model}` : 'no LLM configured (NEON_LLM_*): extractive answers');
      say(
        `extraction: ${extractor.model}, ${extractConfig.config.variants.filter((v) => extractor.variants.includes(v)).join('+')}, ` +
          (targetMode === 'all' ? 'every entity' : `targets: ${configured.list().length} configured ∪ spiking`),
      );
      say('Ctrl-C to stop');
      await untilSignalled(
        async () => {
          await pipeline.stop();
          for (const stage of [...stages].reverse()) await stage.stop();
          await api.close();
          await feed.stop();
          await registryTail.stop();
          await metrics.close();
          await chat?.close();
          await embedder.close();
          await es.close();
          await transport.close();
        },
        { what: 'pipeline', died: Promise.all([pipeline.done, ...stages.map((s) => s.done)]) },
      );
    });
}

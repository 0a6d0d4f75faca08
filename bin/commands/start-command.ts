import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { UsageError } from '../../infra/cli-errors.js';
import {
  downLocalInfrastructure,
  localEndpoints,
  localInfrastructureStatus,
  upLocalInfrastructure,
} from '../../infra/local-infrastructure.js';
import { loadLocalInfraConfig } from '../../schemas/local-infra-config.js';
import { createGuardedFetch } from '../../streams/http/guarded-fetch.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import type { Datastore } from '../../streams/datastore/datastore.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { untilSignalled } from '../../streams/runtime/stop-on-signals.js';
import type { Transport } from '../../streams/runtime/transport.js';
import { clusterElasticsearch, indexPrefix } from './cluster-services.js';
import { clusterTransport } from './cluster-transport.js';
import { describeRuntime } from './describe-runtime.js';
import { readFeedList } from './intake-command.js';
import {
  BUNDLED_SAMPLE,
  DEFAULT_FEEDS_FILE,
  followLiveFeeds,
  replaySample,
  type NewsSource,
} from '../../streams/stages/intake-sources.js';
import { parsePort } from './parse-port.js';
import { loadProductConfig } from './product-config.js';
import { startProductRuntime, type ProductRuntime } from './product-runtime.js';
import { removeRunRecord, writeRunRecord } from './service-client.js';
import { createTerminalReporter } from './terminal-reporter.js';
import { printable } from './terminal-text.js';

interface StartFlags {
  cluster?: boolean;
  port: string;
  host: string;
  metricsPort?: string;
  feeds?: string;
  sample?: boolean;
  live: boolean;
  speed: string;
  limit?: string;
  once?: boolean;
  quiet?: boolean;
}

/** Polls until every stage running here has nothing left on its inputs (twice in a row). */
async function caughtUp(runtime: ProductRuntime, isStopping: () => boolean): Promise<void> {
  let quietRounds = 0;
  while (!isStopping()) {
    const stages = await runtime.pipeline.progress();
    const behind = stages.filter((s) => s.running && (s.lag === null || s.lag > 0));
    quietRounds = behind.length === 0 ? quietRounds + 1 : 0;
    if (quietRounds >= 2) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/**
 * `neon start` — the whole product in one process. By default embedded (in-process topics and
 * index behind the same interfaces as Kafka and Elasticsearch: no Java, no broker, no API key);
 * `--cluster` runs the same pipeline on Kafka + Elasticsearch (KAFKA_BROKERS / ES_URL, or local ones
 * it starts and later stops). News comes from the live feeds when they answer, otherwise from the
 * bundled sample, replayed in publication order; the API and the dashboard share one port.
 */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run the whole product: ingest news, detect spikes, extract, index, serve the API and dashboard')
    .option('--cluster', 'run on Kafka + Elasticsearch (KAFKA_BROKERS / ES_URL, or start local ones)')
    .option('--port <port>', 'port of the API and dashboard (0: any free port)', '8080')
    .option('--host <host>', 'address to listen on (keep loopback unless NEON_API_KEYS is set)', '127.0.0.1')
    .option('--metrics-port <port>', 'also serve Prometheus metrics on this port')
    .option('--feeds <file>', 'live feeds to poll (YAML/JSON feed list; default samples/live-feeds.yaml, NEON_FEEDS)')
    .option('--sample', 'replay the bundled sample even if live feeds are reachable')
    .option('--no-live', 'do not try the live feeds (offline: replay the sample)')
    .option('--speed <n>', 'replay speed: times faster than real time (172800 = two days a second)', '172800')
    .option('--limit <n>', 'replay at most n articles of the sample')
    .option('--once', 'exit once the news source is exhausted and every stage has caught up')
    .option('--quiet', 'no progress bar or status lines (alerts and errors still print)')
    .action(async (flags: StartFlags) => {
      const out = (line: string): void => void process.stdout.write(`${printable(line)}\n`);
      const port = parsePort(flags.port, '--port');
      const metricsPort = flags.metricsPort === undefined ? null : parsePort(flags.metricsPort, '--metrics-port');
      const speed = Number(flags.speed);
      if (!(speed > 0 && Number.isFinite(speed))) throw new UsageError(`--speed must be a positive number`);
      const limit = flags.limit === undefined ? undefined : Number(flags.limit);
      if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
        throw new UsageError('--limit must be a positive integer');
      }
      const feedsFile = flags.feeds ?? process.env.NEON_FEEDS ?? DEFAULT_FEEDS_FILE;
      const feeds = flags.sample || !flags.live ? [] : readFeedList(feedsFile);
      const config = loadProductConfig(process.env);
      const infraConfig = loadLocalInfraConfig(process.env);

      let transport: Transport;
      let datastore: Datastore;
      let stopOwnInfra = async (): Promise<void> => undefined;
      if (flags.cluster) {
        out('neon-stream (cluster mode): the pipeline on Kafka + Elasticsearch');
        if (process.env.KAFKA_BROKERS === undefined || process.env.ES_URL === undefined) {
          const before = await localInfrastructureStatus(infraConfig);
          const ready = new Set(before.filter((s) => s.state === 'ready').map((s) => s.service));
          await upLocalInfrastructure(infraConfig, undefined, out);
          const ours = (['kafka', 'elasticsearch'] as const).filter((s) => !ready.has(s));
          stopOwnInfra = async () => {
            if (ours.length > 0) for (const line of await downLocalInfrastructure(infraConfig, ours)) out(line);
          };
          const endpoints = localEndpoints(infraConfig);
          process.env.KAFKA_BROKERS ??= endpoints.kafkaBrokers.join(',');
          process.env.ES_URL ??= endpoints.elasticsearchUrl;
        }
        transport = (await clusterTransport('neon-start')).transport;
        const { es, url } = clusterElasticsearch();
        datastore = new ElasticsearchDatastore({ es, prefix: indexPrefix(), location: url });
      } else {
        out('neon-stream (embedded mode): every stage in this process on in-process topics and an in-process');
        out('index — no Java, no broker, no API key needed. State lasts as long as the process.');
        transport = createEmbeddedTransport();
        datastore = new EmbeddedDatastore(indexPrefix());
      }

      const reporter = createTerminalReporter({ ...(flags.quiet ? { quiet: true } : {}) });
      const publisher = new TransportArticlePublisher(transport.producer(), { processor: 'intake' });
      const intakeToken = randomBytes(24).toString('base64url');
      let source: NewsSource | undefined;
      let runtime: ProductRuntime;
      try {
        out(`loading the embedding model and starting the stages…`);
        runtime = await startProductRuntime({
          mode: flags.cluster ? 'cluster' : 'embedded',
          transport,
          datastore,
          config,
          api: { port, host: flags.host },
          metricsPort,
          feedStatus: () =>
            source?.status() ?? {
              kind: 'none',
              name: 'none',
              articles_total: null,
              articles_replayed: publisher.counters.published,
              articles_rejected: 0,
              position: null,
              done: false,
            },
          intake: { publisher, tokens: [intakeToken, ...config.intakeTokens] },
          say: out,
        });
      } catch (error) {
        await stopOwnInfra();
        throw error;
      }
      for (const line of describeRuntime(runtime)) out(line);
      const url = runtime.api!.url;
      writeRunRecord({
        pid: process.pid,
        url,
        mode: flags.cluster ? 'cluster' : 'embedded',
        intake_token: intakeToken,
        started_at: new Date().toISOString(),
      });
      const unsubscribe = runtime.pipeline.feed.subscribe((event) => reporter.alert(event.alert, event));

      if (feeds.length > 0) {
        out(`trying ${feeds.length} live feeds from ${feedsFile}…`);
        source = await followLiveFeeds({
          publisher,
          feeds,
          dataDir: infraConfig.dataDir,
          name: feedsFile,
          fetch: createGuardedFetch({ allow: config.fetchAllow }),
          ...(flags.once ? { once: true } : {}),
          counters: () => ({
            published: publisher.counters.published,
            rejected: Object.values(publisher.counters.rejected).reduce((n, c) => n + c, 0),
          }),
        });
        if (source === undefined) out('no live feed answered (offline?): replaying the bundled sample instead');
        else out(`polling live feeds: ${source.status().name}`);
      }
      if (source === undefined) {
        out(`replaying ${BUNDLED_SAMPLE.name} in publication order at ${speed}× real time`);
        source = replaySample({ publisher, speed, ...(limit === undefined ? {} : { limit }) });
      }
      const news = source;
      out(`dashboard and API: ${url}/   ask from another terminal: npm run neon -- ask "…" --date YYYY-MM-DD`);
      out('Ctrl-C to stop');

      let stopping = false;
      const ticker = setInterval(() => {
        void runtime
          .status()
          .then((status) => reporter.progress(status))
          .catch(() => undefined);
      }, 1_000);
      const finishedNote = news.finished.then(async (report) => {
        if (stopping) return;
        reporter.stop();
        out(
          `${news.status().kind === 'sample' ? 'replayed' : 'polled'} ${report.published} articles ` +
            `(${report.refused} refused) in ${(report.durationMs / 1000).toFixed(0)} s; waiting for the stages to catch up…`,
        );
        await caughtUp(runtime, () => stopping);
        // Set by a signal while waiting (the closure above reads it too).
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
        if (stopping) return;
        const status = await runtime.status();
        out(
          `caught up: ${status.datastores.chunks ?? '?'} chunks and ${status.datastores.interactions ?? '?'} ` +
            `interactions searchable, ${status.entities} entities, ${status.spikes.total} spike episodes ` +
            `(${status.spikes.open} open). Open ${url}/ or ask: npm run neon -- ask "Los Angeles wildfires" --date 2025-01-10`,
        );
      });
      const shutdown = async (): Promise<void> => {
        stopping = true;
        clearInterval(ticker);
        reporter.stop();
        unsubscribe();
        await news.stop();
        // Embedded, every record and index lives in this process and ends with it: draining in-flight
        // work would only delay the exit. On Kafka + Elasticsearch, drain and commit.
        if (flags.cluster) await runtime.stop();
        else await runtime.stop(0);
        removeRunRecord(process.pid);
        await stopOwnInfra();
      };
      if (flags.once) {
        try {
          await finishedNote;
        } finally {
          await shutdown();
        }
        return;
      }
      await untilSignalled(shutdown, {
        what: 'neon start',
        ...(flags.cluster
          ? {}
          : { stopping: 'embedded mode: nothing outlives this process, so in-flight work is dropped, not drained' }),
        died: Promise.all([runtime.pipeline.done, news.finished]),
      });
    });
}

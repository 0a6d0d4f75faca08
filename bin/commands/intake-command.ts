import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { createArticleEndpointServer } from '../../service/article-endpoint.js';
import { validateFeedSubscriptions, type FeedSubscription } from '../../streams/feeds/feed-poller.js';
import { UsageError } from '../../infra/cli-errors.js';
import { ConfigError, loadLocalInfraConfig } from '../../schemas/local-infra-config.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { feedIntake, intakeHealth } from '../../streams/stages/intake-stage.js';
import { guardedFetchFromEnv } from '../../streams/http/guarded-fetch.js';
import { untilSignalled } from '../../streams/runtime/stop-on-signals.js';
import { TOPICS } from '../../streams/pipeline/topics.js';
import { clusterTransport } from './cluster-transport.js';
import { stageLogger } from '../../streams/telemetry/logger.js';
import { createMetricsRegistry } from '../../streams/telemetry/metrics.js';
import { startMetricsServer } from '../../streams/telemetry/metrics-server.js';
import { parsePort } from './parse-port.js';

/** A feed list file: YAML or JSON, `feeds: [{ url, interval_seconds, source? }]` (or a bare list). */
export function readFeedList(path: string): FeedSubscription[] {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { feeds?: unknown } | null)?.feeds;
  if (!Array.isArray(list)) throw new UsageError(`${path}: expected a list of feeds, or "feeds:" with one`);
  try {
    return validateFeedSubscriptions(
      list.map((feed: unknown) => {
        if (typeof feed === 'string') return { url: feed, intervalSeconds: 300 };
        const f = feed as Record<string, unknown>;
        return { ...f, intervalSeconds: f.intervalSeconds ?? f.interval_seconds ?? 300, interval_seconds: undefined };
      }),
    );
  } catch (error) {
    if (error instanceof Error && 'problems' in error)
      throw new ConfigError((error as { problems: string[] }).problems);
    throw error;
  }
}

/**
 * `neon intake` — polls the configured feeds and serves `POST /v1/articles`, publishing to
 * news.articles (refusals to neon.dlq) until SIGTERM / Ctrl-C. Feed state (ETags, seen items) is
 * kept under the data directory, so a restart fetches only what is new.
 */
export function registerIntakeCommand(program: Command): void {
  program
    .command('intake')
    .description('poll RSS/Atom/JSON feeds and accept POSTed articles, publishing to news.articles')
    .option('--feeds <file>', 'feed list (YAML or JSON): feeds: [{ url, interval_seconds, source }]')
    .option('--port <port>', 'port of POST /v1/articles (needs NEON_INTAKE_TOKENS)', '8081')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--metrics-port <port>', 'serve Prometheus metrics and /livez, /readyz on this port', '9464')
    .option('--metrics-host <host>', 'address the metrics port listens on', '127.0.0.1')
    .action(async (flags: { feeds?: string; port: string; host: string; metricsPort: string; metricsHost: string }) => {
      const say = (line: string): void => void process.stdout.write(`${line}\n`);
      const feeds = flags.feeds ? readFeedList(flags.feeds) : [];
      const tokens = (process.env.NEON_INTAKE_TOKENS ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t.length > 0);
      if (feeds.length === 0 && tokens.length === 0) {
        throw new UsageError('nothing to do: give --feeds FILE, or set NEON_INTAKE_TOKENS to accept POSTed articles');
      }
      // Checked before connecting to Kafka, so a mistyped port fails at once rather than after the broker.
      const port = parsePort(flags.port, '--port');
      const outbound = guardedFetchFromEnv(process.env);
      const metricsPort = parsePort(flags.metricsPort, '--metrics-port');
      const { transport, brokers } = await clusterTransport('neon-intake', process.env, [
        TOPICS.articles,
        TOPICS.deadLetters,
      ]);
      const registry = createMetricsRegistry();
      const publisher = new TransportArticlePublisher(transport.producer(), { processor: 'intake', registry });
      const metrics = await startMetricsServer({
        registry,
        port: metricsPort,
        host: flags.metricsHost,
        health: intakeHealth(transport),
      });
      const intake = feedIntake({
        feeds,
        publisher,
        dataDir: loadLocalInfraConfig(process.env).dataDir,
        fetch: outbound,
        log: stageLogger('intake'),
      });
      const app = tokens.length > 0 ? createArticleEndpointServer({ publisher, tokens }) : undefined;
      if (app !== undefined) {
        await app.listen({ port, host: flags.host });
        say(`accepting POST http://${flags.host}:${port}/v1/articles (Bearer token from NEON_INTAKE_TOKENS)`);
      }
      intake.start();
      say(
        `intake publishing to news.articles on ${brokers.join(',')}; ${feeds.length} feed(s); state in ${intake.stateDir}`,
      );
      await untilSignalled(
        async () => {
          await app?.close();
          await intake.stop();
          await transport.close();
          await metrics.close();
          say(`published ${publisher.counters.published}; rejected ${JSON.stringify(publisher.counters.rejected)}`);
        },
        { what: 'intake' },
      );
    });
}

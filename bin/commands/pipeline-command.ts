import type { Command } from 'commander';
import { createMetricsRegistry, stageMetrics } from '../../streams/metrics.js';
import { startMetricsServer } from '../../streams/metrics-server.js';
import { startArticlePipeline } from '../../streams/stages/article-pipeline.js';
import { untilSignalled } from '../../streams/stop-on-signals.js';
import { clusterTransport } from './cluster-transport.js';

/**
 * `neon pipeline` — runs markup → chunk → dedupe on Kafka until SIGTERM / Ctrl-C, with their metrics
 * on /metrics. Each stage is its own consumer group, so more processes running this scale out.
 */
export function registerPipelineCommand(program: Command): void {
  program
    .command('pipeline')
    .description('run the markup, chunk and dedupe stages on Kafka (KAFKA_BROKERS, or the local broker)')
    .option('--metrics-port <port>', 'serve Prometheus metrics on this port (0: any free port)', '9464')
    .action(async (flags: { metricsPort: string }) => {
      const say = (line: string): void => void process.stdout.write(`${line}\n`);
      const { transport, brokers } = await clusterTransport('neon-pipeline');
      const registry = createMetricsRegistry({ defaultMetrics: true });
      const metrics = await startMetricsServer({ registry, port: Number(flags.metricsPort) });
      const pipeline = await startArticlePipeline(transport, { metricsFor: (stage) => stageMetrics(registry, stage) });
      say(`pipeline running on ${brokers.join(',')}: news.articles → markup → chunk → dedupe`);
      say(`registry: ${pipeline.markup.registry.size} entities; metrics at ${metrics.url}/metrics; Ctrl-C to stop`);
      await untilSignalled(
        async () => {
          await pipeline.stop();
          await metrics.close();
          await transport.close();
        },
        { what: 'pipeline', died: pipeline.done },
      );
    });
}

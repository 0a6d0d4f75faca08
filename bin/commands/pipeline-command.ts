import type { Command } from 'commander';
import { UsageError } from '../../infra/cli-errors.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { parseStageList, STAGE_CATALOG } from '../../streams/pipeline/stage-catalog.js';
import { untilSignalled } from '../../streams/runtime/stop-on-signals.js';
import { clusterElasticsearch, indexPrefix } from './cluster-services.js';
import { clusterTransport } from './cluster-transport.js';
import { loadProductConfig } from './product-config.js';
import { describeRuntime } from './describe-runtime.js';
import { startProductRuntime } from './product-runtime.js';
import { parsePort } from './parse-port.js';

interface PipelineFlags {
  metricsPort: string;
  metricsHost: string;
  apiPort: string;
  api: boolean;
  apiHost: string;
  stages: string;
}

/**
 * `neon pipeline` — runs the processors on Kafka + Elasticsearch until SIGTERM / Ctrl-C: all of them
 * by default, or those named by `--stages` (one Deployment per processor on Kubernetes), with the
 * API and metrics. Each stage is its own consumer group, so more processes running it scale out.
 */
export function registerPipelineCommand(program: Command): void {
  program
    .command('pipeline')
    .description('run the processors on Kafka + Elasticsearch (KAFKA_BROKERS / ES_URL, or the local ones) with the API')
    .option(
      '--stages <names>',
      `processors to run here, comma-separated: ${STAGE_CATALOG.map((s) => s.name).join(', ')} (default all)`,
      'all',
    )
    .option(
      '--metrics-port <port>',
      'serve Prometheus metrics and the /livez and /readyz probes on this port (0: any free port)',
      '9464',
    )
    .option('--metrics-host <host>', 'address the metrics port listens on', '127.0.0.1')
    .option('--api-port <port>', 'serve the API and dashboard on this port (0: any free port)', '8080')
    .option('--api-host <host>', 'address the API listens on', '127.0.0.1')
    .option('--no-api', 'no API in this process (a processor-only replica)')
    .addHelpText('after', '\nProcessors:\n' + STAGE_CATALOG.map((s) => `  ${s.name.padEnd(20)} ${s.what}`).join('\n'))
    .action(async (flags: PipelineFlags) => {
      const say = (line: string): void => void process.stdout.write(`${line}\n`);
      const selected = parseStageList(flags.stages);
      if (!selected.ok) throw new UsageError(`--stages: ${selected.problem}`);
      const metricsPort = parsePort(flags.metricsPort, '--metrics-port');
      const apiPort = parsePort(flags.apiPort, '--api-port');
      const config = loadProductConfig(process.env);
      const { transport, brokers } = await clusterTransport('neon-pipeline', process.env, []);
      const { es, url: esUrl } = clusterElasticsearch();
      const runtime = await startProductRuntime({
        mode: 'cluster',
        transport,
        datastore: new ElasticsearchDatastore({ es, prefix: indexPrefix(), location: esUrl }),
        config,
        stages: selected.stages,
        api: flags.api ? { port: apiPort, host: flags.apiHost } : null,
        metricsPort,
        metricsHost: flags.metricsHost,
        say,
      });
      say(`pipeline on Kafka ${brokers.join(',')} and Elasticsearch ${esUrl}`);
      for (const line of describeRuntime(runtime)) say(line);
      say('Ctrl-C to stop');
      await untilSignalled(() => runtime.stop(), { what: 'pipeline', died: runtime.pipeline.done });
    });
}

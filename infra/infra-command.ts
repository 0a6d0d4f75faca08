import { Command, Option } from 'commander';
import { loadLocalInfraConfig, type LocalInfraConfig } from '../schemas/local-infra-config.js';
import {
  ALL_SERVICES,
  downLocalInfrastructure,
  localEndpoints,
  localInfrastructureStatus,
  prepareLocalInfrastructure,
  type ServiceName,
  upLocalInfrastructure,
} from './local-infrastructure.js';
import { prepareConfiguredEmbeddingModel } from './models/download-embedding-model.js';
import type { ServiceStatus } from './service-status.js';
import { runSelfCheck } from './self-check.js';

interface InfraFlags {
  only?: ServiceName;
  kafkaPort?: string;
  kafkaControllerPort?: string;
  esPort?: string;
  esTransportPort?: string;
  dataDir?: string;
  cacheDir?: string;
  kafkaHeap?: string;
  esHeap?: string;
  timeout?: string;
}

function withInfraOptions(command: Command): Command {
  return command
    .addOption(new Option('--only <service>', 'act on one service only').choices([...ALL_SERVICES]))
    .option('--kafka-port <port>', 'Kafka broker port (env NEON_KAFKA_PORT, default 9092)')
    .option('--kafka-controller-port <port>', 'KRaft controller port (env NEON_KAFKA_CONTROLLER_PORT, default 9093)')
    .option('--es-port <port>', 'Elasticsearch HTTP port (env NEON_ES_PORT, default 9200)')
    .option('--es-transport-port <port>', 'Elasticsearch transport port (env NEON_ES_TRANSPORT_PORT, default 9300)')
    .option('--data-dir <dir>', 'instance state: data, logs, pid files (env NEON_DATA_DIR)')
    .option('--cache-dir <dir>', 'downloaded jars and distributions (env NEON_CACHE_DIR)');
}

export function configFromFlags(flags: InfraFlags): LocalInfraConfig {
  return loadLocalInfraConfig(process.env, {
    kafkaPort: flags.kafkaPort,
    kafkaControllerPort: flags.kafkaControllerPort,
    elasticsearchPort: flags.esPort,
    elasticsearchTransportPort: flags.esTransportPort,
    dataDir: flags.dataDir,
    cacheDir: flags.cacheDir,
    kafkaHeap: flags.kafkaHeap,
    elasticsearchHeap: flags.esHeap,
    readyTimeoutMs: flags.timeout === undefined ? undefined : Number(flags.timeout) * 1000,
  });
}

function servicesOf(flags: InfraFlags): readonly ServiceName[] {
  return flags.only ? [flags.only] : ALL_SERVICES;
}

export function formatStatusTable(statuses: ServiceStatus[]): string {
  const rows = statuses.map((s) => [
    s.service,
    s.state,
    s.version,
    s.endpoint,
    s.pid === undefined ? '-' : String(s.pid),
    s.detail,
  ]);
  const header = ['service', 'state', 'version', 'endpoint', 'pid', 'detail'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

export function registerInfraCommands(program: Command): void {
  const infra = program.command('infra').description('local Kafka and Elasticsearch for development and tests');

  withInfraOptions(infra.command('up'))
    .description('download (once), start and wait for local Kafka and Elasticsearch')
    .option('--kafka-heap <size>', 'Kafka heap, e.g. 512m (env NEON_KAFKA_HEAP)')
    .option('--es-heap <size>', 'Elasticsearch heap, e.g. 1g (env NEON_ES_HEAP)')
    .option('--timeout <seconds>', 'how long to wait for readiness (env NEON_INFRA_READY_TIMEOUT_S, default 120)')
    .action(async (flags: InfraFlags) => {
      const config = configFromFlags(flags);
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      await upLocalInfrastructure(config, servicesOf(flags), log);
      const endpoints = localEndpoints(config);
      process.stdout.write(
        [
          ...(servicesOf(flags).includes('kafka') ? [`export KAFKA_BROKERS=${endpoints.kafkaBrokers.join(',')}`] : []),
          ...(servicesOf(flags).includes('elasticsearch') ? [`export ES_URL=${endpoints.elasticsearchUrl}`] : []),
        ].join('\n') + '\n',
      );
    });

  withInfraOptions(infra.command('prepare'))
    .description(
      'download and verify everything (once: Kafka, Elasticsearch, the local embedding model) and create the Elasticsearch account, without starting',
    )
    .option('--model-only', 'only the local embedding model (what a container image bakes in)')
    .action(async (flags: InfraFlags & { modelOnly?: boolean }) => {
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      const config = configFromFlags(flags);
      if (flags.modelOnly) {
        process.stdout.write(`${await prepareConfiguredEmbeddingModel(config.cacheDir, log)}\n`);
        return;
      }
      for (const line of await prepareLocalInfrastructure(config, servicesOf(flags), log)) {
        process.stdout.write(`${line}\n`);
      }
      // The local embedding model is part of "everything" (tests and the pipeline need it offline).
      if (!flags.only) process.stdout.write(`${await prepareConfiguredEmbeddingModel(config.cacheDir, log)}\n`);
    });

  withInfraOptions(infra.command('down'))
    .description('stop the local services started from this data directory')
    .option('--purge', "also delete their data (Kafka's log, Elasticsearch's indices)")
    .action(async (flags: InfraFlags & { purge?: boolean }) => {
      const config = configFromFlags(flags);
      for (const line of await downLocalInfrastructure(config, servicesOf(flags), { purge: flags.purge === true })) {
        process.stdout.write(`${line}\n`);
      }
    });

  withInfraOptions(infra.command('check'))
    .description('prove Kafka and Elasticsearch end to end: produce and consume a record, index and find a document')
    .action(async (flags: InfraFlags) => {
      const endpoints = localEndpoints(configFromFlags(flags));
      const brokers = process.env.KAFKA_BROKERS?.split(',') ?? endpoints.kafkaBrokers;
      const url = process.env.ES_URL ?? endpoints.elasticsearchUrl;
      for (const line of await runSelfCheck(brokers, url)) process.stdout.write(`${line}\n`);
    });

  withInfraOptions(infra.command('status'))
    .description(
      'report each service as ready / unresponsive / stopped / stale / foreign; exit 0 only when all are ready',
    )
    .option('--json', 'machine-readable output')
    .action(async (flags: InfraFlags & { json?: boolean }) => {
      const statuses = await localInfrastructureStatus(configFromFlags(flags), servicesOf(flags));
      process.stdout.write(flags.json ? `${JSON.stringify(statuses, null, 2)}\n` : `${formatStatusTable(statuses)}\n`);
      process.exitCode = statuses.every((s) => s.state === 'ready') ? 0 : 3;
    });
}

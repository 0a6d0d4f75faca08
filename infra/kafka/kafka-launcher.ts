import { execFile } from 'node:child_process';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Secret, type KafkaSecurity } from '../../schemas/connection-config.js';
import type { LocalInfraConfig } from '../../schemas/local-infra-config.js';
import { InfraError } from '../errors.js';
import { readInstanceRecord, removeInstanceRecord, writeInstanceRecord } from '../instance-record.js';
import type { JavaRuntime } from '../java.js';
import { assertPortsFree, isPortOpen } from '../ports.js';
import { isOurProcess, processAlive, spawnDetached, stopProcess, explainFromLog } from '../process-control.js';
import { kafkaClusterReady } from '../readiness.js';
import type { ServiceStatus } from '../service-status.js';
import { KAFKA_VERSION } from '../versions.js';
import { ensureKafkaJars } from './download-kafka.js';
import {
  newClusterId,
  renderLog4jProperties,
  renderScramFormatArguments,
  renderServerProperties,
  type KafkaBrokerSecurity,
} from './kafka-config.js';

const run = promisify(execFile);
/** Appears in the broker's command line; lets us tell our process from a recycled pid. */
const PROCESS_MARKER = 'kafka.Kafka';

interface KafkaPaths {
  home: string;
  data: string;
  logs: string;
  serverProperties: string;
  log4jProperties: string;
  record: string;
  stdout: string;
}

export function kafkaPaths(config: LocalInfraConfig): KafkaPaths {
  const home = join(config.dataDir, 'kafka');
  return {
    home,
    data: join(home, 'data'),
    logs: join(home, 'logs'),
    serverProperties: join(home, 'server.properties'),
    log4jProperties: join(home, 'log4j.properties'),
    record: join(home, 'instance.json'),
    stdout: join(home, 'logs', 'stdout.log'),
  };
}

export function kafkaBrokers(config: LocalInfraConfig): string[] {
  return [`127.0.0.1:${config.kafkaPort}`];
}

/** How to start a broker beyond its ports and directories. */
export interface KafkaStartOptions {
  /** A secured broker (SCRAM, ACLs, optionally TLS) for tests of the product's credentials; default open. */
  security?: KafkaBrokerSecurity;
  /** The PEM of the CA that signed the broker's certificate, for the readiness probe (with `security.tls`). */
  caCertificate?: string;
}

/** What the readiness probe presents to a secured broker: the admin login, and the CA under TLS. */
function probeSecurity(options: KafkaStartOptions): KafkaSecurity | undefined {
  const { security } = options;
  if (!security) return undefined;
  return {
    sasl: { mechanism: 'scram-sha-512', username: security.admin.name, password: new Secret(security.admin.password) },
    ...(security.tls
      ? { tls: options.caCertificate === undefined ? {} : { caCertificate: options.caCertificate } }
      : {}),
  };
}

export async function kafkaStatus(config: LocalInfraConfig, options: KafkaStartOptions = {}): Promise<ServiceStatus> {
  const paths = kafkaPaths(config);
  const endpoint = kafkaBrokers(config).join(',');
  const base = { service: 'kafka' as const, version: KAFKA_VERSION, endpoint, dataDir: paths.home };
  const record = await readInstanceRecord(paths.record);
  if (record && (await isOurProcess(record.pid, PROCESS_MARKER))) {
    const brokers = [`127.0.0.1:${record.ports.kafka ?? config.kafkaPort}`];
    const probe = await kafkaClusterReady(brokers, 3000, probeSecurity(options));
    return {
      ...base,
      endpoint: brokers.join(','),
      pid: record.pid,
      state: probe.ready ? 'ready' : 'unresponsive',
      detail: probe.detail,
    };
  }
  if (await isPortOpen(config.kafkaPort)) {
    return { ...base, state: 'foreign', detail: `port ${config.kafkaPort} answers, but not a broker started here` };
  }
  if (record) return { ...base, pid: record.pid, state: 'stale', detail: `process ${record.pid} is gone` };
  return { ...base, state: 'stopped', detail: 'not running' };
}

async function formatStorageIfNeeded(
  java: JavaRuntime,
  libs: string,
  paths: KafkaPaths,
  security: KafkaBrokerSecurity | undefined,
): Promise<void> {
  const formatted = await stat(join(paths.data, 'meta.properties')).then(
    () => true,
    () => false,
  );
  if (formatted) return;
  try {
    await run(
      java.javaBin,
      [
        '-cp',
        `${libs}/*`,
        `-Dlog4j.configuration=file:${paths.log4jProperties}`,
        'kafka.tools.StorageTool',
        'format',
        '--cluster-id',
        newClusterId(),
        '--config',
        paths.serverProperties,
        '--ignore-formatted',
        ...(security ? renderScramFormatArguments(security) : []),
      ],
      { timeout: 60_000 },
    );
  } catch (error) {
    const output = `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}`;
    throw new InfraError(
      'start_failed',
      `formatting Kafka storage in ${paths.data} failed: ${output.trim().split('\n').slice(-5).join(' | ')}`,
      `Remove ${paths.data} (neon infra down --purge) and try again.`,
    );
  }
}

async function waitUntilReady(
  config: LocalInfraConfig,
  pid: number,
  stdout: string,
  security: KafkaSecurity | undefined,
): Promise<string> {
  const deadline = Date.now() + config.readyTimeoutMs;
  let last = 'not probed yet';
  while (Date.now() < deadline) {
    if (!processAlive(pid)) {
      throw new InfraError(
        'start_failed',
        `Kafka exited during start-up. Last lines of ${stdout}:\n${await explainFromLog(stdout)}`,
        "Read the log above; `neon infra down --purge` resets Kafka's data if it is corrupt.",
      );
    }
    const probe = await kafkaClusterReady(kafkaBrokers(config), 2000, security);
    if (probe.ready) return probe.detail;
    last = probe.detail;
    await sleep(250);
  }
  throw new InfraError(
    'not_ready',
    `Kafka (pid ${pid}) did not become ready within ${config.readyTimeoutMs / 1000} s (${last})`,
    `See ${stdout} and ${kafkaPaths(config).logs}/server.log; stop it with \`neon infra down\`.`,
  );
}

/**
 * Starts the broker, or confirms the one already running. Idempotent: a second `up` with the same
 * ports returns the running broker; a conflicting or wedged previous instance is an error that
 * says what to do.
 */
export async function startKafka(
  config: LocalInfraConfig,
  java: JavaRuntime,
  log: (line: string) => void,
  options: KafkaStartOptions = {},
): Promise<ServiceStatus> {
  const paths = kafkaPaths(config);
  const current = await kafkaStatus(config, options);
  if (current.state === 'ready') {
    const record = await readInstanceRecord(paths.record);
    if (record && record.ports.kafka !== config.kafkaPort) {
      throw new InfraError(
        'instance_conflict',
        `Kafka from ${paths.home} is already running on port ${record.ports.kafka}, not ${config.kafkaPort}`,
        'Run `neon infra down` first, or use a different --data-dir for a second instance.',
      );
    }
    log(`kafka: already running (pid ${current.pid}) at ${current.endpoint}`);
    return current;
  }
  if (current.state === 'unresponsive') {
    throw new InfraError(
      'instance_conflict',
      `a previous Kafka (pid ${current.pid}) is still running from ${paths.home} but does not answer (${current.detail})`,
      'Wait if it is still starting, or stop it with `neon infra down`.',
    );
  }
  if (current.state === 'stale') await removeInstanceRecord(paths.record);

  await assertPortsFree([
    { port: config.kafkaPort, purpose: 'Kafka broker', flag: '--kafka-port / NEON_KAFKA_PORT' },
    {
      port: config.kafkaControllerPort,
      purpose: 'Kafka controller',
      flag: '--kafka-controller-port / NEON_KAFKA_CONTROLLER_PORT',
    },
  ]);
  const libs = await ensureKafkaJars(config.cacheDir, log);
  await mkdir(paths.data, { recursive: true });
  await mkdir(paths.logs, { recursive: true });
  await writeFile(
    paths.serverProperties,
    renderServerProperties({
      port: config.kafkaPort,
      controllerPort: config.kafkaControllerPort,
      logDirs: paths.data,
      ...(options.security ? { security: options.security } : {}),
    }),
  );
  await writeFile(paths.log4jProperties, renderLog4jProperties(paths.logs));
  await formatStorageIfNeeded(java, libs, paths, options.security);

  const started = Date.now();
  const pid = await spawnDetached({
    command: java.javaBin,
    args: [
      `-Xms${config.kafkaHeap}`,
      `-Xmx${config.kafkaHeap}`,
      '-XX:+UseG1GC',
      '-XX:MaxGCPauseMillis=20',
      '-Djava.awt.headless=true',
      `-Dlog4j.configuration=file:${paths.log4jProperties}`,
      `-Dkafka.logs.dir=${paths.logs}`,
      '-cp',
      `${libs}/*`,
      PROCESS_MARKER,
      paths.serverProperties,
    ],
    cwd: paths.home,
    env: { ...process.env, LC_ALL: 'C.UTF-8' },
    logFile: paths.stdout,
  });
  await writeInstanceRecord(paths.record, {
    service: 'kafka',
    version: KAFKA_VERSION,
    pid,
    ports: { kafka: config.kafkaPort, controller: config.kafkaControllerPort },
    startedAt: new Date().toISOString(),
  });
  try {
    const detail = await waitUntilReady(config, pid, paths.stdout, probeSecurity(options));
    log(
      `kafka: ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${kafkaBrokers(config).join(',')} (pid ${pid})`,
    );
    return {
      service: 'kafka',
      state: 'ready',
      version: KAFKA_VERSION,
      endpoint: kafkaBrokers(config).join(','),
      pid,
      dataDir: paths.home,
      detail,
    };
  } catch (error) {
    await stopProcess(pid, 5000);
    await removeInstanceRecord(paths.record);
    throw error;
  }
}

/** Stops the broker this data directory started (by its recorded pid), within `graceMs`. */
export async function stopKafka(config: LocalInfraConfig, graceMs = 30_000): Promise<string> {
  const paths = kafkaPaths(config);
  const record = await readInstanceRecord(paths.record);
  if (!record) return 'kafka: not running';
  if (!(await isOurProcess(record.pid, PROCESS_MARKER))) {
    await removeInstanceRecord(paths.record);
    return `kafka: was not running (removed stale record of pid ${record.pid})`;
  }
  const outcome = await stopProcess(record.pid, graceMs);
  await removeInstanceRecord(paths.record);
  return outcome === 'killed'
    ? `kafka: did not stop within ${graceMs / 1000} s; killed pid ${record.pid}`
    : `kafka: stopped (pid ${record.pid})`;
}

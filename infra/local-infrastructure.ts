import { rm } from 'node:fs/promises';
import type { LocalInfraConfig } from '../schemas/local-infra-config.js';
import {
  elasticsearchPaths,
  elasticsearchStatus,
  elasticsearchUrl,
  startElasticsearch,
  stopElasticsearch,
} from './elasticsearch/elasticsearch-launcher.js';
import { InfraError } from './errors.js';
import { findElasticsearchJava, findJava, VECTOR_JAVA_MAJORS, type JavaRuntime } from './java.js';
import { kafkaBrokers, kafkaPaths, kafkaStatus, startKafka, stopKafka } from './kafka/kafka-launcher.js';
import type { ServiceStatus } from './service-status.js';
import { ensureElasticsearchDistribution } from './elasticsearch/download-elasticsearch.js';
import { elasticsearchRunAs } from './elasticsearch/elasticsearch-user.js';
import { ensureKafkaJars } from './kafka/download-kafka.js';
import { withStartLock } from './start-lock.js';

export type ServiceName = 'kafka' | 'elasticsearch';
export const ALL_SERVICES: readonly ServiceName[] = ['kafka', 'elasticsearch'];

export interface LocalEndpoints {
  kafkaBrokers: string[];
  elasticsearchUrl: string;
}

export function localEndpoints(config: LocalInfraConfig): LocalEndpoints {
  return { kafkaBrokers: kafkaBrokers(config), elasticsearchUrl: elasticsearchUrl(config) };
}

/**
 * How long a second `up` on the same data directory waits for the first: its readiness wait, and
 * time for the downloads a first `up` makes.
 */
const START_LOCK_DOWNLOAD_MS = 10 * 60_000;

/**
 * Brings up the requested services side by side and resolves once each answers its readiness
 * probe. Idempotent for services already running; on failure, stops what it started. One call at a
 * time per data directory (`withStartLock`): a second waits for the first, then finds its services.
 */
export function upLocalInfrastructure(
  config: LocalInfraConfig,
  services: readonly ServiceName[] = ALL_SERVICES,
  log: (line: string) => void = () => undefined,
): Promise<ServiceStatus[]> {
  return withStartLock(config.dataDir, config.readyTimeoutMs + START_LOCK_DOWNLOAD_MS, () =>
    upUnlocked(config, services, log),
  );
}

async function upUnlocked(
  config: LocalInfraConfig,
  services: readonly ServiceName[],
  log: (line: string) => void,
): Promise<ServiceStatus[]> {
  const java = await findJava();
  const elasticsearchJava = services.includes('elasticsearch')
    ? await findElasticsearchJava(process.env, { usual: java })
    : java;
  const before = await localInfrastructureStatus(config, services);
  const settled = await Promise.allSettled(
    services.map((service) =>
      service === 'kafka' ? startKafka(config, java, log) : startElasticsearch(config, elasticsearchJava, log),
    ),
  );
  const failures = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
  if (failures.length === 0) return settled.map((s) => (s as PromiseFulfilledResult<ServiceStatus>).value);

  // All or nothing: stop what this call started, so a failed `up` leaves no half-running pair.
  const startedHere = services.filter(
    (service, n) => settled[n]!.status === 'fulfilled' && before[n]!.state !== 'ready',
  );
  if (startedHere.length > 0) for (const line of await downLocalInfrastructure(config, startedHere)) log(line);
  if (failures.length === 1) throw failures[0];
  const first = failures[0];
  throw new InfraError(
    first instanceof InfraError ? first.code : 'start_failed',
    failures.map((f) => (f instanceof InfraError ? f.describe() : String(f))).join('\n'),
  );
}

/**
 * Everything `up` needs short of starting: Java found, artefacts downloaded and verified into the
 * cache, the Elasticsearch account created. For CI images and machines that go offline later.
 */
export async function prepareLocalInfrastructure(
  config: LocalInfraConfig,
  services: readonly ServiceName[] = ALL_SERVICES,
  log: (line: string) => void = () => undefined,
): Promise<string[]> {
  const java = await findJava();
  const lines = [`java: ${java.majorVersion} at ${java.javaHome}`];
  if (services.includes('elasticsearch'))
    lines.push(
      `elasticsearch: ${describeElasticsearchJava(await findElasticsearchJava(process.env, { usual: java }))}`,
    );
  if (services.includes('kafka')) lines.push(`kafka: jars in ${await ensureKafkaJars(config.cacheDir, log)}`);
  if (services.includes('elasticsearch')) {
    lines.push(`elasticsearch: distribution in ${await ensureElasticsearchDistribution(config.cacheDir, log)}`);
    const runAs = await elasticsearchRunAs(config.elasticsearchUser);
    lines.push(
      runAs
        ? `elasticsearch: runs as user ${runAs.user} (uid ${runAs.uid})`
        : 'elasticsearch: runs as the current user',
    );
  }
  return lines;
}

/** Which Java Elasticsearch runs on, and what that means for its vector search. */
export function describeElasticsearchJava(java: JavaRuntime): string {
  return java.majorVersion >= VECTOR_JAVA_MAJORS.from
    ? `Java ${java.majorVersion} at ${java.javaHome} (SIMD vector scoring)`
    : `Java ${java.majorVersion} at ${java.javaHome} (scalar vector scoring: install a JDK ${VECTOR_JAVA_MAJORS.from}–${VECTOR_JAVA_MAJORS.to} or set ES_JAVA_HOME for faster kNN)`;
}

export async function downLocalInfrastructure(
  config: LocalInfraConfig,
  services: readonly ServiceName[] = ALL_SERVICES,
  options: { purge?: boolean } = {},
): Promise<string[]> {
  const lines = await Promise.all(
    services.map((service) => (service === 'kafka' ? stopKafka(config) : stopElasticsearch(config))),
  );
  if (options.purge) {
    for (const service of services) {
      const home = service === 'kafka' ? kafkaPaths(config).home : elasticsearchPaths(config).home;
      await rm(home, { recursive: true, force: true });
      lines.push(`${service}: removed ${home}`);
    }
  }
  return lines;
}

export async function localInfrastructureStatus(
  config: LocalInfraConfig,
  services: readonly ServiceName[] = ALL_SERVICES,
): Promise<ServiceStatus[]> {
  return Promise.all(
    services.map((service) => (service === 'kafka' ? kafkaStatus(config) : elasticsearchStatus(config))),
  );
}

import { externalInfrastructureFromEnv, type ExternalInfrastructure } from '../schemas/connection-config.js';
import { loadLocalInfraConfig } from '../schemas/local-infra-config.js';
import { containerRuntimeAvailable, startContainerInfrastructure } from '../infra/containers.js';
import { isInfraError } from '../infra/errors.js';
import {
  downLocalInfrastructure,
  localEndpoints,
  localInfrastructureStatus,
  upLocalInfrastructure,
  type ServiceName,
} from '../infra/local-infrastructure.js';
import { elasticsearchReady, kafkaClusterReady } from '../infra/readiness.js';

export type InfrastructureSource = 'env' | 'containers' | 'local';

export interface TestInfrastructure {
  source: InfrastructureSource;
  kafkaBrokers: string[];
  elasticsearchUrl: string;
  /** Authorization header for an external Elasticsearch, if one was configured. */
  elasticsearchHeaders: Record<string, string>;
  /** Stops what this run started (and nothing it found already running). */
  release(): Promise<void>;
  description: string;
}

export class MissingInfrastructureError extends Error {
  override readonly name = 'MissingInfrastructureError';
}

function headersFor(external: ExternalInfrastructure): Record<string, string> {
  const { apiKey, username, password } = external.elasticsearch;
  if (apiKey) return { authorization: `ApiKey ${apiKey.reveal()}` };
  if (username !== undefined && password)
    return { authorization: `Basic ${Buffer.from(`${username}:${password.reveal()}`).toString('base64')}` };
  return {};
}

async function fromEnvironment(external: ExternalInfrastructure): Promise<TestInfrastructure> {
  const headers = headersFor(external);
  const [kafka, es] = await Promise.all([
    kafkaClusterReady(external.kafkaBrokers, 10_000),
    elasticsearchReady(external.elasticsearch.url, 10_000, headers),
  ]);
  const problems = [
    ...(kafka.ready ? [] : [`KAFKA_BROKERS=${external.kafkaBrokers.join(',')} does not answer: ${kafka.detail}`]),
    ...(es.ready ? [] : [`ES_URL=${external.elasticsearch.url} is not usable: ${es.detail}`]),
  ];
  if (problems.length > 0) throw new MissingInfrastructureError(problems.join('\n'));
  return {
    source: 'env',
    kafkaBrokers: external.kafkaBrokers,
    elasticsearchUrl: external.elasticsearch.url,
    elasticsearchHeaders: headers,
    release: () => Promise.resolve(),
    description: `existing servers from the environment (${kafka.detail}; ${es.detail})`,
  };
}

async function fromContainers(): Promise<TestInfrastructure> {
  const started = await startContainerInfrastructure();
  return {
    source: 'containers',
    kafkaBrokers: started.kafkaBrokers,
    elasticsearchUrl: started.elasticsearchUrl,
    elasticsearchHeaders: {},
    release: () => started.stop(),
    description: 'containers started with testcontainers',
  };
}

async function fromLocalLaunchers(log: (line: string) => void): Promise<TestInfrastructure> {
  const config = loadLocalInfraConfig(process.env);
  const before = await localInfrastructureStatus(config);
  const toStart: ServiceName[] = before.filter((s) => s.state !== 'ready').map((s) => s.service);
  await upLocalInfrastructure(config, toStart, log);
  const endpoints = localEndpoints(config);
  const keep = process.env.NEON_KEEP_INFRA === '1';
  return {
    source: 'local',
    kafkaBrokers: endpoints.kafkaBrokers,
    elasticsearchUrl: endpoints.elasticsearchUrl,
    elasticsearchHeaders: {},
    release: async () => {
      if (!keep && toStart.length > 0) for (const line of await downLocalInfrastructure(config, toStart)) log(line);
    },
    description:
      toStart.length === 0
        ? 'local launchers (already running; left running)'
        : `local launchers (started ${toStart.join(' and ')}${keep ? '; NEON_KEEP_INFRA=1 keeps them running' : '; stopped after the run'})`,
  };
}

/**
 * Finds Kafka and Elasticsearch for the integration tier, in this order: `KAFKA_BROKERS`/`ES_URL`
 * from the environment → testcontainers when a container runtime answers within a few seconds →
 * the local launchers. `NEON_TEST_INFRA=env|containers|local` forces one. Anything missing is an
 * error naming what was tried — never a skip, so a green run always means the real thing ran.
 */
export async function acquireTestInfrastructure(
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<TestInfrastructure> {
  const forced = env.NEON_TEST_INFRA as InfrastructureSource | undefined;
  if (forced !== undefined && !['env', 'containers', 'local'].includes(forced)) {
    throw new MissingInfrastructureError(`NEON_TEST_INFRA must be env, containers or local (got "${forced}")`);
  }
  const tried: string[] = [];

  const external = externalInfrastructureFromEnv(env);
  if (external && (forced === undefined || forced === 'env')) return fromEnvironment(external);
  if (forced === 'env')
    throw new MissingInfrastructureError('NEON_TEST_INFRA=env but KAFKA_BROKERS and ES_URL are not set');
  tried.push('KAFKA_BROKERS / ES_URL: not set');

  if (forced === 'containers' || (forced === undefined && (await containerRuntimeAvailable(3000)))) {
    return fromContainers();
  }
  tried.push('testcontainers: no container runtime answered within 3 s');

  try {
    return await fromLocalLaunchers(log);
  } catch (error) {
    tried.push(`local launchers: ${isInfraError(error) ? error.describe() : String(error)}`);
    throw new MissingInfrastructureError(
      [
        'The integration tests need a real Kafka broker and a real Elasticsearch node, and none could be had.',
        ...tried.map((line) => `  - ${line}`),
        'Point KAFKA_BROKERS and ES_URL at running servers, or install Java 17 and Maven so the launchers can run,',
        'or run only the unit tier with `npm run test:unit`.',
      ].join('\n'),
    );
  }
}

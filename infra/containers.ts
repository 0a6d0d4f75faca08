/**
 * Kafka and Elasticsearch in containers, for machines that have a container runtime. The
 * development kit (tests, benchmarks, evaluations) tries this after KAFKA_BROKERS/ES_URL (servers
 * already running) and before the local launchers. testcontainers is a development dependency,
 * imported lazily: the product never starts containers, so its image leaves testcontainers and the
 * 150-odd packages under it (dockerode, ssh2, …) out.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { GenericContainer, StartedTestContainer } from 'testcontainers';
import { InfraError } from './errors.js';
import { DEFAULT_PORTS } from '../schemas/local-infra-config.js';
import { ELASTICSEARCH_IMAGE, KAFKA_IMAGE } from './versions.js';

export interface ContainerInfrastructure {
  kafkaBrokers: string[];
  elasticsearchUrl: string;
  stop(): Promise<void>;
}

/** Inter-broker listener, reachable only inside the container (see kafkaContainer). */
const KAFKA_INTERNAL_PORT = 19092;
const KAFKA_STARTUP_TIMEOUT_MS = 120_000;
/** Elasticsearch takes longer than Kafka to form its single-node cluster, more so on small CI VMs. */
const ELASTICSEARCH_STARTUP_TIMEOUT_MS = 180_000;
/** Another process may take the chosen Kafka host port before Docker binds it; choose again. */
const KAFKA_PORT_ATTEMPTS = 3;

const NO_RUNTIME_HINT =
  'Start Docker (or Podman with its Docker-compatible socket) or set DOCKER_HOST; otherwise use ' +
  'the local launchers (npm run infra:up) or point KAFKA_BROKERS and ES_URL at running services.';

/** Resolves true when a container runtime answers within timeoutMs, false otherwise; never throws, never hangs longer than timeoutMs. */
export async function containerRuntimeAvailable(timeoutMs = 3000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  // The probe cannot be cancelled: a runtime that accepts the connection and never answers keeps
  // it pending, and its socket keeps the event loop alive, so a CLI should exit explicitly after a
  // false answer. Mapping its rejection to false keeps a late failure from going unhandled.
  const probe = import('testcontainers')
    .then(({ getContainerRuntimeClient }) => getContainerRuntimeClient())
    .then(
      () => true,
      () => false,
    );
  try {
    return await Promise.race([probe, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** An install without development dependencies says what to add instead of a module-resolution trace. */
async function loadTestcontainers(): Promise<Testcontainers> {
  try {
    return await import('testcontainers');
  } catch (error) {
    throw new InfraError(
      'start_failed',
      `Container mode needs testcontainers, a development dependency that is not installed here: ${messageOf(error)}`,
      'Install the development dependencies (npm install), or use the local launchers (npm run infra:up).',
      { cause: error },
    );
  }
}

/** Starts Kafka and Elasticsearch containers with the pinned images; rejects with a clear Error message on failure, stopping anything it had started. */
export async function startContainerInfrastructure(): Promise<ContainerInfrastructure> {
  const testcontainers = await loadTestcontainers();
  let host: string;
  try {
    host = (await testcontainers.getContainerRuntimeClient()).info.containerRuntime.host;
  } catch (error) {
    throw new InfraError('start_failed', `No container runtime answered: ${messageOf(error)}`, NO_RUNTIME_HINT, {
      cause: error,
    });
  }

  const [kafka, elasticsearch] = await Promise.allSettled([
    startKafka(testcontainers.GenericContainer, testcontainers.Wait, host),
    elasticsearchContainer(testcontainers.GenericContainer, testcontainers.Wait).start(),
  ]);

  if (kafka.status === 'rejected' || elasticsearch.status === 'rejected') {
    const started: StartedTestContainer[] = [];
    if (kafka.status === 'fulfilled') started.push(kafka.value.container);
    if (elasticsearch.status === 'fulfilled') started.push(elasticsearch.value);
    await Promise.allSettled(started.map((c) => c.stop()));
    const failures: { what: string; error: unknown }[] = [];
    if (kafka.status === 'rejected') failures.push({ what: `Kafka (${KAFKA_IMAGE})`, error: kafka.reason });
    if (elasticsearch.status === 'rejected') {
      failures.push({
        what: `Elasticsearch (${ELASTICSEARCH_IMAGE})`,
        error: elasticsearch.reason,
      });
    }
    throw new InfraError(
      'start_failed',
      `Could not start the infrastructure containers. ${failures.map((f) => `${f.what}: ${messageOf(f.error)}`).join('; ')}`,
      'Check that the images can be pulled (or are already present) and that the container runtime ' +
        'has at least 3 GB of memory; `docker logs` of the failed container tells more.',
      { cause: failures[0]?.error },
    );
  }

  return infrastructure(kafka.value, elasticsearch.value);
}

function infrastructure(kafka: StartedKafka, elasticsearch: StartedTestContainer): ContainerInfrastructure {
  let stopping: Promise<void> | undefined;
  return {
    kafkaBrokers: [kafka.bootstrap],
    elasticsearchUrl: `http://${elasticsearch.getHost()}:${elasticsearch.getMappedPort(DEFAULT_PORTS.elasticsearchHttp)}`,
    // Idempotent: the harness may call it from both a teardown and a signal handler.
    stop() {
      stopping ??= (async () => {
        const results = await Promise.allSettled([kafka.container.stop(), elasticsearch.stop()]);
        const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
        if (errors.length > 0) {
          throw new InfraError(
            'stop_failed',
            `Could not stop the infrastructure containers: ${errors.map(messageOf).join('; ')}`,
            'Remove them with `docker rm -f`; the testcontainers reaper also removes them when this process exits.',
            { cause: errors[0] },
          );
        }
      })();
      return stopping;
    },
  };
}

interface StartedKafka {
  container: StartedTestContainer;
  bootstrap: string;
}

type Testcontainers = typeof import('testcontainers');

/**
 * Kafka hands clients the advertised address, so that address must be the one the host reaches.
 * Docker's random port mapping is only known after the start, too late for the broker's config, so
 * a free host port is chosen first and mapped explicitly.
 */
async function startKafka(
  Container: typeof GenericContainer,
  Wait: Testcontainers['Wait'],
  host: string,
): Promise<StartedKafka> {
  for (let attempt = 1; ; attempt++) {
    // On a remote DOCKER_HOST this checks the wrong machine; the retry below covers the collision.
    const hostPort = await freeTcpPort();
    try {
      const container = await kafkaContainer(Container, Wait, host, hostPort).start();
      return { container, bootstrap: `${host}:${hostPort}` };
    } catch (error) {
      const portTaken = /port is already allocated|address already in use/i.test(messageOf(error));
      if (!portTaken || attempt >= KAFKA_PORT_ATTEMPTS) throw error;
    }
  }
}

function kafkaContainer(
  Container: typeof GenericContainer,
  Wait: Testcontainers['Wait'],
  host: string,
  hostPort: number,
): GenericContainer {
  const { kafka: clientPort, kafkaController: controllerPort } = DEFAULT_PORTS;
  return new Container(KAFKA_IMAGE)
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      // A fresh id per container: each test run gets its own cluster, never a stale one's metadata.
      CLUSTER_ID: randomBytes(16).toString('base64url'),
      KAFKA_LISTENERS: [
        `PLAINTEXT://0.0.0.0:${clientPort}`,
        `BROKER://0.0.0.0:${KAFKA_INTERNAL_PORT}`,
        `CONTROLLER://0.0.0.0:${controllerPort}`,
      ].join(','),
      // The broker also talks to itself (e.g. transaction markers), and the host address may not be
      // reachable from inside the container, so inter-broker traffic has its own listener.
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${host}:${hostPort},BROKER://localhost:${KAFKA_INTERNAL_PORT}`,
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'BROKER',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_CONTROLLER_QUORUM_VOTERS: `1@localhost:${controllerPort}`,
      // Internal topics default to replication factor 3 and would never be created on one node.
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      // Same as production and the compose file: the topic admin creates topics with their real
      // partition counts, and a misspelt topic fails instead of appearing silently.
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
      KAFKA_LOG_DIRS: '/var/lib/kafka/data',
    })
    .withExposedPorts({ container: clientPort, host: hostPort })
    .withWaitStrategy(Wait.forLogMessage('Kafka Server started'))
    .withStartupTimeout(KAFKA_STARTUP_TIMEOUT_MS);
}

function elasticsearchContainer(Container: typeof GenericContainer, Wait: Testcontainers['Wait']): GenericContainer {
  const httpPort = DEFAULT_PORTS.elasticsearchHttp;
  return (
    new Container(ELASTICSEARCH_IMAGE)
      .withEnvironment({
        'discovery.type': 'single-node',
        // Throwaway test container: no TLS or passwords, so tests need no credentials.
        'xpack.security.enabled': 'false',
        // A nearly full disk would otherwise make every index read-only mid-test.
        'cluster.routing.allocation.disk.threshold_enabled': 'false',
        // ES sizes its heap from the host's RAM otherwise, which starves Kafka and the tests.
        ES_JAVA_OPTS: '-Xms1g -Xmx1g',
      })
      .withExposedPorts(httpPort)
      // The same readiness signal the local launchers use (the integ-test zip has no `GET /`).
      .withWaitStrategy(Wait.forHttp('/_cluster/health', httpPort).forStatusCode(200))
      .withStartupTimeout(ELASTICSEARCH_STARTUP_TIMEOUT_MS)
  );
}

/** A port that is free now on all interfaces (Docker publishes on 0.0.0.0). */
function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('Could not determine a free TCP port'));
      });
    });
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

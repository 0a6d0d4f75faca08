import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logLevel, type Admin } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { downLocalInfrastructure, localEndpoints, upLocalInfrastructure } from '../../infra/local-infrastructure.js';
import { findFreePorts } from '../../infra/ports.js';
import { loadLocalInfraConfig, type LocalInfraConfig } from '../../schemas/local-infra-config.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import {
  collectingLogger,
  createScenarioTopics,
  describeOutcome,
  describeProgress,
  documentIdsNow,
  expectSameOutcome,
  freshScenarioNames,
  publishArticles,
  publishPoison,
  readOutcome,
  runReference,
  sampleArticles,
  splitSample,
  startScenarioStages,
  waitUntilSettled,
} from '../harness/fault-scenario.js';
import { waitUntil } from '../harness/invariants.js';
import { useLiveClients } from '../harness/live-clients.js';

/**
 * S2: the Kafka broker stopped for 30 s in the middle of an ingest and started again on its data,
 * under the product's whole chain of stages with real articles. The broker is one of this test's own
 * (the local launchers, on free ports), never the shared one; Elasticsearch is the shared node.
 * Every stage keeps running through the outage, and afterwards both datastores, `neon.dlq` and the
 * mentions the spike stage was given are exactly those of an undisturbed run of the same articles.
 * Spike episodes are compared with what the product's detector decides for the run's own
 * `entity.mentions` in topic order (and with the undisturbed run's when the mentions came in its
 * order): they depend on that order, which at-least-once delivery does not fix across runs (see
 * `test/harness/fault-scenario.ts`).
 */

const live = useLiveClients();
const OUTAGE_MS = 30_000;
const log = (line: string): void => console.log(`[fault S2] ${line}`);

let root: string | undefined;
let config: LocalInfraConfig | undefined;
afterAll(async () => {
  if (config) await downLocalInfrastructure(config, ['kafka'], { purge: true }).catch(() => undefined);
  if (root) await rm(root, { recursive: true, force: true });
});

async function ownBroker(): Promise<LocalInfraConfig> {
  root = await mkdtemp(join(tmpdir(), 'neon-fault-broker-'));
  await chmod(root, 0o755);
  const [kafkaPort, kafkaControllerPort, elasticsearchPort, elasticsearchTransportPort] = await findFreePorts(4);
  return loadLocalInfraConfig(process.env, {
    dataDir: join(root, 'instance'),
    kafkaPort,
    kafkaControllerPort,
    elasticsearchPort,
    elasticsearchTransportPort,
    kafkaHeap: '256m',
    elasticsearchHeap: '512m',
  });
}

describe('S2: the Kafka broker stopped for 30 s during ingest', () => {
  it('loses nothing, duplicates nothing, and ends with exactly the undisturbed contents', async () => {
    const shared = createKafkaTransport(
      createKafkaClient({ clientId: 'fault-s2-ref', brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING }),
    );
    const sample = await sampleArticles(300);
    const plan = splitSample(sample, 120);
    const reference = await runReference(shared, live.admin, live.es, plan, live.cleanup, 's2-ref');
    log(`undisturbed run: ${describeOutcome(reference.outcome)} in ${reference.ms} ms`);
    await shared.close();

    config = await ownBroker();
    const started = Date.now();
    await upLocalInfrastructure(config, ['kafka']);
    const brokers = localEndpoints(config).kafkaBrokers;
    log(`own broker at ${brokers.join(',')} ready in ${Date.now() - started} ms`);
    const kafka = createKafkaClient({ clientId: 'fault-s2', brokers, logLevel: logLevel.NOTHING });
    const transport = createKafkaTransport(kafka);
    const names = freshScenarioNames('s2');
    await createScenarioTopics(transport, names);
    const datastore = new ElasticsearchDatastore({ es: live.es, prefix: names.indexPrefix });
    const logger = collectingLogger();
    const stages = await startScenarioStages(transport, names, { datastore, log: logger.log });
    // A stage that ends before it is stopped has died (its `done` rejects with the fatal error).
    const died: string[] = [];
    for (const [name, stage] of stages.stages) {
      stage.done.catch((error: unknown) => died.push(`${name}: ${String(error)}`));
    }
    let admin: Admin = kafka.admin();
    await admin.connect();
    try {
      await publishArticles(transport, names, plan.first);
      await publishPoison(transport, names);
      // Mid-ingest: documents are coming in and, at best, stages hold work they have not finished.
      // The first part can be done before a poll catches work in flight (the chain takes a few
      // seconds for it): once it has been indexed for 15 s with nothing in flight, the broker stops
      // between the two parts instead, which is still an outage the stages must ride out.
      let indexedSince: number | undefined;
      await waitUntil(
        async () => {
          if ((await documentIdsNow(live.es, names)).chunks.size < 20) return false;
          indexedSince ??= Date.now();
          const busy = [...stages.stages.values()].some((stage) => stage.stats().inFlight > 0);
          return busy || Date.now() - indexedSince > 15_000;
        },
        60_000,
        'the first documents indexed',
      );
      const inFlight = [...stages.stages].map(([name, stage]) => `${name} ${stage.stats().inFlight}`).join(', ');
      log(`stopping the broker; in flight: ${inFlight}; ${await describeProgress(admin, names, stages)}`);
      await admin.disconnect();
      const stoppedAt = Date.now();
      log(await downLocalInfrastructure(config, ['kafka']).then((lines) => lines.join('; ')));
      const atStop = await documentIdsNow(live.es, names);
      const completedAtStop = [...stages.stages.values()].reduce((n, s) => n + s.stats().completed, 0);
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS - (Date.now() - stoppedAt)));
      // Through the outage the stages stay up: none died (a dead stage would need a restart).
      expect(died).toEqual([]);
      const duringOutage = [...stages.stages.values()].reduce((n, s) => n + s.stats().completed, 0);
      await upLocalInfrastructure(config, ['kafka']);
      const outageMs = Date.now() - stoppedAt;
      log(
        `broker back after ${outageMs} ms on the same data; during the outage ${duringOutage - completedAtStop} inputs completed, ` +
          `documents ${atStop.chunks.size} chunks, ${atStop.interactions.size} interactions when it stopped`,
      );
      expect(outageMs).toBeGreaterThanOrEqual(OUTAGE_MS);
      admin = kafka.admin();
      await admin.connect();
      await publishArticles(transport, names, plan.rest);
      const progress = setInterval(
        () =>
          void describeProgress(admin, names, stages).then(
            (line) => log(`after the restart: ${line}`),
            () => undefined,
          ),
        10_000,
      );
      try {
        await waitUntilSettled(admin, names, 150_000);
      } finally {
        clearInterval(progress);
        log(`stage warnings: ${logger.summary()}`);
      }
      log(`settled ${Date.now() - stoppedAt} ms after the broker stopped`);
      expect(died).toEqual([]);
    } finally {
      await stages.stop(5000);
    }
    const outcome = await readOutcome(live.es, transport, names);
    log(`disturbed run: ${describeOutcome(outcome)}`);
    expectSameOutcome(outcome, reference.outcome);
    await admin.disconnect();
    await datastore.destroy();
    await transport.close();
  }, 300_000);
});

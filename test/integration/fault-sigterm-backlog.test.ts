import { logLevel } from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import type { CliRun } from '../../devkit/cli-process.js';
import {
  collectingLogger,
  committedOffset,
  createScenarioTopics,
  describeOutcome,
  documentIdsNow,
  expectSameOutcome,
  metricValue,
  prefixedScenarioNames,
  publishArticles,
  publishPoison,
  readDatastores,
  readOutcome,
  recordIdsByOffset,
  runReference,
  sampleArticles,
  splitSample,
  startScenarioStages,
  slowIndexerProcess,
  waitUntilSettled,
} from '../harness/fault-scenario.js';
import { waitUntil } from '../harness/invariants.js';
import { useLiveClients } from '../harness/live-clients.js';

/**
 * S11: SIGTERM to a stage process with a backlog and a slow sink. Both index stages run as the
 * product's own process (`neon pipeline --stages index-chunks,index-interactions --no-api`), writing
 * to Elasticsearch through a proxy that holds every reply back; the stages before them run here and
 * feed them real articles. Mid-backlog the process gets SIGTERM: it must drain what it holds, commit,
 * and exit 0 within 30 s, with every record below its committed offsets in Elasticsearch and nothing
 * beyond them. A restart then indexes the rest without writing any document a second time, and the
 * datastores, `neon.dlq` and the mentions the spike stage was given equal an undisturbed run's.
 * Spike episodes are compared with what the product's detector decides for the run's own
 * `entity.mentions` in topic order (and with the undisturbed run's when the mentions came in its
 * order): they depend on that order, which at-least-once delivery does not fix across runs (see
 * `test/harness/fault-scenario.ts`).
 */

const live = useLiveClients();
const SLOW_REPLY_MS = 3000;
const log = (line: string): void => console.log(`[fault S11] ${line}`);

describe('S11: SIGTERM with a backlog and a slow sink', () => {
  it('drains and commits within 30 s, exits 0, and a restart redoes nothing', async () => {
    const transport = createKafkaTransport(
      createKafkaClient({ clientId: 'fault-s11', brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING }),
    );
    const sample = await sampleArticles(300);
    const plan = splitSample(sample, 120);
    const reference = await runReference(transport, live.admin, live.es, plan, live.cleanup, 's11-ref');
    log(`undisturbed run: ${describeOutcome(reference.outcome)} in ${reference.ms} ms`);

    const names = prefixedScenarioNames('s11');
    live.cleanup.topics.push(...(await createScenarioTopics(transport, names)));
    const { proxy, metricsPort, groups, start } = await slowIndexerProcess(names, {
      kafkaBrokers: inject('kafkaBrokers'),
      elasticsearchUrl: inject('elasticsearchUrl'),
    });
    const inputs = { chunks: names.topics.uniqueChunks, interactions: names.topics.interactions };
    const logger = collectingLogger();
    const upstream = await startScenarioStages(transport, names, {
      datastore: new ElasticsearchDatastore({ es: live.es, prefix: names.indexPrefix }),
      only: ['markup', 'chunk', 'dedupe', 'spikes', 'extract'],
      log: logger.log,
    });
    let first: CliRun | undefined = start();
    let second: CliRun | undefined;
    try {
      await first.waitFor(/Ctrl-C to stop/, 90_000);
      // Slow from now on: every reply of Elasticsearch arrives 3 s late.
      proxy.delayMs = SLOW_REPLY_MS;
      const publishing = (async () => {
        await publishArticles(transport, names, plan.first);
        await publishPoison(transport, names);
        await publishArticles(transport, names, plan.rest);
      })();
      // Mid-backlog: some documents are in, the process holds work it has not finished, and more
      // articles are still arriving.
      const inFlightNow = async (): Promise<{ chunks: number; interactions: number }> => {
        const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        return {
          chunks: metricValue(metrics, 'neon_stage_in_flight', { stage: 'index-chunks' }) ?? 0,
          interactions: metricValue(metrics, 'neon_stage_in_flight', { stage: 'index-interactions' }) ?? 0,
        };
      };
      await waitUntil(
        async () => {
          if ((await documentIdsNow(live.es, names)).chunks.size < 20) return false;
          const now = await inFlightNow();
          return now.chunks > 0 && now.interactions > 0;
        },
        60_000,
        'the first documents through the slow sink, with more in flight',
      );
      const ends = {
        chunks: (await transport.endOffsets(inputs.chunks))[0]!,
        interactions: (await transport.endOffsets(inputs.interactions))[0]!,
      };
      const before = {
        chunks: await committedOffset(live.admin, groups.chunks, inputs.chunks),
        interactions: await committedOffset(live.admin, groups.interactions, inputs.interactions),
      };
      const inFlight = await inFlightNow();
      const indexed = await documentIdsNow(live.es, names);
      log(
        `SIGTERM with committed chunks ${before.chunks}/${ends.chunks}, interactions ${before.interactions}/${ends.interactions}; ` +
          `in flight chunks ${inFlight.chunks}, interactions ${inFlight.interactions}; ` +
          `in Elasticsearch ${indexed.chunks.size} chunks, ${indexed.interactions.size} interactions`,
      );
      // A backlog: work taken and not finished, and inputs not committed to their ends.
      expect(inFlight.chunks + inFlight.interactions).toBeGreaterThan(0);
      expect(before.chunks < ends.chunks || before.interactions < ends.interactions).toBe(true);

      const signalled = Date.now();
      first.kill('SIGTERM');
      const code = await first.exited;
      const stopMs = Date.now() - signalled;
      log(`exited ${String(code)} ${stopMs} ms after SIGTERM`);
      expect(code, first.output().slice(-3000)).toBe(0);
      expect(stopMs).toBeLessThan(30_000);
      first = undefined;

      // Drained and committed: every record below a committed offset is in Elasticsearch, and no
      // document is there for a record only beyond it (which a restart would write again).
      const after = {
        chunks: await committedOffset(live.admin, groups.chunks, inputs.chunks),
        interactions: await committedOffset(live.admin, groups.interactions, inputs.interactions),
      };
      const stored = await documentIdsNow(live.es, names);
      const records = {
        chunks: await recordIdsByOffset(transport, inputs.chunks, 'Chunk'),
        interactions: await recordIdsByOffset(transport, inputs.interactions, 'Interaction'),
      };
      for (const kind of ['chunks', 'interactions'] as const) {
        const below = records[kind].filter((r) => r.offset < after[kind]);
        const idsBelow = new Set(below.map((r) => r.id));
        expect(
          below.filter((r) => !stored[kind].has(r.id)).map((r) => `${r.offset}:${r.id}`),
          `${kind} committed but not in Elasticsearch`,
        ).toEqual([]);
        expect(
          [...stored[kind]].filter((id) => !idsBelow.has(id)),
          `${kind} in Elasticsearch beyond the committed offset`,
        ).toEqual([]);
        expect(after[kind]).toBeGreaterThanOrEqual(before[kind]);
      }
      // The topics grew meanwhile: the stages before the indexers kept writing, and a process stops its
      // stages one after another (neon-pipeline.ts), so the chunk indexer took more while the other drained.
      const endsNow = {
        chunks: (await transport.endOffsets(inputs.chunks))[0]!,
        interactions: (await transport.endOffsets(inputs.interactions))[0]!,
      };
      log(
        `after the stop: committed chunks ${after.chunks} (end by now ${endsNow.chunks}), interactions ${after.interactions} (end ${endsNow.interactions}); ` +
          `in Elasticsearch ${stored.chunks.size} chunks, ${stored.interactions.size} interactions`,
      );

      // The restart finishes the rest at full speed and writes nothing twice.
      await publishing;
      proxy.delayMs = 0;
      second = start();
      await second.waitFor(/Ctrl-C to stop/, 90_000);
      await waitUntilSettled(live.admin, names, 120_000);
      const restartSignalled = Date.now();
      second.kill('SIGTERM');
      expect(await second.exited, second.output().slice(-3000)).toBe(0);
      log(`restart indexed the rest; its SIGTERM stop took ${Date.now() - restartSignalled} ms`);
      second = undefined;

      // Each document written once per record of its id (dedupe re-emits a survivor with merged
      // provenance under the same id): a version above that is a record indexed again.
      const datastores = await readDatastores(live.es, names);
      const allRecords = {
        chunks: await recordIdsByOffset(transport, inputs.chunks, 'Chunk'),
        interactions: await recordIdsByOffset(transport, inputs.interactions, 'Interaction'),
      };
      for (const kind of ['chunks', 'interactions'] as const) {
        const perId = new Map<string, number>();
        for (const r of allRecords[kind]) perId.set(r.id, (perId.get(r.id) ?? 0) + 1);
        const rewritten = datastores[kind]
          .filter((d) => d.version !== perId.get(d.id))
          .map((d) => `${d.id} version ${d.version}, records ${perId.get(d.id) ?? 0}`);
        expect(rewritten, `${kind} written more often than their records`).toEqual([]);
      }
    } finally {
      first?.kill('SIGKILL');
      second?.kill('SIGKILL');
      await upstream.stop();
      await proxy.close();
    }

    const outcome = await readOutcome(live.es, transport, names);
    log(`disturbed run: ${describeOutcome(outcome)}; upstream warnings: ${logger.summary()}`);
    expectSameOutcome(outcome, reference.outcome);
    await new ElasticsearchDatastore({ es: live.es, prefix: names.indexPrefix }).destroy();
    await transport.close();
  }, 300_000);
});

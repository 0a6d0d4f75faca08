import { logLevel } from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import { createElasticsearchClient } from '../../streams/elasticsearch/elasticsearch-client.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import {
  collectingLogger,
  committedOffset,
  createScenarioTopics,
  describeOutcome,
  describeProgress,
  documentIdsNow,
  expectSameOutcome,
  freshScenarioNames,
  groupOf,
  INDEX_MAX_IN_FLIGHT,
  publishArticles,
  publishPoison,
  readOutcome,
  recordIdsByOffset,
  runReference,
  sampleArticles,
  splitSample,
  startScenarioStages,
  waitUntilSettled,
  watchPauses,
} from '../harness/fault-scenario.js';
import { waitUntil } from '../harness/invariants.js';
import { useLiveClients } from '../harness/live-clients.js';
import { startTcpProxy } from '../harness/tcp-proxy.js';

/**
 * S3: Elasticsearch unreachable for 30 s in the middle of an ingest, on the product's whole chain of
 * stages with real articles. The index stages reach Elasticsearch through a TCP proxy that is cut
 * (connections dropped, new ones refused); the test reads Elasticsearch directly.
 *
 * During the outage, every second: the index stages' committed offsets (read from Kafka) never pass
 * what Elasticsearch holds — every record below a committed offset has its document there — the
 * stages' consumers are paused at their in-flight bound rather than buffering, and the heap stays
 * flat. After the restore: both datastores, `neon.dlq` and the mentions the spike stage was given are
 * exactly those of an undisturbed run of the same articles.
 * Spike episodes are compared with what the product's detector decides for the run's own
 * `entity.mentions` in topic order (and with the undisturbed run's when the mentions came in its
 * order): they depend on that order, which at-least-once delivery does not fix across runs (see
 * `test/harness/fault-scenario.ts`).
 */

const live = useLiveClients();
const OUTAGE_MS = Number(process.env.FAULT_OUTAGE_MS ?? 30_000);
const log = (line: string): void => console.log(`[fault S3] ${line}`);

interface OutageSample {
  atMs: number;
  committed: { chunks: bigint; interactions: bigint };
  inElasticsearch: { chunks: Set<string>; interactions: Set<string> };
  heapMb: number;
  paused: { chunks: boolean; interactions: boolean };
  inFlight: { chunks: number; interactions: number };
}

describe('S3: Elasticsearch unreachable for 30 s during ingest', () => {
  it('commits nothing Elasticsearch has not acknowledged, pauses, and ends with exactly the undisturbed contents', async () => {
    const transport = createKafkaTransport(
      createKafkaClient({ clientId: 'fault-s3', brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING }),
    );
    const sample = await sampleArticles(300);
    const plan = splitSample(sample, 120);
    const reference = await runReference(transport, live.admin, live.es, plan, live.cleanup, 's3-ref');
    log(`undisturbed run: ${describeOutcome(reference.outcome)} in ${reference.ms} ms`);

    const names = freshScenarioNames('s3');
    live.cleanup.topics.push(...(await createScenarioTopics(transport, names)));
    const esUrl = new URL(inject('elasticsearchUrl'));
    const proxy = await startTcpProxy({ host: esUrl.hostname, port: Number(esUrl.port) });
    const proxiedEs = createElasticsearchClient({ url: `http://127.0.0.1:${proxy.port}` });
    const datastore = new ElasticsearchDatastore({ es: proxiedEs, prefix: names.indexPrefix });
    const indexGroups = { chunks: groupOf(names, 'index-chunks'), interactions: groupOf(names, 'index-interactions') };
    const watched = watchPauses(transport, Object.values(indexGroups));
    const logger = collectingLogger();
    const stages = await startScenarioStages(watched.transport, names, { datastore, log: logger.log });
    const samples: OutageSample[] = [];
    let outageMs = 0;
    try {
      await publishArticles(transport, names, plan.first);
      // Mid-ingest: some documents are in, more are coming.
      await waitUntil(
        async () => (await documentIdsNow(live.es, names)).chunks.size >= 30,
        60_000,
        'the first documents indexed',
      );
      const heapBefore = process.memoryUsage().heapUsed / 2 ** 20;
      await proxy.cut();
      const cutAt = Date.now();
      const atCut = await documentIdsNow(live.es, names);
      log(`cut Elasticsearch with ${atCut.chunks.size} chunks and ${atCut.interactions.size} interactions indexed`);
      // The rest of the articles arrive while Elasticsearch is away: a backlog beyond the bound.
      await publishPoison(transport, names);
      await publishArticles(transport, names, plan.rest);
      while (Date.now() - cutAt < OUTAGE_MS) {
        // Offsets first, then Elasticsearch: a document acknowledged before a commit is there by then.
        const committed = {
          chunks: await committedOffset(live.admin, indexGroups.chunks, names.topics.uniqueChunks),
          interactions: await committedOffset(live.admin, indexGroups.interactions, names.topics.interactions),
        };
        const inElasticsearch = await documentIdsNow(live.es, names);
        const chunkStats = stages.stages.get('index-chunks')!.stats();
        const interactionStats = stages.stages.get('index-interactions')!.stats();
        samples.push({
          atMs: Date.now() - cutAt,
          committed,
          inElasticsearch,
          heapMb: process.memoryUsage().heapUsed / 2 ** 20,
          paused: {
            chunks: watched.pauses.get(indexGroups.chunks)!.pausedNow,
            interactions: watched.pauses.get(indexGroups.interactions)!.pausedNow,
          },
          inFlight: { chunks: chunkStats.inFlight, interactions: interactionStats.inFlight },
        });
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      await proxy.restore();
      outageMs = Date.now() - cutAt;
      log(`restored Elasticsearch after ${outageMs} ms`);
      const heapMax = Math.max(...samples.map((s) => s.heapMb));
      log(
        `heap (MB) before ${heapBefore.toFixed(1)}, during the outage ${samples.map((s) => s.heapMb.toFixed(0)).join(' ')}; ` +
          `max ${heapMax.toFixed(1)}`,
      );
      // A stage that buffered instead of pausing would hold every article's documents in memory.
      expect(heapMax - heapBefore).toBeLessThan(200);
      const progress = setInterval(
        () => void describeProgress(live.admin, names, stages).then((line) => log(`after the restore: ${line}`)),
        5000,
      );
      try {
        await waitUntilSettled(live.admin, names, 120_000);
      } finally {
        clearInterval(progress);
        log(`stage warnings: ${logger.summary()}`);
      }
    } finally {
      const stopping = Date.now();
      await stages.stop(5000);
      log(`stages stopped in ${Date.now() - stopping} ms`);
      await proxy.close();
    }

    // During the outage, each committed offset covered only documents Elasticsearch held.
    const chunkRecords = await recordIdsByOffset(transport, names.topics.uniqueChunks, 'Chunk');
    const interactionRecords = await recordIdsByOffset(transport, names.topics.interactions, 'Interaction');
    log(`read ${chunkRecords.length} chunk and ${interactionRecords.length} interaction records back`);
    expect(samples.length).toBeGreaterThanOrEqual(20);
    for (const s of samples) {
      const unacknowledged = {
        chunks: chunkRecords.filter((r) => r.offset < s.committed.chunks && !s.inElasticsearch.chunks.has(r.id)),
        interactions: interactionRecords.filter(
          (r) => r.offset < s.committed.interactions && !s.inElasticsearch.interactions.has(r.id),
        ),
      };
      expect(
        unacknowledged.chunks.map((r) => `${r.offset}:${r.id}`),
        `chunks committed at ${s.atMs} ms`,
      ).toEqual([]);
      expect(
        unacknowledged.interactions.map((r) => `${r.offset}:${r.id}`),
        `interactions committed at ${s.atMs} ms`,
      ).toEqual([]);
    }
    const first = samples[0]!;
    const last = samples[samples.length - 1]!;
    log(
      `committed offsets during the outage: chunks ${first.committed.chunks}→${last.committed.chunks} ` +
        `(topic holds ${chunkRecords.length} chunk records), interactions ${first.committed.interactions}→${last.committed.interactions} ` +
        `(${interactionRecords.length} records); documents in Elasticsearch ${first.inElasticsearch.chunks.size}→${last.inElasticsearch.chunks.size} chunks, ` +
        `${first.inElasticsearch.interactions.size}→${last.inElasticsearch.interactions.size} interactions`,
    );
    // Nothing reached Elasticsearch through the cut proxy, so nothing new could be committed.
    expect(last.inElasticsearch.chunks.size).toBe(first.inElasticsearch.chunks.size);
    expect(last.committed.chunks).toBeLessThan(BigInt(chunkRecords.length));
    // Back-pressure: the chunk indexer's consumer sat paused at its bound for the rest of the outage.
    const pausedAt = samples.filter((s) => s.paused.chunks).map((s) => s.atMs);
    log(
      `paused samples: chunks ${pausedAt.length}/${samples.length}, interactions ${samples.filter((s) => s.paused.interactions).length}/${samples.length}; ` +
        `in flight at the end of the outage: chunks ${last.inFlight.chunks}, interactions ${last.inFlight.interactions} (bound ${INDEX_MAX_IN_FLIGHT}); ` +
        `pauses ${JSON.stringify(Object.fromEntries(watched.pauses))}`,
    );
    expect(last.paused.chunks).toBe(true);
    expect(last.inFlight.chunks).toBe(INDEX_MAX_IN_FLIGHT);
    expect(Math.max(...samples.map((s) => s.inFlight.chunks))).toBeLessThanOrEqual(INDEX_MAX_IN_FLIGHT);
    expect(watched.pauses.get(indexGroups.chunks)!.resumed).toBeGreaterThan(0);

    const outcome = await readOutcome(live.es, transport, names);
    log(`disturbed run: ${describeOutcome(outcome)}`);
    expectSameOutcome(outcome, reference.outcome);
    await new ElasticsearchDatastore({ es: live.es, prefix: names.indexPrefix }).destroy();
    await proxiedEs.close();
    await transport.close();
  }, 300_000);
});

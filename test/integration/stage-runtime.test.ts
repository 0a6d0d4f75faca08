import { ConfigResourceTypes } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { avroRegistry } from '../../schemas/avro-registry.js';
import { SCHEMA_ID_HEADER } from '../../schemas/avro-codec.js';
import { createMetricsRegistry, stageMetrics } from '../../streams/telemetry/metrics.js';
import { DLQ_HEADERS } from '../../streams/runtime/dead-letter-writer.js';
import { documentIds, encodeArticle, sampleArticle, startPassthroughStage } from '../../devkit/passthrough-stage.js';
import { testKafka } from '../harness/clients.js';
import { passthroughSettings, useLiveClients, type LiveClients } from '../harness/live-clients.js';
import { startTcpProxy } from '../harness/tcp-proxy.js';
import { passthroughScenario, produce } from '../../devkit/passthrough-scenario.js';
import { freshTopic } from '../../devkit/fresh-names.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { startStage } from '../../streams/runtime/run-stage.js';
import {
  assertCommittedToEnd,
  assertExactDocuments,
  committedToEnd,
  readTopic,
  waitUntil,
} from '../harness/invariants.js';

/**
 * The stage runtime's promises on real Kafka and a real Elasticsearch node: exact documents after
 * fan-out, poison dead-lettered with its specific code while everything else flows, and the
 * in-flight bound holding under a slow sink.
 */

const live = useLiveClients();

describe('stage runtime on real Kafka and Elasticsearch', () => {
  it('turns 10,000 records with fan-out into exactly the expected documents, and commits to the end', async () => {
    const s = await passthroughScenario(live.admin, live.es, live.cleanup, 'tenk');
    const articles = Array.from({ length: 10_000 }, (_, i) => sampleArticle(i));
    await produce(
      live.kafka,
      s.input,
      articles.map((a) => ({ key: a.id, ...encodeArticle(a) })),
    );
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const started = Date.now();
    const stage = await startPassthroughStage(
      passthroughSettings(s, {
        metrics: stageMetrics(registry, 'passthrough'),
      }),
    );
    await waitUntil(() => committedToEnd(live.admin, s.group, s.input), 120_000, 'all offsets committed');
    const seconds = (Date.now() - started) / 1000;
    await stage.stop();
    await stage.done;
    const expected = articles.flatMap((a) => documentIds(a.id));
    await assertExactDocuments(live.es, s.index, expected);
    await assertCommittedToEnd(live.admin, s.group, s.input);
    expect(stage.stats()).toMatchObject({ received: 10_000, completed: 10_000, deadLettered: 0, inFlight: 0 });
    const exposition = await registry.metrics();
    expect(exposition).toContain('neon_stage_records_received_total{stage="passthrough"} 10000');
    expect(exposition).toContain(
      `neon_stage_records_sent_total{stage="passthrough",sink="elasticsearch"} ${expected.length}`,
    );
    process.stderr.write(
      `[throughput] 10,000 records → ${expected.length} documents in ${seconds.toFixed(1)} s (${Math.round(10_000 / seconds)} records/s)\n`,
    );
  });

  it('dead-letters 1 % poison once each with its specific code, indexes everything else, leaves no partition stuck', async () => {
    const s = await passthroughScenario(live.admin, live.es, live.cleanup, 'poison');
    const total = 5_000;
    const articleType = avroRegistry.currentType('Article');
    const goodHeaders = encodeArticle(sampleArticle(0)).headers;
    const poisonKinds = ['random_bytes', 'unknown_schema', 'truncated', 'invalid_values'] as const;
    const expectedCode = {
      random_bytes: 'undecodable',
      unknown_schema: 'unknown_schema',
      truncated: 'undecodable',
      invalid_values: 'invalid_record',
    };
    const poison = new Map<string, (typeof poisonKinds)[number]>();
    const messages = Array.from({ length: total }, (_, i) => {
      const article = sampleArticle(i);
      if (i % 100 !== 37) return { key: article.id, ...encodeArticle(article) };
      const kind = poisonKinds[((i / 100) % poisonKinds.length) | 0]!;
      poison.set(article.id, kind);
      const valid = encodeArticle(article).value;
      switch (kind) {
        case 'random_bytes':
          return { key: article.id, value: randomBytes(40), headers: goodHeaders };
        case 'unknown_schema':
          return { key: article.id, value: valid, headers: { [SCHEMA_ID_HEADER]: 'Article@00000000deadbeef' } };
        case 'truncated':
          return { key: article.id, value: valid.subarray(0, valid.length - 7), headers: goodHeaders };
        case 'invalid_values':
          // Valid Avro, impossible content: written with the raw type to get past the encoder's checks.
          return {
            key: article.id,
            value: articleType.toBuffer({ ...article, published_at: -5, id: '' }),
            headers: goodHeaders,
          };
      }
    });
    await produce(live.kafka, s.input, messages);
    const stage = await startPassthroughStage(passthroughSettings(s));
    await waitUntil(() => committedToEnd(live.admin, s.group, s.input), 120_000, 'all offsets committed');
    await stage.stop();
    await stage.done;

    const dead = await readTopic(live.kafka, s.dlq, poison.size);
    expect(dead).toHaveLength(poison.size);
    const byKey = new Map<string, (typeof dead)[number]>();
    for (const letter of dead) {
      expect(letter.headers[DLQ_HEADERS.topic]).toBe(s.input);
      const key = [...poison.keys()].find((id) =>
        messages.find((m) => m.key === id)?.value.equals(letter.value ?? Buffer.alloc(0)),
      );
      expect(key, 'dead letter carries the original bytes').toBeDefined();
      byKey.set(key!, letter);
      expect(letter.headers[DLQ_HEADERS.errorCode]).toBe(expectedCode[poison.get(key!)!]);
      expect(letter.headers[DLQ_HEADERS.processor]).toBe('passthrough');
      expect(letter.headers[DLQ_HEADERS.errorMessage]!.length).toBeGreaterThan(0);
    }
    expect(byKey.size, 'each poison record dead-lettered once').toBe(poison.size);
    const good = Array.from({ length: total }, (_, i) => sampleArticle(i).id).filter((id) => !poison.has(id));
    await assertExactDocuments(
      live.es,
      s.index,
      good.flatMap((id) => documentIds(id)),
    );
    await assertCommittedToEnd(live.admin, s.group, s.input);
  });

  it('keeps in-flight work within the bound under a slow sink, with flat memory', async () => {
    const s = await passthroughScenario(live.admin, live.es, live.cleanup, 'slow');
    const total = 3_000;
    const padding = 'x'.repeat(20_000); // 20 kB per record: ~60 MB would pile up if anything buffered without bound
    const articles = Array.from({ length: total }, (_, i) => ({ ...sampleArticle(i), text: padding }));
    await produce(
      live.kafka,
      s.input,
      articles.map((a) => ({ key: a.id, ...encodeArticle(a) })),
      40, // the broker takes at most 1 MB per request
    );
    const limit = 20;
    let maxConcurrentWrites = 0;
    let writes = 0;
    const heapSamples: number[] = [];
    const sampler = setInterval(() => heapSamples.push(process.memoryUsage().heapUsed), 100);
    const stage = await startPassthroughStage(
      passthroughSettings(s, {
        maxInFlight: limit,
        wrapSink: (sink) => {
          const inner = sink;
          return {
            name: inner.name,
            write: async (request) => {
              writes += 1;
              maxConcurrentWrites = Math.max(maxConcurrentWrites, writes);
              await new Promise((resolve) => setTimeout(resolve, 3));
              try {
                await inner.write(request);
              } finally {
                writes -= 1;
              }
            },
            close: () => inner.close(),
          };
        },
      }),
    );
    const inFlightSamples: number[] = [];
    const watcher = setInterval(() => inFlightSamples.push(stage.stats().inFlight), 20);
    await waitUntil(() => committedToEnd(live.admin, s.group, s.input), 180_000, 'all offsets committed');
    clearInterval(watcher);
    clearInterval(sampler);
    await stage.stop();
    await stage.done;
    expect(Math.max(...inFlightSamples)).toBeLessThanOrEqual(limit);
    expect(stage.stats().maxInFlightObserved).toBe(limit);
    // Each input has at most 2 outputs, so concurrent sink writes are bounded by twice the limit.
    expect(maxConcurrentWrites).toBeLessThanOrEqual(2 * limit);
    const settled = heapSamples.slice(Math.floor(heapSamples.length / 4));
    const growthMb = (Math.max(...settled) - Math.min(...settled)) / 1e6;
    process.stderr.write(
      `[memory] slow sink: heap range ${growthMb.toFixed(1)} MB over ${heapSamples.length} samples; max in flight ${stage.stats().maxInFlightObserved}/${limit}\n`,
    );
    expect(growthMb).toBeLessThan(45);
    await assertExactDocuments(
      live.es,
      s.index,
      articles.flatMap((a) => documentIds(a.id)),
    );
  });

  it('hands partitions over through rebalances (a second member joins, the first leaves) with exact documents', async () => {
    const s = await passthroughScenario(live.admin, live.es, live.cleanup, 'rebalance');
    const articles = Array.from({ length: 12_000 }, (_, i) => sampleArticle(i));
    await produce(
      live.kafka,
      s.input,
      articles.map((a) => ({ key: a.id, ...encodeArticle(a) })),
    );
    const settings = passthroughSettings(s, {
      maxInFlight: 50,
      sessionTimeoutMs: 10_000,
    });
    const first = await startPassthroughStage(settings);
    await waitUntil(() => first.stats().completed > 1000, 60_000, 'the first member to make progress');
    const second = await startPassthroughStage(settings);
    await waitUntil(() => second.stats().received > 0, 60_000, 'the second member to receive partitions');
    await first.stop();
    await first.done;
    await waitUntil(() => committedToEnd(live.admin, s.group, s.input), 120_000, 'all offsets committed');
    await second.stop();
    await second.done;
    await assertExactDocuments(
      live.es,
      s.index,
      articles.flatMap((a) => documentIds(a.id)),
    );
    await assertCommittedToEnd(live.admin, s.group, s.input);
    const received = first.stats().received + second.stats().received;
    expect(received).toBeGreaterThanOrEqual(articles.length);
    process.stderr.write(
      `[rebalance] first member ${first.stats().received} inputs, second ${second.stats().received}; ${received - articles.length} redelivered\n`,
    );
  });

  it('keeps its group membership through a backlog of CPU-heavy records: each processed once', async () => {
    // 600 records × 25 ms of synchronous work = 15 s, fetched in batches of hundreds, against a
    // 6 s session: a loop held for a batch misses every heartbeat, the member is expelled and its
    // uncommitted records are processed again.
    const s = await passthroughScenario(live.admin, live.es, live.cleanup, 'cpu-heavy');
    const total = 600;
    const articles = Array.from({ length: total }, (_, i) => sampleArticle(i));
    await produce(
      live.kafka,
      s.input,
      articles.map((a) => ({ key: a.id, ...encodeArticle(a) })),
    );
    const transport = createKafkaTransport(testKafka('cpu-heavy'), {
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 1_000,
    });
    const processed = new Map<string, number>();
    let joins = 0;
    const stage = await startStage<string>(transport, {
      name: 'cpu-heavy',
      groupId: s.group,
      inputTopics: [s.input],
      deadLetterTopic: s.dlq,
      decode: (record) => `${record.partition}@${record.offset}`,
      process: (input) => {
        const until = performance.now() + 25;
        while (performance.now() < until) {
          // a processor's synchronous work (markup, extraction)
        }
        processed.set(input.value, (processed.get(input.value) ?? 0) + 1);
        return [];
      },
      sinks: {},
      onAssignment: () => (joins += 1),
      log: () => undefined,
    });
    try {
      await waitUntil(() => committedToEnd(live.admin, s.group, s.input), 120_000, 'all offsets committed');
    } finally {
      await stage.stop();
    }
    await stage.done;
    const twice = [...processed].filter(([, times]) => times > 1);
    expect(twice).toEqual([]);
    expect(processed.size).toBe(total);
    expect(joins).toBe(1);
  });

  it('creates topics idempotently with their partitions and configs', async () => {
    const transport = createKafkaTransport(testKafka());
    const topic = freshTopic('admin');
    live.cleanup.topics.push(topic);
    const spec = { topic, partitions: 4, configs: { 'retention.ms': '3600000' } };
    await transport.ensureTopics([spec]);
    await transport.ensureTopics([spec]);
    const metadata = await live.admin.fetchTopicMetadata({ topics: [topic] });
    expect(metadata.topics[0]!.partitions).toHaveLength(4);
    const configs = await live.admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms'] }],
    });
    expect(configs.resources[0]!.configEntries[0]!.configValue).toBe('3600000');
    await transport.close();
  });

  it('lets processes that start together create the topics they share, each then finding all of them', async () => {
    // Like the stages of a pipeline started at once: each its own client, overlapping topic sets.
    const topics = Array.from({ length: 6 }, (_, i) => freshTopic(`shared-${i}`));
    live.cleanup.topics.push(...topics);
    const members = Array.from({ length: 8 }, (_, m) => ({
      transport: createKafkaTransport(testKafka(`starter-${m}`)),
      wants: topics.filter((_, t) => (t + m) % 3 !== 0),
    }));
    await Promise.all(
      members.map(async ({ transport, wants }) => {
        await transport.ensureTopics(wants.map((topic) => ({ topic, partitions: 3 })));
        for (const topic of wants) expect(await transport.endOffsets(topic)).toEqual([0n, 0n, 0n]);
      }),
    );
    await Promise.all(members.map(({ transport }) => transport.close()));
  });

  it('commits everything it drained when stopped in the middle of the stream', async () => {
    const s = await passthroughScenario(live.admin, live.es, live.cleanup, 'midstop');
    const articles = Array.from({ length: 8_000 }, (_, i) => sampleArticle(i));
    await produce(
      live.kafka,
      s.input,
      articles.map((a) => ({ key: a.id, ...encodeArticle(a) })),
    );
    const stage = await startPassthroughStage(
      passthroughSettings(s, {
        maxInFlight: 50,
      }),
    );
    await waitUntil(() => stage.stats().completed > 500, 60_000, 'progress');
    await stage.stop();
    await stage.done;
    const { received, completed, inFlight } = stage.stats();
    expect(inFlight).toBe(0);
    expect(completed).toBe(received);
    expect(received).toBeLessThan(articles.length);
    const [committed] = await live.admin.fetchOffsets({ groupId: s.group, topics: [s.input] });
    const committedCount = committed!.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    expect(committedCount, 'the final commit covers every drained record').toBe(received);
  });

  it('rides out an Elasticsearch outage: retries, dead-letters nothing, ends with exact documents', async () => {
    const s = await passthroughScenario(live.admin, live.es, live.cleanup, 'outage');
    const articles = Array.from({ length: 6_000 }, (_, i) => sampleArticle(i));
    await produce(
      live.kafka,
      s.input,
      articles.map((a) => ({ key: a.id, ...encodeArticle(a) })),
    );
    const target = new URL(inject('elasticsearchUrl'));
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    try {
      const stage = await startPassthroughStage(
        passthroughSettings(s, { elasticsearchUrl: `http://127.0.0.1:${proxy.port}`, maxInFlight: 200 }),
      );
      await waitUntil(() => stage.stats().completed > 300, 60_000, 'progress before the outage');
      await proxy.cut();
      const completedAtCut = stage.stats().completed;
      expect(completedAtCut, 'the outage starts mid-stream').toBeLessThan(articles.length - 1000);
      // Writes Elasticsearch took just before the cut may still land; give them a moment.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const indexedAtCut = await documentCount(live.es, s.index);
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      // Nothing is indexed while Elasticsearch is unreachable, nothing is given up on, and the stage
      // holds at most its in-flight bound. (Inputs with no output still complete meanwhile: they
      // need no sink, so "completed" alone can grow past the bound.)
      expect(await documentCount(live.es, s.index)).toBe(indexedAtCut);
      expect(stage.stats().inFlight).toBeLessThanOrEqual(200);
      expect(stage.stats().inFlight).toBeGreaterThan(0);
      expect(stage.stats().deadLettered).toBe(0);
      await proxy.restore();
      await waitUntil(
        () => committedToEnd(live.admin, s.group, s.input),
        180_000,
        'all offsets committed after the outage',
      );
      await stage.stop();
      await stage.done;
      expect(stage.stats().deadLettered).toBe(0);
      await assertExactDocuments(
        live.es,
        s.index,
        articles.flatMap((a) => documentIds(a.id)),
      );
      await assertCommittedToEnd(live.admin, s.group, s.input);
    } finally {
      await proxy.close();
    }
  });
});

async function documentCount(es: LiveClients['es'], index: string): Promise<number> {
  await es.indices.refresh({ index });
  return (await es.count({ index })).count;
}

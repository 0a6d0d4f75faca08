import type { Client } from '@elastic/elasticsearch';
import type { Admin, Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { javaCompatiblePartitioner, testElasticsearch, testKafka } from '../harness/clients.js';
import { freshIndex, freshTopic } from '../../devkit/fresh-names.js';

/**
 * Proof that the test infrastructure is the real thing: a 3-partition topic on a real broker keeps
 * per-key order for 1,000 records, and a real Elasticsearch node answers a filtered kNN query with
 * exactly the neighbours a brute-force computation predicts.
 */

const RECORDS = 1000;
const KEYS = 37;
const DIMS = 8;
const START = Date.parse('2024-01-01T00:00:00Z');
const HOUR = 3_600_000;

interface Produced {
  i: number;
  key: string;
  seq: number;
}

interface Consumed extends Produced {
  partition: number;
  offset: number;
}

/** Small seeded PRNG so the vectors — and so the expected answer — are the same on every run. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function vectorFor(i: number): number[] {
  const random = mulberry32(1000 + i);
  return Array.from({ length: DIMS }, () => Math.fround(random() * 2 - 1));
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let d = 0; d < a.length; d++) {
    dot += a[d]! * b[d]!;
    na += a[d]! * a[d]!;
    nb += b[d]! * b[d]!;
  }
  return dot / Math.sqrt(na * nb);
}

describe('real Kafka and Elasticsearch', () => {
  let kafka: Kafka;
  let admin: Admin;
  let es: Client;
  const topic = freshTopic('roundtrip');
  const index = freshIndex('roundtrip');
  let consumed: Consumed[] = [];

  beforeAll(async () => {
    kafka = testKafka();
    admin = kafka.admin();
    await admin.connect();
    es = testElasticsearch();
  });

  afterAll(async () => {
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
    await es.indices.delete({ index }, { ignore: [404] });
    await es.close();
  });

  it('keeps per-key order for 1,000 records over a 3-partition topic', async () => {
    await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    expect(metadata.topics[0]!.partitions).toHaveLength(3);

    const produced: Produced[] = [];
    const nextSeq = new Map<string, number>();
    for (let i = 0; i < RECORDS; i++) {
      const key = `key-${i % KEYS}`;
      const seq = nextSeq.get(key) ?? 0;
      nextSeq.set(key, seq + 1);
      produced.push({ i, key, seq });
    }
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: javaCompatiblePartitioner,
    });
    await producer.connect();
    for (let start = 0; start < RECORDS; start += 100) {
      await producer.send({
        topic,
        acks: -1,
        messages: produced.slice(start, start + 100).map((p) => ({ key: p.key, value: JSON.stringify(p) })),
      });
    }
    await producer.disconnect();

    const offsets = await admin.fetchTopicOffsets(topic);
    expect(offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0)).toBe(RECORDS);

    const consumer = kafka.consumer({ groupId: freshTopic('roundtrip-group') });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    consumed = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${consumed.length} of ${RECORDS} records came back in 60 s`)),
        60_000,
      );
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          const value = JSON.parse(message.value!.toString()) as Produced;
          expect(message.key!.toString()).toBe(value.key);
          consumed.push({ ...value, partition, offset: Number(message.offset) });
          if (consumed.length >= RECORDS) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    await consumer.disconnect();

    // Every record exactly once.
    expect(consumed).toHaveLength(RECORDS);
    expect(new Set(consumed.map((c) => c.i)).size).toBe(RECORDS);
    // Each key lives on one partition and arrives in the order it was produced.
    const byKey = new Map<string, Consumed[]>();
    for (const c of consumed) byKey.set(c.key, [...(byKey.get(c.key) ?? []), c]);
    expect(byKey.size).toBe(KEYS);
    for (const [key, records] of byKey) {
      expect(new Set(records.map((r) => r.partition)).size, key).toBe(1);
      expect(
        records.map((r) => r.seq),
        key,
      ).toEqual(records.map((_, n) => n));
    }
    // Keys really were spread: all three partitions hold data, and offsets are gap-free.
    const partitions = new Map<number, number[]>();
    for (const c of consumed) partitions.set(c.partition, [...(partitions.get(c.partition) ?? []), c.offset]);
    expect([...partitions.keys()].sort()).toEqual([0, 1, 2]);
    for (const list of partitions.values()) expect(list).toEqual(list.map((_, n) => n));
  });

  it('bulk-indexes them and answers a date-filtered kNN query exactly', async () => {
    expect(consumed).toHaveLength(RECORDS);
    await es.indices.create({
      index,
      settings: { number_of_shards: 1, number_of_replicas: 0 },
      mappings: {
        dynamic: 'strict',
        properties: {
          key: { type: 'keyword' },
          seq: { type: 'integer' },
          embedding: {
            type: 'dense_vector',
            dims: DIMS,
            index: true,
            similarity: 'cosine',
            index_options: { type: 'hnsw' },
          },
          published_at: { type: 'date' },
        },
      },
    });
    const docs = consumed.map((c) => ({
      id: `${topic}-${c.partition}-${c.offset}`,
      i: c.i,
      body: {
        key: c.key,
        seq: c.seq,
        embedding: vectorFor(c.i),
        published_at: new Date(START + c.i * HOUR).toISOString(),
      },
    }));
    const bulk = await es.bulk({
      refresh: 'wait_for',
      operations: docs.flatMap((d) => [{ index: { _index: index, _id: d.id } }, d.body]),
    });
    // A bulk HTTP 200 says nothing about the items: check each one.
    expect(bulk.errors).toBe(false);
    expect(bulk.items.map((item) => item.index?.status)).toEqual(docs.map(() => 201));
    expect((await es.count({ index })).count).toBe(RECORDS);

    const query = vectorFor(123_456);
    const from = START + 9 * 24 * HOUR; // 2024-01-10
    const to = START + 14 * 24 * HOUR; // 2024-01-15, exclusive
    const inRange = docs.filter((d) => START + d.i * HOUR >= from && START + d.i * HOUR < to);
    expect(inRange).toHaveLength(120);
    const rank = (list: typeof docs): { id: string; score: number }[] =>
      list
        .map((d) => ({ id: d.id, score: (1 + cosine(query, d.body.embedding)) / 2 }))
        .sort((a, b) => b.score - a.score)
        .slice(0, 10);
    const expected = rank(inRange);
    // The filter must matter: unfiltered, the nearest neighbours are elsewhere in time.
    expect(rank(docs).map((d) => d.id)).not.toEqual(expected.map((d) => d.id));

    // num_candidates ≥ the filter's 120 matches makes Lucene search the filtered set exactly.
    const result = await es.search({
      index,
      knn: {
        field: 'embedding',
        query_vector: query,
        k: 10,
        num_candidates: 200,
        filter: { range: { published_at: { gte: new Date(from).toISOString(), lt: new Date(to).toISOString() } } },
      },
      size: 10,
      _source: ['published_at'],
    });
    const hits = result.hits.hits.map((h) => ({ id: h._id!, score: h._score! }));
    expect(hits.map((h) => h.id)).toEqual(expected.map((e) => e.id));
    for (const [n, hit] of hits.entries()) expect(hit.score).toBeCloseTo(expected[n]!.score, 5);
    for (const h of result.hits.hits) {
      const at = Date.parse((h._source as { published_at: string }).published_at);
      expect(at >= from && at < to).toBe(true);
    }
  });
});

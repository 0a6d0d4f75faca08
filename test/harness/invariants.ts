import type { Client } from '@elastic/elasticsearch';
import type { Admin, Kafka } from 'kafkajs';
import { expect } from 'vitest';
import { committedToEnd, waitUntil } from '../../devkit/kafka-progress.js';

export { committedToEnd, waitUntil };

/**
 * Shared delivery invariants for the integration tier: what "no loss, no duplicates, fully
 * committed" means, checked the same way in every test.
 */

/** Every document id in an index, read in pages (no result-window limit). */
export async function allDocumentIds(es: Client, index: string, idField = 'doc_id'): Promise<string[]> {
  await es.indices.refresh({ index });
  const ids: string[] = [];
  let after: (string | number)[] | undefined;
  for (;;) {
    const page = await es.search<Record<string, unknown>>({
      index,
      size: 5000,
      sort: [{ [idField]: 'asc' }],
      _source: false,
      docvalue_fields: [idField],
      ...(after ? { search_after: after } : {}),
    });
    const hits = page.hits.hits;
    if (hits.length === 0) return ids;
    for (const hit of hits) ids.push(hit._id!);
    after = hits[hits.length - 1]!.sort as (string | number)[];
  }
}

/** Exactly the expected documents: none missing, none unexpected, none twice. */
export async function assertExactDocuments(es: Client, index: string, expectedIds: Iterable<string>): Promise<void> {
  const expected = [...new Set(expectedIds)].sort();
  const actual = await allDocumentIds(es, index);
  const actualSet = new Set(actual);
  expect(actual.length, 'documents read back once each').toBe(actualSet.size);
  const missing = expected.filter((id) => !actualSet.has(id));
  const unexpectedIds = actual.filter((id) => !expected.includes(id));
  expect(missing.slice(0, 10), `${missing.length} documents missing`).toEqual([]);
  expect(unexpectedIds.slice(0, 10), `${unexpectedIds.length} unexpected documents`).toEqual([]);
  expect((await es.count({ index })).count).toBe(expected.length);
}

/** The group's committed offsets equal the end of every partition: nothing left to redo. */
export async function assertCommittedToEnd(admin: Admin, groupId: string, topic: string): Promise<void> {
  const ends = await admin.fetchTopicOffsets(topic);
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
  const byPartition = new Map(committed!.partitions.map((p) => [p.partition, p.offset]));
  for (const end of ends) expect(byPartition.get(end.partition), `partition ${end.partition}`).toBe(end.high);
}

export interface DeadLetter {
  value: Buffer | null;
  headers: Record<string, string>;
}

/** Reads a whole (dead-letter) topic from the beginning. */
export async function readTopic(
  kafka: Kafka,
  topic: string,
  expected: number,
  timeoutMs = 30_000,
): Promise<DeadLetter[]> {
  const consumer = kafka.consumer({ groupId: `reader-${topic}-${Date.now()}` });
  const records: DeadLetter[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(message.headers ?? {})) {
        const first = Array.isArray(value) ? value[0] : value;
        if (first !== undefined) headers[name] = first.toString();
      }
      records.push({ value: message.value, headers });
    },
  });
  try {
    await waitUntil(() => records.length >= expected, timeoutMs, `${expected} records on ${topic}`);
    // A moment more, to catch records beyond the expected count (a duplicate dead letter).
    await new Promise((resolve) => setTimeout(resolve, 500));
  } finally {
    await consumer.disconnect();
  }
  return records;
}

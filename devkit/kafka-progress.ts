import type { Admin } from 'kafkajs';
import { withKafkaRetries } from '../streams/kafka/kafka-transport.js';

/** Progress checks shared by the integration tests and the benchmarks (no vitest here). */

export async function waitUntil(
  predicate: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function committedToEnd(admin: Admin, groupId: string, topic: string): Promise<boolean> {
  // Polled while topics are being created and leaders elected: "not the leader" is retried, not fatal.
  const ends = await withKafkaRetries(() => admin.fetchTopicOffsets(topic));
  const [committed] = await withKafkaRetries(() => admin.fetchOffsets({ groupId, topics: [topic] }));
  const byPartition = new Map(committed!.partitions.map((p) => [p.partition, p.offset]));
  // An empty partition has nothing to commit: no offset (-1) is as good as the end there.
  return ends.every((end) => {
    const offset = byPartition.get(end.partition);
    return offset === end.high || (end.high === '0' && offset === '-1');
  });
}

import { logLevel } from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import type { Chunk } from '../../schemas/records.generated.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { topicRecord } from '../../streams/runtime/record-codec.js';
import { startDedupeStage, type DedupeStage } from '../../streams/stages/dedupe-stage.js';
import type { PipelineTopics } from '../../streams/pipeline/pipeline-topics.js';
import type { Transport } from '../../streams/runtime/transport.js';
import { freshTopic } from '../../devkit/fresh-names.js';
import { committedToEnd, waitUntil } from '../harness/invariants.js';
import { useLiveClients } from '../harness/live-clients.js';
import { readTopicRecords } from '../harness/topic-contents.js';

const live = useLiveClients();

/** Deterministic word soup: texts of different stories share almost no word trigram. */
function story(n: number): string {
  let seed = n * 2654435761 + 1;
  const words: string[] = [];
  for (let i = 0; i < 60; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    words.push(`w${seed % 5000}`);
  }
  return words.join(' ');
}

/** The story with a few words changed: word-trigram Jaccard well above 0.5. */
function variant(text: string, v: number): string {
  const words = text.split(' ');
  for (const at of [10 + v, 30 + v, 50 + v]) words[at] = `edited${v}`;
  return words.join(' ');
}

function chunk(story: number, copy: number, text: string): Chunk {
  const articleId = `a-${story}-${copy}`;
  const t = Date.UTC(2025, 2, 1) + story * 60_000 + copy * 1000;
  return {
    id: `${articleId}:v1:0`,
    article_id: articleId,
    index: 0,
    text,
    title: '',
    marked_text: text,
    entity_ids: [],
    entities: [],
    t,
    provenance: [
      {
        article_id: articleId,
        url: `https://copy${copy}.example/${story}`,
        source: `copy${copy}.example`,
        published_at: t,
      },
    ],
  };
}

function storyOf(chunkId: string): number {
  return Number(chunkId.split('-')[1]);
}

describe('dedupe with two replicas on real Kafka', () => {
  it('keeps exactly one chunk per story across partitions, and a standby takes over with the window', async () => {
    const brokers = inject('kafkaBrokers');
    const transports: Transport[] = [0, 1, 2].map((i) =>
      createKafkaTransport(
        createKafkaClient({ clientId: `dedupe-replica-${i}`, brokers, logLevel: logLevel.NOTHING }),
        {
          sessionTimeoutMs: 10_000,
          heartbeatIntervalMs: 1000,
        },
      ),
    );
    const [producerSide, first, second] = transports as [Transport, Transport, Transport];
    const topics: Partial<PipelineTopics> = {
      chunks: freshTopic('dedupe-replicas.chunks'),
      uniqueChunks: freshTopic('dedupe-replicas.unique'),
      mentions: freshTopic('dedupe-replicas.mentions'),
      deadLetters: freshTopic('dedupe-replicas.dlq'),
    };
    const names = Object.values<string>(topics);
    await producerSide.ensureTopics(names.map((topic) => ({ topic, partitions: 3 })));
    live.cleanup.topics.push(...names);
    const groupId = freshTopic('dedupe-replicas.group');
    const replicas: DedupeStage[] = [
      await startDedupeStage(first, { topics, groupId }),
      await startDedupeStage(second, { topics, groupId }),
    ];
    const send = async (chunks: Chunk[]): Promise<void> => {
      await producerSide.producer().send(
        topics.chunks!,
        chunks.map((c) => topicRecord(topics.chunks!, 'Chunk', c.article_id, c)),
      );
    };
    const drained = (): Promise<void> =>
      waitUntil(() => committedToEnd(live.admin, groupId, topics.chunks!), 60_000, 'dedupe committed to the end');

    // Stories 0–59, each as three copies under different article ids (so on different partitions).
    const wave = (from: number, to: number): Chunk[] =>
      Array.from({ length: to - from }, (_, i) => from + i).flatMap((n) => [
        chunk(n, 0, story(n)),
        chunk(n, 1, variant(story(n), 1)),
        chunk(n, 2, variant(story(n), 2)),
      ]);
    await send(wave(0, 60));
    await drained();
    const received = replicas.map((r) => r.stats().received);
    expect(
      received.filter((n) => n > 0),
      `one replica decides: ${received.join(' / ')}`,
    ).toHaveLength(1);
    const active = received[0]! > 0 ? 0 : 1;

    // The active replica leaves; the standby takes over and sees the earlier stories in its window.
    await replicas[active]!.stop();
    await send([...wave(60, 90), chunk(5, 3, variant(story(5), 3)), chunk(42, 3, variant(story(42), 3))]);
    await drained();
    await replicas[1 - active]!.stop();

    const unique = await readTopicRecords(producerSide, topics.uniqueChunks!, 'Chunk');
    const survivors = new Map<number, Set<string>>();
    for (const { value } of unique) {
      const ids = survivors.get(storyOf(value.id)) ?? new Set<string>();
      ids.add(value.id);
      survivors.set(storyOf(value.id), ids);
    }
    expect(survivors.size).toBe(90);
    for (const [n, ids] of survivors) expect([...ids], `story ${n}`).toHaveLength(1);
    const latest = new Map(unique.map((u) => [u.value.id, u.value]));
    const story5 = [...latest.values()].find((c) => storyOf(c.id) === 5)!;
    expect(story5.provenance.map((p) => p.source).sort()).toEqual([
      'copy0.example',
      'copy1.example',
      'copy2.example',
      'copy3.example',
    ]);
    await Promise.all(transports.map((t) => t.close()));
  });
});

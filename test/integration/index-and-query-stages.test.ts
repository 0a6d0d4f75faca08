import { createHash } from 'node:crypto';
import { logLevel } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Embedder } from '../../processors/embed/embedder.js';
import { datastoreNames } from '../../streams/elasticsearch/datastore-templates.js';
import type { Chunk, Interaction, Query } from '../../schemas/records.generated.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { topicRecord } from '../../streams/runtime/record-codec.js';
import { startChunkIndexStage, startInteractionIndexStage } from '../../streams/stages/index-stage.js';
import { startQueryStage } from '../../streams/stages/query-stage.js';
import { Retriever } from '../../streams/retrieval/retrieve.js';
import { freshIndex, freshTopic } from '../../devkit/fresh-names.js';
import { allDocumentIds, committedToEnd, waitUntil } from '../harness/invariants.js';
import { useLiveClients } from '../harness/live-clients.js';
import { readRawTopic, readTopicRecords } from '../harness/topic-contents.js';

const live = useLiveClients();
const DIMS = 16;

/** Words hashed into 16 buckets: texts sharing words are close. Enough to route a test query. */
const wordsEmbedder: Embedder = {
  model: 'test-words-16',
  dimensions: DIMS,
  embed: (texts) =>
    Promise.resolve(
      texts.map((text) => {
        const v = new Float32Array(DIMS);
        for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
          v[createHash('sha256').update(word).digest()[0]! % DIMS]! += 1;
        }
        const norm = Math.hypot(...v) || 1;
        return v.map((x) => x / norm);
      }),
    ),
  close: () => Promise.resolve(),
};

const T = Date.UTC(2024, 0, 31, 9);
const DAY = 86_400_000;

function chunk(id: string, t: number, text: string): Chunk {
  return {
    id,
    article_id: `art-${id}`,
    index: 0,
    text,
    title: '',
    marked_text: text,
    entity_ids: ['e-harbour-authority'],
    entities: [{ id: 'e-harbour-authority', name: 'Harbour Authority', type: 'ORGANIZATION' }],
    t,
    provenance: [
      { article_id: `art-${id}`, url: `https://news.example/${id}`, source: 'news.example', published_at: t },
    ],
  };
}

function interaction(id: string, t: number, text: string, chunkId: string): Interaction {
  return {
    id,
    t,
    subject_id: 'e-harbour-authority',
    subject_name: 'Harbour Authority',
    object_id: null,
    object_name: null,
    text,
    title: '',
    variant: 'M1',
    chunk_ids: [chunkId],
    article_ids: [`art-${chunkId}`],
    urls: [],
    model: 'neon-offline-extractor/1',
    extracted_at: T,
  };
}

const prefix = freshIndex('neonidx');
let datastore: ElasticsearchDatastore;
afterAll(async () => {
  await datastore.destroy();
});

describe('index and query stages on real Kafka and Elasticsearch', () => {
  it('indexes unique chunks and interactions into monthly indices, and answers queries from neon.queries', async () => {
    const transport = createKafkaTransport(
      createKafkaClient({ clientId: 'index-query', brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING }),
    );
    const topics = {
      chunks: freshTopic('idx.chunks'),
      interactions: freshTopic('idx.interactions'),
      queries: freshTopic('idx.queries'),
      answers: freshTopic('idx.answers'),
      dlq: freshTopic('idx.dlq'),
    };
    await transport.ensureTopics(Object.values(topics).map((topic) => ({ topic, partitions: 3 })));
    live.cleanup.topics.push(...Object.values(topics));
    datastore = new ElasticsearchDatastore({ es: live.es, prefix });
    await datastore.prepare({ model: wordsEmbedder.model, dimensions: DIMS });

    const chunks = [
      chunk('c1', T - 40 * DAY, 'The harbour authority approved a new ferry terminal.'),
      chunk('c2', T - DAY, 'Storm closes the harbour; ferries cancelled.'),
      chunk('c3', T, 'The harbour reopened after the storm passed.'),
    ];
    const interactions = [
      interaction('i1', T - 40 * DAY, 'Harbour Authority approves ferry terminal', 'c1'),
      interaction('i2', T - DAY, 'Harbour Authority cancels ferries during storm', 'c2'),
      interaction('i3', T, 'Harbour Authority reopens harbour after storm', 'c3'),
    ];
    const producer = transport.producer();
    await producer.send(
      topics.chunks,
      chunks.map((c) => topicRecord(topics.chunks, 'Chunk', c.article_id, c)),
    );
    await producer.send(
      topics.interactions,
      interactions.map((i) => topicRecord(topics.interactions, 'Interaction', i.subject_id, i)),
    );
    await producer.send(topics.interactions, [{ key: 'x', value: Buffer.from('not avro') }]);

    const common = { datastore, embedder: wordsEmbedder, deadLetterTopic: topics.dlq, bulk: { lingerMs: 5 } };
    const chunkGroup = freshTopic('idx.chunk-group');
    const interactionGroup = freshTopic('idx.interaction-group');
    const indexChunks = await startChunkIndexStage(transport, {
      ...common,
      inputTopic: topics.chunks,
      groupId: chunkGroup,
    });
    const indexInteractions = await startInteractionIndexStage(transport, {
      ...common,
      inputTopic: topics.interactions,
      groupId: interactionGroup,
    });
    try {
      await waitUntil(
        async () =>
          (await committedToEnd(live.admin, chunkGroup, topics.chunks)) &&
          (await committedToEnd(live.admin, interactionGroup, topics.interactions)),
        60_000,
        'both index stages committed',
      );
    } finally {
      await indexChunks.stop();
      await indexInteractions.stop();
    }
    await live.es.indices.refresh({ index: `${prefix}-*` });
    expect(await datastore.months('chunks')).toEqual([`${prefix}-chunks-2023.12`, `${prefix}-chunks-2024.01`]);
    const chunkAlias = datastoreNames('chunks', prefix).alias;
    const interactionAlias = datastoreNames('interactions', prefix).alias;
    expect((await allDocumentIds(live.es, chunkAlias, 'id')).sort()).toEqual(['c1', 'c2', 'c3']);
    expect((await allDocumentIds(live.es, interactionAlias, 'id')).sort()).toEqual(['i1', 'i2', 'i3']);
    const stored = await live.es.search<Record<string, unknown>>({ index: chunkAlias, query: { term: { id: 'c2' } } });
    expect(stored.hits.hits[0]!._id).toBe('c2');
    expect(stored.hits.hits[0]!._source).toMatchObject({
      published_day: '2024-01-30',
      urls: ['https://news.example/c2'],
      embedding_model: 'test-words-16',
    });
    const dead = await readRawTopic(transport, topics.dlq);
    expect(dead.map((d) => d.headers['dlq.error.code'])).toEqual(['unknown_schema']);

    // Request / reply over Kafka.
    const query = (id: string, k: number): Query => ({
      id,
      q: 'harbour storm ferries',
      t_q: T - DAY + 3_600_000,
      k,
      strategy: 'temporal',
      time_constraint: 'NONE',
      constraint_at: null,
      window_days: 60,
      datastore: 'INTERACTIONS',
      hops: 1,
      as_of_only: true,
    });
    await producer.send(topics.queries, [
      topicRecord(topics.queries, 'Query', 'q-1', query('q-1', 2)),
      topicRecord(topics.queries, 'Query', 'q-2', query('q-2', 500)),
    ]);
    const queryGroup = freshTopic('idx.query-group');
    const stage = await startQueryStage(transport, {
      retriever: new Retriever({ datastore, embedder: wordsEmbedder }),
      queriesTopic: topics.queries,
      answersTopic: topics.answers,
      deadLetterTopic: topics.dlq,
      groupId: queryGroup,
    });
    try {
      await waitUntil(() => committedToEnd(live.admin, queryGroup, topics.queries), 60_000, 'queries answered');
    } finally {
      await stage.stop();
      await producer.disconnect();
    }
    const answers = await readTopicRecords(transport, topics.answers, 'Answer');
    expect(answers.map((a) => a.key)).toEqual(['q-1']);
    const [answer] = answers.map((a) => a.value);
    // As of the day before T: i3 (T) is the future; i2 is on the query's day, i1 39 days back (within ±60).
    expect(answer!.retrieved.map((r) => r.id)).toEqual(['i2', 'i1']);
    expect(answer!.citations[0]).toMatchObject({ n: 1, id: 'i2', kind: 'INTERACTION', url: 'https://news.example/c2' });
    expect(answer!.answer).toContain('Harbour Authority cancels ferries during storm [1]');
    expect(answer!.model).toBeNull();
    const deadAfter = await readRawTopic(transport, topics.dlq);
    expect(deadAfter.map((d) => d.headers['dlq.error.code'])).toEqual(['unknown_schema', 'processor_rejected']);
    expect(deadAfter[1]!.headers['dlq.error.message']).toContain('k must be 1 to 100');
    await transport.close();
  });
});

import { describe, expect, it } from 'vitest';
import { HashingEmbedder } from '../../processors/embed/hashing-embedder.js';
import type { Interaction } from '../../schemas/records.generated.js';
import type { IndexRequest } from '../../streams/datastore/datastore.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { localTopicSpecs, TOPICS } from '../../streams/pipeline/topics.js';
import { topicRecord } from '../../streams/runtime/record-codec.js';
import { StageError } from '../../streams/runtime/stage-error.js';
import { WriteOrder } from '../../streams/runtime/write-order.js';
import { startInteractionIndexStage } from '../../streams/stages/index-stage.js';
import { waitUntil } from '../harness/wait-until.js';

/**
 * The index stage writes the versions of one document in the order their records arrived: a
 * statement record re-emitted with more citations must not be overwritten by its older version
 * when that one's write is retried (fault test S12 caught an interaction indexed with fewer
 * citations than its last record, once in eight runs).
 */

const T0 = Date.UTC(2025, 0, 6, 9);

function statement(chunkIds: string[]): Interaction {
  return {
    id: 'int-M2-e-harbour-e-ferry-1',
    t: T0,
    subject_id: 'e-harbour',
    subject_name: 'Harbour Authority',
    object_id: 'e-ferry',
    object_name: 'Island Ferries',
    text: 'The Harbour Authority moved Island Ferries to the southern terminal.',
    title: 'Northern pier closed',
    variant: 'M2',
    chunk_ids: chunkIds,
    article_ids: chunkIds.map((c) => c.split(':')[0]!),
    urls: chunkIds.map((c) => `https://news.example/${c.split(':')[0]!}`),
    model: 'offline',
    extracted_at: T0,
  };
}

describe('the index stage writing versions of one document', () => {
  it('writes the newer version last even when the older one’s write is retried', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics(localTopicSpecs(1));
    const embedder = new HashingEmbedder(32);
    const datastore = new EmbeddedDatastore('neon');
    await datastore.prepare({ model: embedder.model, dimensions: embedder.dimensions });
    // The first write of the one-citation version fails as an outage would; the runtime retries it
    // after a backoff, during which the two-citation version is ready to be written.
    const written: number[] = [];
    let refused = 0;
    const writer = datastore.writer.bind(datastore);
    datastore.writer = (options) => {
      const inner = writer(options);
      return {
        name: inner.name,
        write: async (request: IndexRequest) => {
          const citations = (request.document['chunk_ids'] as string[]).length;
          if (citations === 1 && refused === 0) {
            refused += 1;
            throw new StageError('es_unavailable', 'node unavailable', inner.name);
          }
          await inner.write(request);
          written.push(citations);
        },
        close: () => inner.close(),
      };
    };
    const stage = await startInteractionIndexStage(transport, { datastore, embedder, groupId: 'index-order' });
    try {
      const producer = transport.producer();
      await producer.send(TOPICS.interactions, [
        topicRecord(TOPICS.interactions, 'Interaction', 'e-harbour', statement(['a:v1:0'])),
        topicRecord(TOPICS.interactions, 'Interaction', 'e-harbour', statement(['a:v1:0', 'b:v1:0'])),
      ]);
      await waitUntil(() => written.length >= 2, 'both versions written');
    } finally {
      await stage.stop();
    }
    expect(refused).toBe(1);
    expect(written).toEqual([1, 2]);
  });
});

describe('WriteOrder', () => {
  it('lets a key’s next record write only after the previous one settled, and other keys at once', async () => {
    const order = new WriteOrder();
    const first = order.turn('doc-1', 'p0/0');
    const second = order.turn('doc-1', 'p0/1');
    const other = order.turn('doc-2', 'p0/2');
    let secondReady = false;
    void second.ready.then(() => (secondReady = true));
    await other.ready;
    await first.ready;
    await Promise.resolve();
    expect(secondReady).toBe(false);
    first.release();
    await second.ready;
    expect(secondReady).toBe(true);
  });

  it('gives a retried attempt at the same record its own turn back, not a place behind itself', async () => {
    const order = new WriteOrder();
    const turn = order.turn('doc-1', 'p0/0');
    expect(order.turn('doc-1', 'p0/0')).toBe(turn);
    await turn.ready;
    turn.release();
    turn.release();
    expect(order.size).toBe(0);
    await order.turn('doc-1', 'p0/1').ready;
  });
});

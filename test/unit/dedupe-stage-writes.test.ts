import { describe, expect, it } from 'vitest';
import { decodeRecord } from '../../schemas/avro-codec.js';
import type { Chunk } from '../../schemas/records.generated.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { localTopicSpecs, TOPICS } from '../../streams/pipeline/topics.js';
import { topicRecord } from '../../streams/runtime/record-codec.js';
import { DEDUPE_GROUP_HEADER, startDedupeStage } from '../../streams/stages/dedupe-stage.js';
import { waitUntil } from '../harness/wait-until.js';

/**
 * What the dedupe stage writes to news.chunks.unique, on the embedded transport: the survivor's last
 * record carries every source merged into it even when an earlier write of it had to be retried
 * after a later one went through, and each record names the group that decided it.
 */

const T0 = Date.UTC(2025, 0, 6);
const STORY =
  'The harbour authority closed the northern pier on Tuesday after inspectors found cracks in two of ' +
  'its supporting columns. Ferry services to the islands will leave from the southern terminal until ' +
  'repairs are finished, which the authority expects to take about six weeks.';

function chunk(article: string, t: number): Chunk {
  return {
    id: `${article}:v1:0`,
    article_id: article,
    index: 0,
    text: STORY,
    title: '',
    marked_text: STORY,
    entity_ids: ['e-harbour-authority'],
    entities: [{ id: 'e-harbour-authority', name: 'Harbour Authority', type: 'ORGANIZATION' }],
    t,
    provenance: [
      { article_id: article, url: `https://news.example/${article}`, source: 'news.example', published_at: t },
    ],
  };
}

describe('the dedupe stage writing survivors', () => {
  it('writes a survivor as it stands at each attempt, so a retried first write cannot put back fewer sources', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics(localTopicSpecs(1));
    const unique = () => transport.broker.read(TOPICS.uniqueChunks, 0, 0n);
    // The unique-chunk topic refuses every write of the original's first version until the
    // duplicate's write (the survivor with both sources) has gone through.
    const append = transport.broker.append.bind(transport.broker);
    let refused = 0;
    transport.broker.append = (topic, records) => {
      if (topic === TOPICS.uniqueChunks && unique().length === 0) {
        const first = decodeRecord('Chunk', records[0]!.value, records[0]!.headers);
        if (first.provenance.length === 1) {
          refused += 1;
          throw new Error('broker unavailable');
        }
      }
      append(topic, records);
    };
    const stage = await startDedupeStage(transport, { groupId: 'dedupe-writes', maxInFlight: 16 });
    try {
      const producer = transport.producer();
      await producer.send(TOPICS.chunks, [topicRecord(TOPICS.chunks, 'Chunk', 'a', chunk('a', T0))]);
      await waitUntil(() => refused > 0, 'the first write to be refused');
      await producer.send(TOPICS.chunks, [topicRecord(TOPICS.chunks, 'Chunk', 'b', chunk('b', T0 + 3_600_000))]);
      await waitUntil(() => unique().length >= 2, 'both writes');
    } finally {
      await stage.stop();
    }
    const written = unique().map((r) => ({
      chunk: decodeRecord('Chunk', r.value, r.headers),
      group: r.headers[DEDUPE_GROUP_HEADER]?.toString(),
    }));
    expect(written.every((w) => w.chunk.id === 'a:v1:0' && w.group === 'dedupe-writes')).toBe(true);
    // The last record of the survivor, the one every reader ends with, has both sources.
    expect(written.at(-1)!.chunk.provenance.map((p) => p.article_id)).toEqual(['a', 'b']);
  });
});

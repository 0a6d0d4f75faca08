import { describe, expect, it } from 'vitest';
import { IntakeRejection } from '../../processors/intake/article-input.js';
import { TransportArticlePublisher, DLQ_ORIGIN_HEADER } from '../../streams/stages/intake-publisher.js';
import { DLQ_HEADERS } from '../../streams/runtime/dead-letter-writer.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { tailTopic } from '../../streams/runtime/topic-tail.js';
import { headerText } from '../../streams/runtime/transport.js';
import { decodeRecord } from '../../schemas/avro-codec.js';
import { FIXTURES } from './avro-fixtures.js';

describe('tailTopic', () => {
  it('is caught up at once on an empty topic, then follows new records', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics([{ topic: 't', partitions: 2 }]);
    const seen: string[] = [];
    const tail = await tailTopic(transport, 't', (r) => seen.push(r.value!.toString()), { purpose: 'test' });
    await tail.caughtUp;
    await transport.producer().send('t', [{ key: 'a', value: Buffer.from('1') }]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual(['1']);
    await tail.stop();
  });

  it('resolves caughtUp only after every record present at the start was handed over, on every partition', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics([{ topic: 't', partitions: 3 }]);
    const records = Array.from({ length: 500 }, (_, i) => ({ key: `k${i}`, value: Buffer.from(String(i)) }));
    await transport.producer().send('t', records);
    expect((await transport.endOffsets('t')).reduce((a, b) => a + b, 0n)).toBe(500n);
    const seen = new Set<string>();
    const tail = await tailTopic(transport, 't', (r) => seen.add(r.value!.toString()), { purpose: 'test' });
    await tail.caughtUp;
    expect(seen.size).toBe(500);
    expect(tail.received()).toBe(500);
    await tail.stop();
  });

  it('catches up on demand with what was written after it started', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics([{ topic: 't', partitions: 2 }]);
    const seen: string[] = [];
    const tail = await tailTopic(transport, 't', (r) => seen.push(r.value!.toString()), { purpose: 'test' });
    await tail.caughtUp;
    await transport.producer().send(
      't',
      Array.from({ length: 200 }, (_, i) => ({ key: `k${i}`, value: Buffer.from(String(i)) })),
    );
    await tail.catchUp();
    expect(seen).toHaveLength(200);
    await tail.stop();
    await expect(tail.catchUp()).resolves.toBeUndefined();
  });

  it('does not commit: a second tail reads everything again', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics([{ topic: 't', partitions: 1 }]);
    await transport.producer().send('t', [{ key: null, value: Buffer.from('x') }]);
    for (let round = 0; round < 2; round++) {
      const tail = await tailTopic(transport, 't', () => undefined, { purpose: 'test' });
      await tail.caughtUp;
      expect(tail.received()).toBe(1);
      await tail.stop();
    }
  });
});

describe('TransportArticlePublisher', () => {
  it('writes articles keyed by id, and refusals as dead letters with the reason and origin', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics([
      { topic: 'articles', partitions: 2 },
      { topic: 'dlq', partitions: 1 },
    ]);
    const publisher = new TransportArticlePublisher(transport.producer(), {
      articlesTopic: 'articles',
      deadLetterTopic: 'dlq',
    });
    await publisher.publish(FIXTURES.Article);
    await publisher.reject(
      Buffer.from('{"url":1}'),
      new IntakeRejection('invalid_input', 'url must be a string'),
      'http',
    );
    const [articles] = [transport.broker.read('articles', 0, 0n).concat(transport.broker.read('articles', 1, 0n))];
    expect(articles).toHaveLength(1);
    expect(articles[0]!.key?.toString()).toBe(FIXTURES.Article.id);
    expect(decodeRecord('Article', articles[0]!.value, articles[0]!.headers)).toEqual(FIXTURES.Article);
    const [dead] = transport.broker.read('dlq', 0, 0n);
    expect(dead!.value?.toString()).toBe('{"url":1}');
    expect(headerText(dead!.headers)).toMatchObject({
      [DLQ_HEADERS.errorCode]: 'invalid_input',
      [DLQ_HEADERS.stage]: 'intake',
      [DLQ_ORIGIN_HEADER]: 'http',
    });
    expect(publisher.counters).toEqual({ published: 1, rejected: { invalid_input: 1 } });
  });
});

import { KafkaJSConnectionError, KafkaJSNonRetriableError, KafkaJSProtocolError } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { classifyProducerError } from '../../streams/kafka/classify-producer-error.js';
import { KafkaSink, recordBytes, type TopicRecord } from '../../streams/kafka/kafka-sink.js';
import { StageError } from '../../streams/runtime/stage-error.js';
import type { OutgoingRecord, TransportProducer } from '../../streams/runtime/transport.js';

/**
 * A record the broker can never take (MESSAGE_TOO_LARGE) is refused for good, alone: the records
 * batched with it are written, and nothing retries it forever. Producer batches are capped in bytes.
 */

/** The error kafkajs raises from a produce response with this Kafka error code. */
function protocolError(code: number, type: string, retriable: boolean): KafkaJSProtocolError {
  const Protocol = KafkaJSProtocolError as unknown as new (e: object) => KafkaJSProtocolError;
  return new Protocol({ message: `${type} from the broker`, type, code, retriable });
}

const tooLarge = (): KafkaJSProtocolError => protocolError(10, 'MESSAGE_TOO_LARGE', false);

describe('classifyProducerError', () => {
  it('tells records too large from outages and from refusals an operator must fix', () => {
    expect(classifyProducerError(tooLarge())).toBe('too_large');
    expect(classifyProducerError(protocolError(18, 'RECORD_LIST_TOO_LARGE', false))).toBe('too_large');
    // Wrapped once more by a retrier, the protocol error is still found.
    const NonRetriable = KafkaJSNonRetriableError as unknown as new (e: Error, m: { cause: Error }) => Error;
    expect(classifyProducerError(new NonRetriable(tooLarge(), { cause: tooLarge() }))).toBe('too_large');
    expect(classifyProducerError(protocolError(6, 'NOT_LEADER_FOR_PARTITION', true))).toBe('transient');
    expect(classifyProducerError(new KafkaJSConnectionError('Connection error: ECONNREFUSED'))).toBe('transient');
    expect(classifyProducerError(protocolError(29, 'TOPIC_AUTHORIZATION_FAILED', false))).toBe('refused');
    expect(classifyProducerError(new Error('something else'))).toBe('transient');
  });
});

/** A producer standing for a broker whose limit per produced batch is `limit` bytes. */
function brokerWithLimit(limit: number): TransportProducer & { sends: OutgoingRecord[][]; failures: number } {
  const producer = {
    sends: [] as OutgoingRecord[][],
    failures: 0,
    send(_topic: string, records: OutgoingRecord[]): Promise<void> {
      const bytes = records.reduce((n, r) => n + (r.value?.length ?? 0), 0);
      if (bytes > limit) {
        producer.failures += 1;
        return Promise.reject(tooLarge());
      }
      producer.sends.push(records);
      return Promise.resolve();
    },
    disconnect: () => Promise.resolve(),
  };
  return producer;
}

const record = (key: string, bytes: number): TopicRecord => ({
  topic: 'out',
  key: Buffer.from(key),
  value: Buffer.alloc(bytes, 0x61),
});

async function settle(promise: Promise<void>): Promise<unknown> {
  return promise.then(
    () => 'ok',
    (error: unknown) => error,
  );
}

describe('KafkaSink and records too large', () => {
  it('refuses only the record too large for the broker, with record_too_large, and writes its batch companions', async () => {
    const broker = brokerWithLimit(10_000);
    const sink = new KafkaSink(broker, { lingerMs: 20 });
    const outcomes = await Promise.all(
      [record('a', 100), record('big', 50_000), record('b', 200), record('c', 300)].map((r) => settle(sink.write(r))),
    );
    expect(outcomes[0]).toBe('ok');
    expect(outcomes[2]).toBe('ok');
    expect(outcomes[3]).toBe('ok');
    const refusal = outcomes[1] as StageError;
    expect(refusal).toBeInstanceOf(StageError);
    expect(refusal.code).toBe('record_too_large');
    expect(refusal.disposition).toBe('dead_letter');
    expect(broker.sends.flat().map((r) => r.key?.toString())).toEqual(['a', 'b', 'c']);
    await sink.close();
  });

  it('refuses a record over its own limit without sending it', async () => {
    const broker = brokerWithLimit(Number.POSITIVE_INFINITY);
    const sink = new KafkaSink(broker, { maxRecordBytes: 1_000 });
    const refusal = (await settle(sink.write(record('big', 2_000)))) as StageError;
    expect(refusal.code).toBe('record_too_large');
    expect(refusal.message).toMatch(/2\d{3} bytes.*more than 1000/);
    expect(broker.sends).toEqual([]);
    expect(await settle(sink.write(record('small', 10)))).toBe('ok');
  });

  it('caps every produce call at maxBatchBytes, keeping write order', async () => {
    const broker = brokerWithLimit(Number.POSITIVE_INFINITY);
    const sink = new KafkaSink(broker, { lingerMs: 20, maxBatchBytes: 1_000 });
    const records = Array.from({ length: 12 }, (_, i) => record(`r${i}`, 300));
    await Promise.all(records.map((r) => sink.write(r)));
    for (const sent of broker.sends) expect(sent.reduce((n, r) => n + recordBytes(r), 0)).toBeLessThanOrEqual(1_000);
    expect(broker.sends.length).toBeGreaterThanOrEqual(4);
    expect(broker.sends.flat().map((r) => r.key?.toString())).toEqual(records.map((r) => r.key?.toString()));
  });

  it('still retries an outage at stage level (kafka_unavailable)', async () => {
    const sink = new KafkaSink({
      send: () => Promise.reject(new KafkaJSConnectionError('Connection error: ECONNREFUSED')),
      disconnect: () => Promise.resolve(),
    });
    const failure = (await settle(sink.write(record('a', 10)))) as StageError;
    expect(failure.code).toBe('kafka_unavailable');
    expect(failure.disposition).toBe('retry');
  });
});

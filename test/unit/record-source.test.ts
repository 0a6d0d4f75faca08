import { describe, expect, it } from 'vitest';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { KafkaSink } from '../../streams/kafka/kafka-sink.js';
import { createRecordSource, type SourceRecord } from '../../streams/runtime/record-source.js';

async function transportWith(records: number, partitions = 1) {
  const transport = createEmbeddedTransport();
  await transport.ensureTopics([
    { topic: 'in', partitions },
    { topic: 'out', partitions: 2 },
  ]);
  await transport.producer().send(
    'in',
    Array.from({ length: records }, (_, i) => ({ key: `k${i}`, value: Buffer.from(String(i)) })),
  );
  return transport;
}

async function until(predicate: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('createRecordSource', () => {
  it('emits envelopes with coordinates and commits only through completed records, whatever the order', async () => {
    const transport = await transportWith(10);
    const source = createRecordSource(transport, {
      groupId: 'g',
      topics: ['in'],
      maxInFlight: 100,
      commitIntervalMs: 60_000,
    });
    const seen: SourceRecord[] = [];
    source.records$.subscribe((item) => seen.push(item));
    await source.start();
    await until(() => seen.length === 10);
    expect(seen.map((s) => [s.record.topic, s.record.partition, s.record.offset, s.record.value?.toString()])).toEqual(
      Array.from({ length: 10 }, (_, i) => ['in', 0, String(i), String(i)]),
    );
    // Complete 9..3 first: nothing is committable past offset 0.
    for (const item of seen.slice(3).reverse()) item.ack.complete();
    await source.commit();
    expect(transport.broker.committedOffset('g', 'in', 0)).toBe(0n);
    // One output for record 1, then the rest: the position follows the gap closing.
    seen[1]!.ack.addOutputs(1);
    seen[1]!.ack.seal();
    seen[0]!.ack.complete();
    await source.commit();
    expect(transport.broker.committedOffset('g', 'in', 0)).toBe(1n);
    seen[1]!.ack.outputAcknowledged();
    seen[2]!.ack.complete();
    await source.commit();
    expect(transport.broker.committedOffset('g', 'in', 0)).toBe(10n);
    await source.stop(1000);
  });

  it('holds back delivery at the in-flight bound and resumes as records complete', async () => {
    const transport = await transportWith(50, 2);
    const source = createRecordSource(transport, { groupId: 'g', topics: ['in'], maxInFlight: 5, resumeBelow: 2 });
    const seen: SourceRecord[] = [];
    source.records$.subscribe((item) => seen.push(item));
    await source.start();
    await until(() => seen.length === 5);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toHaveLength(5);
    expect(source.inFlight).toBe(5);
    for (const item of seen.slice(0, 3)) item.ack.complete();
    await until(() => seen.length === 8);
    // Complete everything as it arrives until all 50 went through a 5-wide gate.
    while (seen.length < 50 || seen.some((s) => !s.ack.done)) {
      await until(() => seen.some((s) => !s.ack.done) || seen.length === 50);
      for (const item of seen) if (!item.ack.done) item.ack.complete();
    }
    expect(source.maxInFlightObserved).toBe(5);
    await source.stop(1000);
  });

  it('never commits an abandoned record, but frees its slot', async () => {
    const transport = await transportWith(3);
    const source = createRecordSource(transport, { groupId: 'g', topics: ['in'], maxInFlight: 10 });
    const seen: SourceRecord[] = [];
    source.records$.subscribe((item) => seen.push(item));
    await source.start();
    await until(() => seen.length === 3);
    seen[0]!.ack.complete();
    seen[1]!.abandon();
    seen[2]!.ack.complete();
    expect(source.inFlight).toBe(0);
    await source.stop(1000);
    expect(transport.broker.committedOffset('g', 'in', 0)).toBe(1n);
  });
});

describe('KafkaSink', () => {
  it('resolves each write once its batch is appended, keeping keys together', async () => {
    const transport = await transportWith(0);
    const sink = new KafkaSink(transport.producer(), { lingerMs: 1, maxBatch: 7 });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        sink.write({ topic: 'out', key: `key-${i % 4}`, value: Buffer.from(String(i)) }),
      ),
    );
    await sink.close();
    const all = [0, 1].flatMap((p) => transport.broker.read('out', p, 0n));
    expect(all.map((r) => r.value?.toString()).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 20 }, (_, i) => String(i)),
    );
    for (let k = 0; k < 4; k++) {
      const partitions = new Set(all.filter((r) => r.key?.toString() === `key-${k}`).map((r) => r.partition));
      expect(partitions.size).toBe(1);
    }
  });

  it('sends one batch per topic at a time, in write order, even when an earlier send is slow', async () => {
    // kafkajs lets a later send overtake a slow earlier one; the sink must not give it the chance.
    const sent: string[][] = [];
    const open = new Map<string, number>();
    let overlapped = false;
    const sink = new KafkaSink(
      {
        send: async (topic, records) => {
          open.set(topic, (open.get(topic) ?? 0) + 1);
          if (open.get(topic)! > 1) overlapped = true;
          // The first send to each topic is the slow one (metadata, producer id).
          await new Promise((resolve) => setTimeout(resolve, sent.length === 0 ? 30 : 1));
          sent.push(records.map((r) => `${topic}:${r.value?.toString()}`));
          open.set(topic, open.get(topic)! - 1);
        },
        disconnect: () => Promise.resolve(),
      },
      { lingerMs: 1, maxBatch: 2 },
    );
    const writes = Array.from({ length: 9 }, (_, i) =>
      sink.write({ topic: i % 3 === 0 ? 'b' : 'a', key: 'same', value: Buffer.from(String(i)) }),
    );
    await Promise.all(writes);
    await sink.close();
    expect(overlapped).toBe(false);
    const order = (topic: string) =>
      sent
        .flat()
        .filter((r) => r.startsWith(`${topic}:`))
        .map((r) => Number(r.slice(2)));
    expect(order('a')).toEqual([1, 2, 4, 5, 7, 8]);
    expect(order('b')).toEqual([0, 3, 6]);
  });

  it('rejects with a retriable kafka_unavailable when the producer fails', async () => {
    const sink = new KafkaSink({
      send: () => Promise.reject(new Error('broker down')),
      disconnect: () => Promise.resolve(),
    });
    await expect(sink.write({ topic: 'out', key: null, value: Buffer.from('x') })).rejects.toMatchObject({
      code: 'kafka_unavailable',
      retriable: true,
    });
  });
});

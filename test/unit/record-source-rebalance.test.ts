import { describe, expect, it } from 'vitest';
import { createRecordSource, type SourceRecord } from '../../streams/runtime/record-source.js';
import type {
  ConsumerCallbacks,
  RawRecord,
  TopicPartition,
  Transport,
  TransportConsumer,
} from '../../streams/runtime/transport.js';

/**
 * A rebalance while a record waits at the full in-flight gate. Kafka lets the group rejoin while a
 * batch of the old generation is still being handed over (kafkajs marks it stale); the record that
 * was waiting belongs to the old generation and must not be tracked against the new one, where it
 * would make a position past records the new generation has not processed committable.
 */

/** A transport whose consumer is driven by the test: it calls `deliver` and `onAssignment` itself. */
function drivenTransport(): {
  transport: Transport;
  callbacks: () => ConsumerCallbacks;
  commits: (TopicPartition & { offset: bigint })[][];
} {
  let callbacks: ConsumerCallbacks | undefined;
  const commits: (TopicPartition & { offset: bigint })[][] = [];
  const consumer: TransportConsumer = {
    start: (given) => {
      callbacks = given;
      given.onAssignment([{ topic: 'in', partition: 0 }]);
      return Promise.resolve();
    },
    pause: () => undefined,
    resume: () => undefined,
    commit: (offsets) => {
      commits.push(offsets);
      return Promise.resolve();
    },
    stop: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
  };
  const transport: Transport = {
    kind: 'kafka',
    consumer: () => consumer,
    producer: () => ({ send: () => Promise.resolve(), disconnect: () => Promise.resolve() }),
    ensureTopics: () => Promise.resolve(),
    endOffsets: () => Promise.resolve([]),
    committedOffsets: () => Promise.resolve([]),
    close: () => Promise.resolve(),
  };
  return { transport, callbacks: () => callbacks!, commits };
}

function record(offset: number): RawRecord {
  return {
    topic: 'in',
    partition: 0,
    offset: String(offset),
    key: null,
    value: Buffer.from(String(offset)),
    headers: {},
    timestamp: '0',
  };
}

const heartbeat = (): Promise<void> => Promise.resolve();

describe('createRecordSource across a rebalance', () => {
  it('drops a record of the old generation that was waiting at the full gate, untracked', async () => {
    const driven = drivenTransport();
    const source = createRecordSource(driven.transport, {
      groupId: 'g',
      topics: ['in'],
      maxInFlight: 1,
      resumeBelow: 0,
      commitIntervalMs: 60_000,
    });
    const seen: SourceRecord[] = [];
    source.records$.subscribe((item) => seen.push(item));
    await source.start();
    const consumer = driven.callbacks();

    // Generation 1: offset 5 fills the one-wide gate; offset 6 waits behind it.
    expect(await consumer.deliver(record(5), heartbeat)).toBe(true);
    let settled: boolean | undefined;
    const waiting = consumer.deliver(record(6), heartbeat).then((accepted) => (settled = accepted));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(settled).toBeUndefined();

    // The group rebalances; the new generation restarts partition 0 from its committed offset (5).
    consumer.onAssignment([{ topic: 'in', partition: 0 }]);
    // Offset 5 of the old generation finishes: a slot frees and offset 6 passes the gate. The
    // processor completes whatever it is handed.
    seen[0]!.ack.complete();
    const accepted = await waiting;
    for (const item of seen.slice(1)) item.ack.complete();
    // Nothing of the old generation may be committed against the new one: the new generation has
    // not processed offset 5 yet, so a commit of 7 would skip it.
    await source.commit();
    expect(driven.commits).toEqual([]);
    // The stale record was not handed to the processor, holds no slot, and its batch stops.
    expect(seen.map((s) => s.record.offset)).toEqual(['5']);
    expect(source.inFlight).toBe(0);
    expect(accepted).toBe(false);

    // The new generation's own records are tracked and committed as usual.
    expect(await consumer.deliver(record(5), heartbeat)).toBe(true);
    seen[1]!.ack.complete();
    expect(await consumer.deliver(record(6), heartbeat)).toBe(true);
    seen[2]!.ack.complete();
    await source.commit();
    expect(driven.commits).toEqual([[{ topic: 'in', partition: 0, offset: 7n }]]);
    await source.stop(100);
  });
});

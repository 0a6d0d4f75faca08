import { describe, expect, it } from 'vitest';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { ArrivalOrder } from '../../streams/runtime/arrival-order.js';
import type { RawRecord } from '../../streams/runtime/transport.js';

/** Consumes `topics` until `count` records arrived; returns their values in delivery order. */
async function consumeAll(
  transport: ReturnType<typeof createEmbeddedTransport>,
  topics: string[],
  count: number,
  whileConsuming?: () => Promise<void>,
): Promise<string[]> {
  const seen: string[] = [];
  const consumer = transport.consumer({ groupId: `g-${topics.join('-')}`, topics });
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  await consumer.start({
    deliver: async (record: RawRecord) => {
      seen.push(record.value!.toString());
      if (seen.length === count) done();
      // Yield now and then, as the runtime does, so a producer can append meanwhile.
      if (seen.length % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
      return true;
    },
    onAssignment: () => undefined,
  });
  await whileConsuming?.();
  await finished;
  await consumer.stop();
  return seen;
}

describe('the embedded consumer', () => {
  it('delivers the records of all its partitions and topics in the order they were appended', async () => {
    const transport = createEmbeddedTransport();
    transport.broker.createTopic({ topic: 'a', partitions: 3 });
    transport.broker.createTopic({ topic: 'b', partitions: 2 });
    const appended: string[] = [];
    // Uneven partitions: one holds far more than a consumer batch, so rounds must hold the others back.
    for (let i = 0; i < 400; i++) {
      const topic = i % 5 === 0 ? 'b' : 'a';
      const partition = i % 9 === 0 ? 1 : i < 300 ? 0 : 2;
      const value = `${topic}${partition}-${i}`;
      transport.broker.append(topic, [
        { key: null, value: Buffer.from(value), partition: topic === 'b' ? partition % 2 : partition },
      ]);
      appended.push(value);
    }
    expect(await consumeAll(transport, ['a', 'b'], appended.length)).toEqual(appended);
  });

  it('keeps append order while a producer is still appending', async () => {
    const transport = createEmbeddedTransport();
    transport.broker.createTopic({ topic: 'live', partitions: 6 });
    const appended: string[] = [];
    const produce = async (): Promise<void> => {
      for (let i = 0; i < 600; i++) {
        const value = `r${i}`;
        transport.broker.append('live', [{ key: `k${(i * 7919) % 101}`, value: Buffer.from(value) }]);
        appended.push(value);
        if (i % 13 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    };
    expect(await consumeAll(transport, ['live'], 600, produce)).toEqual(appended);
  });
});

describe('ArrivalOrder', () => {
  it('runs steps in the order they were queued, whatever order their inputs finish in', async () => {
    const order = new ArrivalOrder();
    const ran: number[] = [];
    const later = (value: number, ms: number): Promise<number> =>
      new Promise((resolve) => setTimeout(() => resolve(value), ms));
    const results = await Promise.all([
      order.run(later(1, 30), (v) => (ran.push(v), v * 10)),
      order.run(later(2, 1), (v) => (ran.push(v), v * 10)),
      order.run(later(3, 15), (v) => (ran.push(v), v * 10)),
    ]);
    expect(ran).toEqual([1, 2, 3]);
    expect(results).toEqual([10, 20, 30]);
  });

  it('holds an input that fails while it waits for its turn without an unhandled rejection', async () => {
    const order = new ArrivalOrder();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let finishFirst!: () => void;
      const first = order.run(new Promise<void>((resolve) => (finishFirst = resolve)), () => 'first');
      const waiting = order.run(Promise.reject(new Error('workers closed')), () => 'never');
      // Let Node look for unhandled rejections while the second input waits behind the first.
      await new Promise((resolve) => setTimeout(resolve, 20));
      finishFirst();
      await expect(first).resolves.toBe('first');
      await expect(waiting).rejects.toThrow('workers closed');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('rejects only the step whose input failed or that threw; the ones after it still run', async () => {
    const order = new ArrivalOrder();
    const ran: string[] = [];
    const failedInput = order.run(Promise.reject(new Error('analysis failed')), () => ran.push('never'));
    const throwing = order.run(Promise.resolve('b'), () => {
      throw new Error('refused');
    });
    const fine = order.run(Promise.resolve('c'), (v) => (ran.push(v), v));
    await expect(failedInput).rejects.toThrow('analysis failed');
    await expect(throwing).rejects.toThrow('refused');
    await expect(fine).resolves.toBe('c');
    expect(ran).toEqual(['c']);
  });
});

import { describe, expect, it } from 'vitest';
import { DEAD_LETTER_TOPIC, DLQ_HEADERS } from '../../streams/runtime/dead-letter-writer.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { startStage, type StageConfig } from '../../streams/runtime/run-stage.js';
import type { Sink } from '../../streams/runtime/sink.js';
import { StageError } from '../../streams/runtime/stage-error.js';
import type { RawRecord } from '../../streams/runtime/transport.js';

/**
 * The stage runtime on the embedded transport: the same code paths as on Kafka (watermarks, dead
 * letters, back-pressure, stop), fast and deterministic. The Kafka versions live in test/integration.
 */

class MemorySink implements Sink<string> {
  readonly items: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  constructor(
    readonly name = 'memory',
    private readonly behaviour: (item: string, attempt: number) => Promise<void> = () => Promise.resolve(),
  ) {}
  private readonly attempts = new Map<string, number>();
  async write(item: string): Promise<void> {
    const attempt = (this.attempts.get(item) ?? 0) + 1;
    this.attempts.set(item, attempt);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await this.behaviour(item, attempt);
      this.items.push(item);
    } finally {
      this.inFlight -= 1;
    }
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const decodeText = (record: RawRecord): string => {
  const text = record.value?.toString() ?? '';
  if (text.startsWith('poison')) throw new StageError('undecodable', `cannot read "${text}"`, 'decode');
  return text;
};

async function setup(partitions = 3, count = 300, value = (i: number) => `r${i}`) {
  const transport = createEmbeddedTransport();
  await transport.ensureTopics([
    { topic: 'in', partitions },
    { topic: DEAD_LETTER_TOPIC, partitions: 1 },
  ]);
  const producer = transport.producer();
  await producer.send(
    'in',
    Array.from({ length: count }, (_, i) => ({
      key: `k${i % 17}`,
      value: Buffer.from(value(i)),
      headers: { origin: 'test' },
    })),
  );
  return transport;
}

function baseConfig(sink: Sink<string>, overrides: Partial<StageConfig<string>> = {}): StageConfig<string> {
  return {
    name: 'echo',
    inputTopics: ['in'],
    decode: decodeText,
    process: (input) =>
      Array.from({ length: Number(input.value.slice(1)) % 3 }, (_, n) => ({
        sink: 'out',
        item: `${input.value}.${n}`,
      })),
    sinks: { out: sink },
    commitIntervalMs: 20,
    backoff: { baseMs: 1, capMs: 5 },
    log: () => undefined,
    ...overrides,
  };
}

async function waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function committed(transport: ReturnType<typeof createEmbeddedTransport>, group = 'neon.echo'): bigint[] {
  return transport.broker.endOffsets('in').map((_, p) => transport.broker.committedOffset(group, 'in', p) ?? -1n);
}

describe('startStage on the embedded transport', () => {
  it('fans out, writes every output once, and commits exactly to the end', async () => {
    const transport = await setup();
    const sink = new MemorySink();
    const stage = await startStage(transport, baseConfig(sink));
    const expected = Array.from({ length: 300 }, (_, i) =>
      Array.from({ length: i % 3 }, (_, n) => `r${i}.${n}`),
    ).flat();
    await waitFor(() => sink.items.length === expected.length && stage.stats().inFlight === 0);
    await stage.stop();
    await stage.done;
    expect([...sink.items].sort()).toEqual([...expected].sort());
    expect(committed(transport)).toEqual(transport.broker.endOffsets('in'));
    expect(stage.stats()).toMatchObject({ received: 300, completed: 300, deadLettered: 0 });
  });

  it('dead-letters poison with its original bytes and coordinates, and keeps going', async () => {
    const transport = await setup(2, 100, (i) => (i % 10 === 3 ? `poison-${i}` : `r${i}`));
    const sink = new MemorySink();
    const stage = await startStage(transport, baseConfig(sink));
    await waitFor(() => stage.stats().received === 100 && stage.stats().inFlight === 0);
    await stage.stop();
    const dead = transport.broker.read(DEAD_LETTER_TOPIC, 0, 0n);
    expect(dead.map((d) => d.value?.toString()).sort()).toEqual(
      Array.from({ length: 10 }, (_, n) => `poison-${n * 10 + 3}`).sort(),
    );
    for (const d of dead) {
      expect(d.headers[DLQ_HEADERS.errorCode]?.toString()).toBe('undecodable');
      expect(d.headers[DLQ_HEADERS.topic]?.toString()).toBe('in');
      expect(d.headers[DLQ_HEADERS.processor]?.toString()).toBe('echo');
      expect(d.headers.origin?.toString()).toBe('test');
      const original = transport.broker.read(
        'in',
        Number(d.headers[DLQ_HEADERS.partition]),
        BigInt(d.headers[DLQ_HEADERS.offset]!.toString()),
      )[0]!;
      expect(original.value).toEqual(d.value);
    }
    expect(committed(transport)).toEqual(transport.broker.endOffsets('in'));
  });

  it('never has more inputs in flight than the bound, and reaches it under a slow sink', async () => {
    const transport = await setup(3, 200);
    const sink = new MemorySink('slow', () => new Promise((resolve) => setTimeout(resolve, 2)));
    const stage = await startStage(transport, baseConfig(sink, { maxInFlight: 8, resumeBelow: 4 }));
    await waitFor(() => stage.stats().received === 200 && stage.stats().inFlight === 0, 30_000);
    await stage.stop();
    expect(stage.stats().maxInFlightObserved).toBe(8);
    expect(committed(transport)).toEqual(transport.broker.endOffsets('in'));
  });

  it('retries a sink outage until it recovers, without losing or dead-lettering anything', async () => {
    const transport = await setup(1, 30);
    const sink = new MemorySink('flaky', (_, attempt) =>
      attempt < 3 ? Promise.reject(new StageError('es_unavailable', 'down', 'flaky')) : Promise.resolve(),
    );
    const stage = await startStage(transport, baseConfig(sink));
    await waitFor(() => stage.stats().received === 30 && stage.stats().inFlight === 0);
    await stage.stop();
    expect(sink.items).toHaveLength(Array.from({ length: 30 }, (_, i) => i % 3).reduce((a, b) => a + b, 0));
    expect(stage.stats().deadLettered).toBe(0);
  });

  it('dead-letters one refused output under the input, naming the output', async () => {
    const transport = await setup(1, 3);
    const sink = new MemorySink('picky', (item) =>
      item === 'r2.1' ? Promise.reject(new StageError('es_document_rejected', 'mapping', 'picky')) : Promise.resolve(),
    );
    const stage = await startStage(
      transport,
      baseConfig(sink, {
        process: (input) =>
          Array.from({ length: Number(input.value.slice(1)) % 3 }, (_, n) => ({
            sink: 'out',
            item: `${input.value}.${n}`,
            id: `${input.value}.${n}`,
          })),
      }),
    );
    await waitFor(() => stage.stats().received === 3 && stage.stats().inFlight === 0);
    await stage.stop();
    const dead = transport.broker.read(DEAD_LETTER_TOPIC, 0, 0n);
    expect(dead).toHaveLength(1);
    expect(dead[0]!.value?.toString()).toBe('r2');
    expect(dead[0]!.headers[DLQ_HEADERS.outputId]?.toString()).toBe('r2.1');
    expect(dead[0]!.headers[DLQ_HEADERS.errorCode]?.toString()).toBe('es_document_rejected');
    expect(sink.items).toEqual(['r1.0', 'r2.0']);
  });

  it('dies on a fatal error without committing past the failed input', async () => {
    const transport = await setup(1, 50);
    const sink = new MemorySink('fatal', (item) =>
      item === 'r20.1' ? Promise.reject(new StageError('es_unauthorized', '401', 'fatal')) : Promise.resolve(),
    );
    const stage = await startStage(transport, baseConfig(sink));
    await expect(stage.done).rejects.toMatchObject({ code: 'es_unauthorized' });
    expect(committed(transport)[0]).toBeLessThanOrEqual(20n);
  });

  it('redelivers uncommitted work to the next run of the same group', async () => {
    const transport = await setup(1, 40);
    let gate: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (gate = resolve));
    const first = new MemorySink('first', (item) => (item.startsWith('r31.') ? blocked : Promise.resolve()));
    const stage1 = await startStage(transport, baseConfig(first, { shutdownTimeoutMs: 100 }));
    await waitFor(() => stage1.stats().received === 40);
    await stage1.stop();
    gate();
    const position = committed(transport)[0]!;
    expect(position).toBe(31n);
    const second = new MemorySink('second');
    const stage2 = await startStage(transport, baseConfig(second));
    await waitFor(() => stage2.stats().received === 9 && stage2.stats().inFlight === 0);
    await stage2.stop();
    expect(second.items).toContain('r31.0');
    expect(committed(transport)[0]).toBe(40n);
  });

  it('stopped without a drain, gives in-flight records up uncommitted: no dead letters, no failure', async () => {
    const transport = await setup(1, 20);
    // The processor waits on something the shutdown closes (a model, a client), which then refuses.
    let closeDependency!: () => void;
    const closed = new Promise<void>((resolve) => (closeDependency = resolve));
    const logged: string[] = [];
    const stage = await startStage(
      transport,
      baseConfig(new MemorySink(), {
        maxInFlight: 5,
        process: async () => {
          await closed;
          throw new StageError('processor_rejected', 'the dependency was closed', 'echo');
        },
        log: (level, message) => void logged.push(`${level} ${message}`),
      }),
    );
    await waitFor(() => stage.stats().inFlight === 5);
    await stage.stop(0);
    closeDependency();
    await stage.done;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(transport.broker.read(DEAD_LETTER_TOPIC, 0, 0n)).toEqual([]);
    // Nothing committed past the first record (0 or no commit at all): all 20 come back next run.
    expect(committed(transport)[0]).toBeLessThanOrEqual(0n);
    expect(stage.stats().deadLettered).toBe(0);
    expect(logged.filter((line) => line.startsWith('error'))).toEqual([]);
    expect(logged.filter((line) => line.includes('given up at stop'))).toHaveLength(5);
  });

  it('gives timers and I/O a turn while a CPU-heavy processor works through a backlog', async () => {
    // On Kafka a loop held for a whole fetched batch means no heartbeat: past the session timeout
    // the member is expelled and its uncommitted records are processed again elsewhere.
    const transport = await setup(3, 300);
    const sink = new MemorySink();
    const busy = (ms: number): void => {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        // a processor's synchronous work
      }
    };
    let last = performance.now();
    let longestGap = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 5);
    try {
      const stage = await startStage(
        transport,
        baseConfig(sink, {
          process: (input) => {
            busy(5);
            return [{ sink: 'out', item: input.value }];
          },
        }),
      );
      await waitFor(() => sink.items.length === 300 && stage.stats().inFlight === 0, 30_000);
      await stage.stop();
    } finally {
      clearInterval(ticker);
    }
    // 300 records × 5 ms = 1.5 s of work: held in one stretch, the timer would wait for all of it.
    expect(longestGap).toBeLessThan(500);
    expect(sink.items).toHaveLength(300);
  });
});

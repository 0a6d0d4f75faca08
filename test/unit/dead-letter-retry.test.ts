import { describe, expect, it } from 'vitest';
import { DEAD_LETTER_TOPIC, DLQ_HEADERS } from '../../streams/runtime/dead-letter-writer.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { startStage, type StageConfig } from '../../streams/runtime/run-stage.js';
import type { Sink } from '../../streams/runtime/sink.js';
import { StageError } from '../../streams/runtime/stage-error.js';
import type { RawRecord } from '../../streams/runtime/transport.js';

/**
 * A dead-letter write that fails during a broker outage is an outage like any sink's: the stage
 * waits and retries with its backoff, and the poison record's offset is committed only once its dead
 * letter is written. One poison record during an outage must not kill the stage.
 */

const POISON_AT = 4;

async function setup(count = 10) {
  const transport = createEmbeddedTransport();
  await transport.ensureTopics([
    { topic: 'in', partitions: 1 },
    { topic: DEAD_LETTER_TOPIC, partitions: 1 },
  ]);
  await transport.producer().send(
    'in',
    Array.from({ length: count }, (_, i) => ({
      key: `k${i}`,
      value: Buffer.from(i === POISON_AT ? 'poison' : `r${i}`),
    })),
  );
  return transport;
}

/** The dead-letter topic refuses the first `failures` appends, then accepts. */
function failDeadLetters(transport: ReturnType<typeof createEmbeddedTransport>, failures: number): () => number {
  let attempts = 0;
  const append = transport.broker.append.bind(transport.broker);
  transport.broker.append = (topic, records) => {
    if (topic === DEAD_LETTER_TOPIC) {
      attempts += 1;
      if (attempts <= failures) throw new Error('broker unavailable');
    }
    append(topic, records);
  };
  return () => attempts;
}

/** Every commit of the group, with whether the poison record's dead letter existed at that moment. */
function recordCommits(transport: ReturnType<typeof createEmbeddedTransport>): { offset: bigint; dead: boolean }[] {
  const seen: { offset: bigint; dead: boolean }[] = [];
  const commit = transport.broker.commit.bind(transport.broker);
  transport.broker.commit = (groupId, offsets) => {
    const dead = transport.broker.read(DEAD_LETTER_TOPIC, 0, 0n).length > 0;
    for (const o of offsets) seen.push({ offset: o.offset, dead });
    commit(groupId, offsets);
  };
  return seen;
}

const sink: Sink<string> = { name: 'out', write: () => Promise.resolve(), close: () => Promise.resolve() };

function config(overrides: Partial<StageConfig<string>> = {}): StageConfig<string> {
  return {
    name: 'echo',
    inputTopics: ['in'],
    decode: (record: RawRecord) => {
      const text = record.value?.toString() ?? '';
      if (text === 'poison') throw new StageError('undecodable', 'cannot read', 'decode');
      return text;
    },
    process: (input) => [{ sink: 'out', item: input.value }],
    sinks: { out: sink },
    commitIntervalMs: 5,
    backoff: { baseMs: 2, capMs: 10 },
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

describe('dead letters during a broker outage', () => {
  it('retries the dead-letter write until it succeeds, and commits the poison offset only after', async () => {
    const transport = await setup();
    const attempts = failDeadLetters(transport, 3);
    const commits = recordCommits(transport);
    let died: unknown;
    const stage = await startStage(transport, config());
    stage.done.catch((error: unknown) => (died = error));
    await waitFor(() => transport.broker.committedOffset('neon.echo', 'in', 0) === 10n || died !== undefined);
    expect(died).toBeUndefined();
    expect(attempts()).toBe(4);
    const dead = transport.broker.read(DEAD_LETTER_TOPIC, 0, 0n);
    expect(dead.map((d) => [d.value?.toString(), d.headers[DLQ_HEADERS.offset]?.toString()])).toEqual([
      ['poison', String(POISON_AT)],
    ]);
    expect(stage.stats()).toMatchObject({ received: 10, deadLettered: 1 });
    // No position past the poison record was committed before its dead letter was written.
    expect(commits.filter((c) => c.offset > BigInt(POISON_AT) && !c.dead)).toEqual([]);
    await stage.stop();
    await expect(stage.done).resolves.toBeUndefined();
  });

  it('keeps waiting while the outage lasts; stopped, it gives the record up uncommitted for redelivery', async () => {
    const transport = await setup();
    failDeadLetters(transport, Number.POSITIVE_INFINITY);
    const stage = await startStage(transport, config({ shutdownTimeoutMs: 50 }));
    await waitFor(() => stage.stats().received === 10 && stage.stats().inFlight === 1);
    // Well past many retries: still alive, the poison record still held, nothing committed past it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stage.stats().inFlight).toBe(1);
    expect(transport.broker.committedOffset('neon.echo', 'in', 0) ?? 0n).toBeLessThanOrEqual(BigInt(POISON_AT));
    await stage.stop();
    await expect(stage.done).resolves.toBeUndefined();
    expect(transport.broker.committedOffset('neon.echo', 'in', 0)).toBe(BigInt(POISON_AT));
    expect(transport.broker.read(DEAD_LETTER_TOPIC, 0, 0n)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { startProductRuntime } from '../../bin/commands/product-runtime.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { tailTopic } from '../../streams/runtime/topic-tail.js';
import { TAIL_GROUP_PREFIX, TOPICS } from '../../streams/pipeline/topics.js';
import type { ConsumerCallbacks, Transport } from '../../streams/runtime/transport.js';

/**
 * A follower (a topic tail) whose consumer fails for good — on a cluster, a tail group or a topic
 * its ACLs deny — after it had caught up must not die silently: the state it feeds would go stale
 * while the process looked healthy. Its stage stops and is dead, the API's followers count as dead,
 * both show on /livez and end `neon pipeline`; a later catch-up fails at once instead of timing out.
 */

/** The embedded transport, with a handle to fail any tail's consumer, by the tail's purpose. */
function failingTails(): { transport: Transport; fail: (purpose: string, error: Error) => void } {
  const inner = createEmbeddedTransport();
  const crashes = new Map<string, (error: Error) => void>();
  const transport: Transport = {
    kind: inner.kind,
    consumer: (options) => {
      const consumer = inner.consumer(options);
      if (!options.groupId.startsWith(TAIL_GROUP_PREFIX)) return consumer;
      const purpose = options.groupId.slice(TAIL_GROUP_PREFIX.length).split('.')[0]!;
      return {
        start: (callbacks: ConsumerCallbacks) => {
          crashes.set(purpose, (error) => callbacks.onCrash?.(error));
          return consumer.start(callbacks);
        },
        pause: () => consumer.pause(),
        resume: () => consumer.resume(),
        commit: (offsets) => consumer.commit(offsets),
        stop: () => consumer.stop(),
        disconnect: () => consumer.disconnect(),
      };
    },
    producer: () => inner.producer(),
    ensureTopics: (specs) => inner.ensureTopics(specs),
    endOffsets: (topic) => inner.endOffsets(topic),
    committedOffsets: (groupId, topic) => inner.committedOffsets(groupId, topic),
    close: () => inner.close(),
  };
  const fail = (purpose: string, error: Error): void => {
    const crash = crashes.get(purpose);
    if (!crash) throw new Error(`no tail "${purpose}" started (have ${[...crashes.keys()].join(', ')})`);
    crash(error);
  };
  return { transport, fail };
}

const denied = (): Error => new Error('Not authorized to access group: Group authorization failed');

describe('a tail that fails after catching up', () => {
  it('rejects done and fails a catch-up at once, with the topic and the cause', async () => {
    const { transport, fail } = failingTails();
    await transport.ensureTopics([{ topic: 't', partitions: 2 }]);
    const tail = await tailTopic(transport, 't', () => undefined, { purpose: 'test', catchUpTimeoutMs: 60_000 });
    await tail.caughtUp;
    fail('test', denied());
    await expect(tail.done).rejects.toThrow('following t failed: Not authorized to access group');
    const started = Date.now();
    await expect(tail.catchUp()).rejects.toThrow('following t failed');
    expect(Date.now() - started).toBeLessThan(1000);
    await tail.stop();
  });

  it('resolves done when stopped', async () => {
    const { transport } = failingTails();
    await transport.ensureTopics([{ topic: 't', partitions: 1 }]);
    const tail = await tailTopic(transport, 't', () => undefined, { purpose: 'test' });
    await tail.stop();
    await expect(tail.done).resolves.toBeUndefined();
  });
});

describe('a process whose follower fails', () => {
  const start = async (transport: Transport) =>
    startProductRuntime({
      mode: 'cluster',
      transport,
      datastore: new EmbeddedDatastore('neon'),
      config: loadProductConfig({ NEON_EMBEDDER: 'hashing' }),
      // dedupe follows its own output; extract follows the spike alerts (its targets).
      stages: ['dedupe', 'extract'],
      api: null,
      metricsPort: null,
      say: () => undefined,
      log: () => undefined,
    });

  it("stops the stage whose state it fed, and the stage is dead: /livez and the pipeline's end say why", async () => {
    const { transport, fail } = failingTails();
    const runtime = await start(transport);
    try {
      expect((await runtime.health()).live).toBe(true);
      fail('dedupe-window', denied());
      await expect(runtime.pipeline.done).rejects.toThrow(`following ${TOPICS.uniqueChunks} failed`);
      expect(runtime.pipeline.ended()).toEqual(['dedupe']);
      const health = await runtime.health();
      expect(health.live).toBe(false);
      expect(health.problems).toContain('stage dedupe stopped');
    } finally {
      await runtime.stop();
    }
  });

  it('counts a failed follower of the spike alerts as dead too', async () => {
    const { transport, fail } = failingTails();
    const runtime = await start(transport);
    try {
      fail('spike-feed', denied());
      await expect(runtime.pipeline.done).rejects.toThrow(`following ${TOPICS.spikes} failed`);
      expect(runtime.pipeline.lostFollows()).toEqual([TOPICS.spikes]);
      expect(runtime.pipeline.ended()).toEqual([]);
      const health = await runtime.health();
      expect(health.live).toBe(false);
      expect(health.problems).toContain(`no longer following ${TOPICS.spikes}`);
    } finally {
      await runtime.stop();
    }
  });
});

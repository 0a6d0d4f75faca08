import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { startProductRuntime, type ProductRuntime } from '../../bin/commands/product-runtime.js';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { createEmbeddedTransport, EmbeddedBroker } from '../../streams/embedded/embedded-transport.js';
import { INTAKE_PROCESS, STAGE_CATALOG, type StageName } from '../../streams/pipeline/stage-catalog.js';
import { TAIL_GROUP_PREFIX, TOPICS } from '../../streams/pipeline/topics.js';
import type { Transport } from '../../streams/runtime/transport.js';
import { NEWS_STORIES } from '../fixtures/news-stories.js';

/**
 * What each processor really touches, observed: every stage runs in its own "process" (its own
 * transport onto one shared broker, as separate Deployments share one Kafka), articles flow through
 * all of them, and each transport records the groups it consumed with, the topics it read, followed,
 * wrote, created or described. The catalog — from which the Kubernetes ACLs are generated and
 * checked — must say exactly this, or a processor would be denied on a cluster (or allowed more).
 */
interface Usage {
  groupReads: Map<string, Set<string>>;
  follows: Set<string>;
  writes: Set<string>;
  described: Set<string>;
}

function recording(inner: Transport): { transport: Transport; usage: Usage } {
  const usage: Usage = { groupReads: new Map(), follows: new Set(), writes: new Set(), described: new Set() };
  const transport: Transport = {
    kind: inner.kind,
    consumer: (options) => {
      if (options.groupId.startsWith(TAIL_GROUP_PREFIX)) for (const t of options.topics) usage.follows.add(t);
      else {
        const topics = usage.groupReads.get(options.groupId) ?? new Set<string>();
        for (const t of options.topics) topics.add(t);
        usage.groupReads.set(options.groupId, topics);
      }
      return inner.consumer(options);
    },
    producer: () => {
      const producer = inner.producer();
      return {
        send: (topic, records) => {
          usage.writes.add(topic);
          return producer.send(topic, records);
        },
        disconnect: () => producer.disconnect(),
      };
    },
    ensureTopics: (specs) => {
      for (const spec of specs) usage.described.add(spec.topic);
      return inner.ensureTopics(specs);
    },
    endOffsets: (topic) => {
      usage.described.add(topic);
      return inner.endOffsets(topic);
    },
    committedOffsets: (groupId, topic) => inner.committedOffsets(groupId, topic),
    close: () => inner.close(),
  };
  return { transport, usage };
}

const NOW = Date.UTC(2025, 3, 1);
const broker = new EmbeddedBroker();
const datastore = new EmbeddedDatastore('neon');
const processes = new Map<StageName, { runtime: ProductRuntime; usage: Usage }>();
let intakeUsage: Usage;
let hooks: Server;

beforeAll(async () => {
  hooks = createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/alerts`;
  const config = loadProductConfig({
    NEON_EMBEDDER: 'hashing',
    NEON_SPIKE_RULES: 'day',
    NEON_SPIKE_DAY_MIN: '1',
    NEON_SPIKE_DAY_STD: '0',
    NEON_WEBHOOK_URLS: hookUrl,
    NEON_WEBHOOK_SECRET: 'a-webhook-secret-of-some-length',
    // The receiver is on loopback, which webhooks may reach only when the operator allows it.
    NEON_FETCH_ALLOW: '127.0.0.1',
  });
  // Downstream first, like the pipeline starts them, each on its own transport.
  for (const descriptor of [...STAGE_CATALOG].reverse()) {
    const { transport, usage } = recording(createEmbeddedTransport(broker));
    const runtime = await startProductRuntime({
      mode: 'cluster',
      transport,
      datastore,
      config,
      stages: [descriptor.name],
      // The query Deployment also serves the API; the processors serve nothing.
      api: descriptor.name === 'query' ? { port: 0 } : null,
      metricsPort: null,
      say: () => undefined,
      log: () => undefined,
    });
    processes.set(descriptor.name, { runtime, usage });
  }
  const intake = recording(createEmbeddedTransport(broker));
  intakeUsage = intake.usage;
  const publisher = new TransportArticlePublisher(intake.transport.producer(), { processor: 'intake' });
  for (const input of NEWS_STORIES) await publisher.publish(normalizeArticle(input, NOW));
  await publisher.reject(Buffer.from('{'), { reason: 'invalid_json', message: 'not JSON' } as never, 'test');
  const query = processes.get('query')!.runtime;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const stages = await query.pipeline.progress();
    const interactions = await datastore.count('interactions');
    if ((stages.every((s) => s.lag === null || s.lag === 0) && interactions > 0) || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // One question through neon.queries, so the query stage writes its answer.
  await fetch(`${query.api!.url}/v1/search?q=harbour&date=2025-03-03`);
}, 90_000);

afterAll(async () => {
  for (const { runtime } of processes.values()) await runtime.stop();
  await new Promise((resolve) => hooks.close(resolve));
});

describe('each processor touches exactly the topics the catalog gives it', () => {
  it.each(STAGE_CATALOG.map((d) => [d.name, d] as const))('%s', (name, descriptor) => {
    const { usage } = processes.get(name)!;
    // Its own group, on exactly its inputs.
    expect([...usage.groupReads.keys()]).toEqual([descriptor.group]);
    expect([...usage.groupReads.get(descriptor.group)!].sort()).toEqual([...descriptor.reads].sort());
    expect([...usage.follows].sort(), 'followed').toEqual([...descriptor.follows].sort());
    // Nothing written outside its outputs; described (created if missing, offsets read) only what it uses.
    const allowed = new Set(
      descriptor.describesAll
        ? Object.values(TOPICS)
        : [...descriptor.reads, ...descriptor.follows, ...descriptor.writes],
    );
    expect(
      [...usage.writes].filter((t) => !descriptor.writes.includes(t)),
      'written',
    ).toEqual([]);
    expect(
      [...usage.described].filter((t) => !allowed.has(t)),
      'described',
    ).toEqual([]);
  });

  it('the pipeline actually ran through every stage (the observation is not empty)', () => {
    const wrote = (name: StageName) => processes.get(name)!.usage.writes;
    expect(wrote('markup')).toEqual(new Set([TOPICS.marked, TOPICS.registry]));
    expect(wrote('chunk')).toEqual(new Set([TOPICS.chunks]));
    expect(wrote('dedupe')).toEqual(new Set([TOPICS.uniqueChunks, TOPICS.mentions]));
    expect(wrote('extract')).toEqual(new Set([TOPICS.interactions]));
    expect(wrote('spikes')).toContain(TOPICS.spikeState);
  });

  it('intake writes the articles and refusals, and reads nothing', () => {
    expect(intakeUsage.groupReads.size).toBe(0);
    expect(intakeUsage.follows.size).toBe(0);
    expect([...intakeUsage.writes].sort()).toEqual([...INTAKE_PROCESS.writes].sort());
  });
});

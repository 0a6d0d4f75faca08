import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { SpikeEvent } from '../../processors/spikes/spike-book.js';
import { DAY_MS } from '../../processors/spikes/spike-rule.js';
import type { SpikeAlert } from '../../schemas/records.generated.js';
import { registerSpikeRoutes } from '../../service/spike-routes.js';
import { hubFeed, SpikeHub, type SpikeFeed } from '../../streams/views/spike-feed.js';
import { DAY0 } from './spike-fixtures.js';

/**
 * A client resuming with a Last-Event-ID so far back that the backlog alone overflows the stream's
 * buffer bound: the route must end the stream (the client reconnects from the last id it got) and
 * hold no subscription, rather than throw half-way and leave a connection that never ends.
 */

function alert(entity: string, day: number): SpikeAlert {
  return {
    id: `spike:${entity}:day:2025-01-09`,
    entity_id: entity,
    entity_name: entity.slice(2),
    entity_type: 'LOCATION',
    granularity: 'DAY',
    window_start: DAY0 + (day - 2) * DAY_MS,
    window_end: DAY0 + (day + 1) * DAY_MS,
    observed: 9,
    baseline_mean: 2,
    baseline_std: 1,
    threshold: 3,
    score: 7,
    article_ids: ['a1'],
    // A few kilobytes per event, so that a handful of them is well past the small bound below.
    urls: Array.from({ length: 40 }, (_, i) => `https://news.example/${entity}/${'x'.repeat(80)}/${i}`),
    detected_at: DAY0 + day * DAY_MS,
    state: 'STARTED',
    episode_start: DAY0 + 3 * DAY_MS,
    rule: 'test',
    baseline_buckets: 3,
    counts: [{ bucket_start: DAY0 + day * DAY_MS, count: 6 }],
    first_interactions: [],
    method: 'neon',
    significance: 2,
    articles: 3,
  };
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** A feed that counts its live subscriptions. */
function countingFeed(hub: SpikeHub): { feed: SpikeFeed; subscribers: () => number } {
  const inner = hubFeed(hub);
  let subscribers = 0;
  const feed: SpikeFeed = {
    ...inner,
    subscribe(listener: (event: SpikeEvent) => void) {
      subscribers += 1;
      const unsubscribe = inner.subscribe(listener);
      let done = false;
      return () => {
        if (!done) subscribers -= 1;
        done = true;
        unsubscribe();
      };
    },
  };
  return { feed, subscribers: () => subscribers };
}

/** Reads the whole body; rejects if it has not ended within `ms`. */
async function readToEnd(response: Response, ms: number): Promise<string> {
  const reader = response.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), Math.max(0, left)));
    const chunk = await Promise.race([reader.read(), timeout]);
    if (chunk === 'timeout') {
      await reader.cancel();
      throw new Error(`stream still open after ${ms} ms (read ${text.length} characters)`);
    }
    if (chunk.done) return text;
    text += decoder.decode(chunk.value, { stream: true });
  }
}

async function until(predicate: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('spike stream resumed past its buffer bound', () => {
  it('ends the stream cleanly, with the events sent so far, and leaves no subscription', async () => {
    const hub = new SpikeHub();
    for (let i = 0; i < 200; i++) hub.apply(alert(`e-place${i}`, 3));
    const { feed, subscribers } = countingFeed(hub);
    const errors: unknown[] = [];
    app = Fastify();
    app.setErrorHandler((error, _request, reply) => {
      errors.push(error);
      return reply.code(500).send();
    });
    // Far below the backlog (200 events of a few kB): the replay itself overflows.
    registerSpikeRoutes(app, { feed, heartbeatMs: 20, maxBufferedBytes: 1024 });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });

    const response = await fetch(`${base}/v1/spikes/stream`, { headers: { 'last-event-id': '0' } });
    expect(response.status).toBe(200);
    const body = await readToEnd(response, 3000);
    const ids = [...body.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    // Some of the backlog went out, in order from the resume point, but not all of it.
    expect(ids[0]).toBe(1);
    expect(ids.length).toBeLessThan(200);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    await until(() => subscribers() === 0);
    expect(errors).toEqual([]);

    // A resume from the last id received continues where the cut-off stopped.
    const again = await fetch(`${base}/v1/spikes/stream`, { headers: { 'last-event-id': String(ids.at(-1)) } });
    const next = [...(await readToEnd(again, 3000)).matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(next[0]).toBe(ids.at(-1)! + 1);
    await until(() => subscribers() === 0);
  });

  it('a live client within the bound keeps its subscription until it disconnects', async () => {
    const hub = new SpikeHub();
    for (let i = 0; i < 3; i++) hub.apply(alert(`e-place${i}`, 3));
    const { feed, subscribers } = countingFeed(hub);
    app = Fastify();
    registerSpikeRoutes(app, { feed, heartbeatMs: 20 });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const controller = new AbortController();
    const response = await fetch(`${base}/v1/spikes/stream`, {
      headers: { 'last-event-id': '0' },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    await until(() => subscribers() === 1);
    controller.abort();
    await until(() => subscribers() === 0);
  });
});

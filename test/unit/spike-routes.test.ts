import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../processors/spikes/spike-rule.js';
import type { SpikeAlert } from '../../schemas/records.generated.js';
import { BearerTokens } from '../../processors/access/bearer-tokens.js';
import { registerSpikeRoutes } from '../../service/spike-routes.js';
import { hubFeed, SpikeHub } from '../../streams/views/spike-feed.js';
import { DAY0 } from './spike-fixtures.js';

function alert(entity: string, state: SpikeAlert['state'], day: number): SpikeAlert {
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
    urls: ['https://news.example/a1'],
    detected_at: DAY0 + day * DAY_MS,
    state,
    episode_start: DAY0 + 3 * DAY_MS,
    rule: '3-day rolling sum > mean + 1 std of the previous 28 (at least 3)',
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

async function serve(hub: SpikeHub, tokens?: string[]): Promise<string> {
  app = Fastify();
  registerSpikeRoutes(app, {
    feed: hubFeed(hub),
    ...(tokens ? { tokens: new BearerTokens(tokens) } : {}),
    heartbeatMs: 50,
  });
  return app.listen({ port: 0, host: '127.0.0.1' });
}

/** Reads server-sent events from a live response until `count` events arrived. */
async function readEvents(response: Response, count: number): Promise<{ id: string; data: SpikeAlert }[]> {
  const reader = response.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const decoder = new TextDecoder();
  let buffer = '';
  const events: { id: string; data: SpikeAlert }[] = [];
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const lines = Object.fromEntries(
        block
          .split('\n')
          .filter((l) => !l.startsWith(':') && l.includes(': '))
          .map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]),
      );
      if (lines['event'] === 'spike') events.push({ id: lines['id']!, data: JSON.parse(lines['data']!) as SpikeAlert });
    }
  }
  await reader.cancel();
  return events;
}

describe('spike routes', () => {
  it('lists current and past spikes with their drill-down, times in ISO 8601', async () => {
    const hub = new SpikeHub();
    hub.apply(alert('e-goma', 'STARTED', 3));
    hub.apply({ ...alert('e-kyiv', 'STARTED', 3), id: 'spike:e-kyiv:day:2025-01-09' });
    hub.apply({ ...alert('e-kyiv', 'ENDED', 6), id: 'spike:e-kyiv:day:2025-01-09' });
    const base = await serve(hub);

    const all = (await (await fetch(`${base}/v1/spikes`)).json()) as { spikes: Record<string, unknown>[] };
    expect(all.spikes.map((s) => [s['entity_id'], s['open']])).toEqual([
      ['e-goma', true],
      ['e-kyiv', false],
    ]);
    expect(all.spikes[0]).toMatchObject({
      started_at: '2025-01-09T00:00:00.000Z',
      ended_at: null,
      latest: {
        state: 'STARTED',
        window_end: '2025-01-10T00:00:00.000Z',
        urls: ['https://news.example/a1'],
        counts: [{ bucket_start: '2025-01-09T00:00:00.000Z', count: 6 }],
      },
    });
    const open = (await (await fetch(`${base}/v1/spikes?state=open`)).json()) as { spikes: unknown[] };
    expect(open.spikes).toHaveLength(1);
    const one = (await (await fetch(`${base}/v1/spikes/spike:e-kyiv:day:2025-01-09`)).json()) as {
      states: { state: string }[];
    };
    expect(one.states.map((s) => s.state)).toEqual(['STARTED', 'ENDED']);
    expect((await fetch(`${base}/v1/spikes/nope`)).status).toBe(404);
    const bad = await fetch(`${base}/v1/spikes?state=sideways&limit=0&colour=red`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/state.*limit|limit.*state/s);
  });

  it("serves a day's digest: stories ranked, within the budget, the rest with all=true", async () => {
    const hub = new SpikeHub({}, { perDay: 2, perHour: 3, minSignificance: 1 });
    const story = (entity: string, significance: number, articles: string[]): SpikeAlert => ({
      ...alert(entity, 'STARTED', 3),
      id: `spike:${entity}:day:2025-01-09`,
      method: 'surprise',
      significance,
      article_ids: articles,
    });
    hub.apply(story('e-goma', 4, ['g1', 'g2', 'g3']));
    hub.apply(story('e-m23', 3, ['g1', 'g2', 'g3']));
    hub.apply(story('e-kyiv', 2, ['k1', 'k2', 'k3']));
    hub.apply(story('e-lima', 1.5, ['l1', 'l2', 'l3']));
    hub.apply(story('e-ltd', 9, ['x1', 'x2', 'x3']));
    const base = await serve(hub);
    type Digest = {
      date: string;
      stories: { entity_name: string; rank: number; members: unknown[] }[];
      more: unknown[];
    };
    const digest = (await (await fetch(`${base}/v1/spikes/digest?date=2025-01-09`)).json()) as Digest;
    expect(digest.date).toBe('2025-01-09');
    expect(digest.stories.map((s) => [s.rank, s.entity_name, s.members.length])).toEqual([
      [1, 'goma', 2],
      [2, 'kyiv', 1],
    ]);
    expect(digest.more).toHaveLength(1);
    const all = (await (await fetch(`${base}/v1/spikes/digest?date=2025-01-09&all=true`)).json()) as Digest;
    expect(all.more).toHaveLength(2); // lima beyond the budget, and "ltd", a generic word
    const latest = (await (await fetch(`${base}/v1/spikes/digest`)).json()) as Digest;
    expect(latest.date).toBe('2025-01-09');
    expect((await fetch(`${base}/v1/spikes/digest?date=yesterday`)).status).toBe(400);
  });

  it('streams new alert states as server-sent events and resumes after Last-Event-ID', async () => {
    const hub = new SpikeHub();
    hub.apply(alert('e-goma', 'STARTED', 3));
    const base = await serve(hub);
    const response = await fetch(`${base}/v1/spikes/stream`);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reading = readEvents(response, 2);
    // Give the subscription a moment, then publish two new states and a repeat.
    await new Promise((resolve) => setTimeout(resolve, 100));
    hub.apply(alert('e-goma', 'ONGOING', 3));
    hub.apply(alert('e-goma', 'ONGOING', 3));
    hub.apply(alert('e-goma', 'ENDED', 5));
    const events = await reading;
    expect(events.map((e) => [e.id, e.data.state])).toEqual([
      ['2', 'ONGOING'],
      ['3', 'ENDED'],
    ]);
    expect(events[1]!.data.window_end).toBe('2025-01-12T00:00:00.000Z');

    const resumed = await fetch(`${base}/v1/spikes/stream`, { headers: { 'last-event-id': '1' } });
    expect((await readEvents(resumed, 2)).map((e) => e.id)).toEqual(['2', '3']);
  });

  it('wants an API key when keys are configured, in the header or (for the stream) the query', async () => {
    const hub = new SpikeHub();
    const base = await serve(hub, ['k-123456']);
    expect((await fetch(`${base}/v1/spikes`)).status).toBe(401);
    expect((await fetch(`${base}/v1/spikes`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${base}/v1/spikes`, { headers: { authorization: 'Bearer k-123456' } })).status).toBe(200);
    expect((await fetch(`${base}/v1/spikes?access_token=k-123456`)).status).toBe(401);
    const stream = await fetch(`${base}/v1/spikes/stream?access_token=k-123456`);
    expect(stream.status).toBe(200);
    await stream.body!.cancel();
  });
});

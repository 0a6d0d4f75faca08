import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import { parseSearchRequest } from '../../processors/query/search-request.js';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { startProductRuntime, type ProductRuntime } from '../../bin/commands/product-runtime.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { STAGE_NAMES } from '../../streams/pipeline/stage-catalog.js';
import { NEWS_STORIES } from '../fixtures/news-stories.js';

/**
 * The whole product in one process, as `neon start` runs it, on the embedded transport and the
 * embedded datastore (with the test-only hashing embedder and the offline extractor): articles in,
 * and everything a user sees out — indexed chunks and interactions, a caught-up pipeline, the
 * entity directory, answers with citations over HTTP, and the status document.
 */
const NOW = Date.UTC(2025, 3, 1);
let runtime: ProductRuntime;

beforeAll(async () => {
  const transport = createEmbeddedTransport();
  runtime = await startProductRuntime({
    mode: 'embedded',
    transport,
    datastore: new EmbeddedDatastore('neon'),
    config: loadProductConfig({ NEON_EMBEDDER: 'hashing', NEON_SPIKE_RULES: 'day' }),
    api: { port: 0 },
    metricsPort: null,
    say: () => undefined,
    log: () => undefined,
  });
  const publisher = new TransportArticlePublisher(transport.producer());
  for (const input of NEWS_STORIES) await publisher.publish(normalizeArticle(input, NOW));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const stages = await runtime.pipeline.progress();
    const busy = stages.filter((s) => s.running && s.lag !== 0);
    const interactions = await runtime.pipeline.retriever.datastore.count('interactions');
    if ((busy.length === 0 && interactions > 0) || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 60_000);

afterAll(async () => {
  await runtime.stop();
});

describe('the product on the embedded transport and datastore', () => {
  it('runs every stage and catches up: nothing left on any input, chunks and interactions searchable', async () => {
    const stages = await runtime.pipeline.progress();
    expect(stages.map((s) => s.stage)).toEqual([...STAGE_NAMES]);
    for (const stage of stages.filter((s) => s.running)) expect(stage.lag, stage.stage).toBe(0);
    // Webhooks run only when endpoints are configured.
    expect(stages.find((s) => s.stage === 'webhooks')).toMatchObject({ running: false, lag: null });
    const datastore = runtime.pipeline.retriever.datastore;
    // Two of the seven stories are near-copies: their chunks merge into the originals.
    const uniqueChunks = await datastore.count('chunks');
    expect(uniqueChunks).toBeGreaterThan(0);
    expect(await datastore.count('interactions')).toBeGreaterThan(uniqueChunks);
    expect(runtime.pipeline.directory.search('lindqvist', 5).map((e) => e.name)).toContain('Maria Lindqvist');
  });

  it('answers over HTTP with citations to the article, links the question, and reports its status', async () => {
    const base = runtime.api!.url;
    const ask = (await (
      await fetch(
        `${base}/v1/ask?q=${encodeURIComponent('Maria Lindqvist harbour bridge')}&date=2025-03-03&store=both&k=5`,
      )
    ).json()) as {
      entities: { id: string }[];
      citations: { n: number; url: string | null }[];
      items: { kind: string; url: string | null }[];
    };
    expect(ask.entities.map((e) => e.id)).toContain('e-maria-lindqvist');
    expect(ask.citations.length).toBeGreaterThan(0);
    // The harbour story or its syndicated copy (whichever survived dedupe) is cited first.
    expect(ask.citations[0]!.url).toMatch(/gbg-tribune|nordic-wire/);
    for (const item of ask.items) expect(item.url).not.toBeNull();

    const status = (await (await fetch(`${base}/v1/status`)).json()) as {
      mode: string;
      datastores: { chunks: number; interactions: number };
      entities: number;
      embedder: string;
      extractor: string;
    };
    expect(status).toMatchObject({ mode: 'embedded', embedder: 'hashing-test-only' });
    expect(status.extractor).toMatch(/offline/);
    expect(status.datastores.chunks).toBe(await runtime.pipeline.retriever.datastore.count('chunks'));
    expect(status.entities).toBe(runtime.pipeline.directory.size);

    const entities = (await (await fetch(`${base}/v1/entities?q=lindq`)).json()) as { entities: { id: string }[] };
    expect(entities.entities[0]!.id).toBe('e-maria-lindqvist');
    const mentions = (await (
      await fetch(`${base}/v1/entities/e-maria-lindqvist/mentions?from=2025-01-01&to=2025-04-01`)
    ).json()) as { buckets: { start: string; count: number }[] };
    expect(mentions.buckets.reduce((n, b) => n + b.count, 0)).toBeGreaterThan(0);
    expect((await fetch(`${base}/v1/entities/e-nobody`)).status).toBe(404);
    expect(
      (await fetch(`${base}/v1/entities/e-x/mentions?granularity=hour&from=2024-01-01&to=2025-01-01`)).status,
    ).toBe(400);
  });

  it('answers the Kafka-style query stage and the retriever the same way', async () => {
    const parsed = parseSearchRequest({ q: 'Reykjavik Open chess', k: 3, store: 'chunks', strategy: 'generic' }, NOW);
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    const { items } = await runtime.pipeline.retriever.search(parsed.request);
    expect(items[0]!.text).toContain('Reykjavik');
  });

  it('records freshness per datastore, request latency per route, and is live and ready', async () => {
    const metrics = await runtime.registry.getMetricsAsJSON();
    const samples = (name: string) => metrics.find((m) => m.name === name)?.values ?? [];
    const count = (name: string, labels: Record<string, string>) =>
      samples(name).find(
        (v) =>
          (v as { metricName?: string }).metricName === `${name}_count` &&
          Object.entries(labels).every(([k, value]) => v.labels[k] === value),
      )?.value ?? 0;
    // Every acknowledged write counts (a duplicate's merged provenance rewrites its original).
    expect(count('neon_freshness_seconds', { datastore: 'chunks' })).toBeGreaterThanOrEqual(
      await runtime.pipeline.retriever.datastore.count('chunks'),
    );
    expect(count('neon_freshness_seconds', { datastore: 'interactions' })).toBeGreaterThan(0);
    expect(count('neon_http_request_seconds', { route: '/v1/ask', method: 'GET', status: '2xx' })).toBeGreaterThan(0);
    expect(count('neon_http_request_seconds', { route: '/v1/entities/:id', status: '4xx' })).toBeGreaterThan(0);
    expect(await runtime.health()).toEqual({ live: true, ready: true, problems: [] });
  });
});

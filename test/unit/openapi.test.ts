import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { startProductRuntime, type ProductRuntime } from '../../bin/commands/product-runtime.js';
import { openApiDocument } from '../../service/openapi.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { topicRecord } from '../../streams/runtime/record-codec.js';
import { TOPICS } from '../../streams/pipeline/topics.js';
import { NEWS_STORIES } from '../fixtures/news-stories.js';
import { mentionsOn } from './spike-fixtures.js';

/**
 * The OpenAPI document is generated from the routes' zod schemas. Here it is checked three ways on
 * the product as `neon start` runs it (embedded transport and datastore, every stage, the API with
 * intake): it is valid OpenAPI 3.1; it lists exactly the routes the server registers, with their
 * methods; and real answers of the server — retrieval, answers, entities, status, extraction
 * targets, intake, spikes from the real detector, the digest, the event stream and errors — fit the
 * schemas it documents for them.
 */

// ajv-formats is CommonJS: under ESM its plugin is the default export's `default`.
const addFormats = addFormatsModule.default;

type Json = Record<string, unknown>;
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Json }> }> }>>;
  components: { schemas: Record<string, Json> };
}

const NOW = Date.UTC(2025, 3, 1);
const INTAKE_TOKEN = 'openapi-test-intake-token';
/** A burst after four quiet weeks: the real spike detector opens a spike on it. */
const SPIKING = 'e-openapi-burst';

let runtime: ProductRuntime;
let base: string;
let served: OpenApiDocument;
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const validators = new Map<string, ValidateFunction>();

beforeAll(async () => {
  const transport = createEmbeddedTransport();
  const publisher = new TransportArticlePublisher(transport.producer());
  runtime = await startProductRuntime({
    mode: 'embedded',
    transport,
    datastore: new EmbeddedDatastore('neon'),
    // NEON's rule: its STARTED state comes at the mention that crosses the threshold.
    config: loadProductConfig({ NEON_EMBEDDER: 'hashing', NEON_SPIKE_RULES: 'day', NEON_SPIKE_METHOD: 'neon' }),
    api: { port: 0 },
    metricsPort: null,
    intake: { publisher, tokens: [INTAKE_TOKEN] },
    say: () => undefined,
    log: () => undefined,
  });
  base = runtime.api!.url;
  for (const input of NEWS_STORIES) await publisher.publish(normalizeArticle(input, NOW));
  const caughtUp = async () => {
    const stages = await runtime.pipeline.progress();
    return stages.every((s) => !s.running || s.lag === 0);
  };
  await waitFor(
    async () => (await caughtUp()) && (await runtime.pipeline.retriever.datastore.count('interactions')) > 0,
  );
  // Mentions after the stories' own (March 2025), so the detector's clock does not call them late.
  const mentions = [
    ...Array.from({ length: 30 }, (_, day) => mentionsOn(SPIKING, 90 + day, 1)).flat(),
    ...mentionsOn(SPIKING, 120, 12),
  ];
  await transport.producer().send(
    TOPICS.mentions,
    mentions.map((m) => topicRecord(TOPICS.mentions, 'Mention', m.entity_id, m)),
  );
  await waitFor(async () => runtime.pipeline.feed.book.size() > 0 && (await caughtUp()));
  served = (await (await fetch(`${base}/v1/openapi.json`)).json()) as OpenApiDocument;
}, 60_000);

async function waitFor(condition: () => Promise<boolean>, ms = 25_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
}

afterAll(async () => {
  await runtime.stop();
});

/** The schema the document gives for this answer, compiled; fails when the answer is not documented. */
function documentedSchema(method: string, path: string, status: number, contentType = 'application/json') {
  const response = served.paths[path]?.[method.toLowerCase()]?.responses[String(status)];
  expect(response, `${method} ${path} documents ${status}`).toBeDefined();
  const schema = response!.content?.[contentType]?.schema;
  expect(schema, `${method} ${path} ${status} has a ${contentType} schema`).toBeDefined();
  const ref = schema!['$ref'];
  const key = typeof ref === 'string' ? ref : JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) {
    const resolved =
      typeof ref === 'string' ? served.components.schemas[ref.replace('#/components/schemas/', '')] : schema;
    expect(resolved, `${String(ref)} is a component`).toBeDefined();
    validate = ajv.compile(resolved!);
    validators.set(key, validate);
  }
  return validate;
}

function expectFits(method: string, path: string, status: number, body: unknown, contentType?: string): void {
  const validate = documentedSchema(method, path, status, contentType);
  const fits = validate(body);
  expect(fits ? [] : validate.errors, `${method} ${path} ${status}: ${JSON.stringify(body).slice(0, 300)}`).toEqual([]);
}

/**
 * Calls the live server and checks the answer against the document: `path` is the documented
 * template, `url` the address asked.
 */
async function call(
  method: string,
  path: string,
  url: string,
  expected: number,
  init: RequestInit = {},
): Promise<Json> {
  const response = await fetch(`${base}${url}`, { method, ...init });
  const body = (await response.json()) as Json;
  expect(response.status, `${method} ${url}: ${JSON.stringify(body).slice(0, 300)}`).toBe(expected);
  expectFits(method, path, expected, body);
  return body;
}

const jsonBody = (value: unknown, headers: Record<string, string> = {}): RequestInit => ({
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(value),
});

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1, is what /v1/openapi.json serves, and the validator does refuse a broken one', async () => {
    const validator = new Validator();
    expect(await validator.validate(openApiDocument())).toEqual({ valid: true });
    expect(served).toEqual(openApiDocument());
    const broken = structuredClone(openApiDocument()) as unknown as OpenApiDocument;
    const parameters = (broken.paths['/v1/search']!['get'] as unknown as { parameters: { in: string }[] }).parameters;
    parameters[0]!.in = 'body';
    expect((await new Validator().validate(broken as unknown as Record<string, unknown>)).valid).toBe(false);
  });

  it('describes exactly the routes the server registers, with the same methods', () => {
    const registered = runtime.api!.routes;
    const get = new Set(registered.filter((r) => r.method === 'GET').map((r) => r.url));
    const operations = (routes: readonly { method: string; url: string }[]) =>
      routes
        // Fastify answers HEAD for every GET by itself; the document describes the GET.
        .filter((r) => !(r.method === 'HEAD' && get.has(r.url)))
        // `:id` is `{id}`; the dashboard's `/web/*` names its wildcard `{file}`.
        .map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{file}')}`)
        .sort();
    const documented = Object.entries(served.paths)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(registered.length).toBeGreaterThan(20);
    expect(documented).toEqual([...new Set(operations(registered))]);
  });

  it('documents every query parameter of a route with the bounds the route enforces', async () => {
    const spikes = served.paths['/v1/spikes']!['get'] as unknown as { parameters: { name: string; schema: Json }[] };
    const limit = spikes.parameters.find((p) => p.name === 'limit')!.schema;
    expect(limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000 });
    expect((await fetch(`${base}/v1/spikes?limit=${Number(limit['maximum']) + 1}`)).status).toBe(400);
    expect((await fetch(`${base}/v1/spikes?limit=${String(limit['maximum'])}`)).status).toBe(200);
    expect((await fetch(`${base}/v1/spikes?undocumented=1`)).status).toBe(400);
  });
});

describe('real answers fit the documented schemas', () => {
  it('search and ask, as GET and POST, with time words, two hops and an LLM-less answer', async () => {
    const search = await call(
      'GET',
      '/v1/search',
      `/v1/search?q=${encodeURIComponent('Maria Lindqvist harbour bridge')}&date=2025-03-03&store=both&k=5`,
      200,
    );
    expect((search['items'] as unknown[]).length).toBeGreaterThan(0);
    // The schemas are closed: a field the document does not name, or one missing, does not fit.
    const retrieval = documentedSchema('GET', '/v1/search', 200);
    expect(retrieval({ ...search, undocumented: 1 })).toBe(false);
    const withoutItems: Json = { ...search };
    delete withoutItems['items'];
    expect(retrieval(withoutItems)).toBe(false);
    await call('POST', '/v1/search', '/v1/search', 200, jsonBody({ q: 'Reykjavik Open chess', store: 'chunks', k: 3 }));
    const ask = await call(
      'GET',
      '/v1/ask',
      `/v1/ask?q=${encodeURIComponent('Who opened the harbour bridge last week?')}&date=2025-03-08&store=both`,
      200,
    );
    expect(ask['time']).toBeDefined();
    expect((ask['citations'] as unknown[]).length).toBeGreaterThan(0);
    await call(
      'POST',
      '/v1/ask',
      '/v1/ask',
      200,
      jsonBody({ q: 'What did Anand Rao win?', date: '2025-04-01', hops: 2, store: 'interactions', time_words: false }),
    );
    await call('GET', '/v1/search', '/v1/search', 400);
    await call('POST', '/v1/ask', '/v1/ask', 400, jsonBody({ q: 'x', k: 1000 }));
  });

  it('entities, one entity, its timeline and its mentions, and their errors', async () => {
    const list = await call('GET', '/v1/entities', '/v1/entities?q=lindq', 200);
    expect((list['entities'] as unknown[]).length).toBeGreaterThan(0);
    await call('GET', '/v1/entities/{id}', '/v1/entities/e-maria-lindqvist', 200);
    await call('GET', '/v1/entities/{id}', '/v1/entities/e-nobody', 404);
    const timeline = await call(
      'GET',
      '/v1/entities/{id}/timeline',
      '/v1/entities/e-maria-lindqvist/timeline?date=2025-04-01',
      200,
    );
    expect((timeline['items'] as unknown[]).length).toBeGreaterThan(0);
    await call(
      'GET',
      '/v1/entities/{id}/mentions',
      '/v1/entities/e-maria-lindqvist/mentions?from=2025-01-01&to=2025-04-01',
      200,
    );
    await call('GET', '/v1/entities/{id}/mentions', '/v1/entities/e-x/mentions?granularity=minute', 400);
  });

  it('status, health and the extraction targets added, listed and removed', async () => {
    await call('GET', '/v1/status', '/v1/status', 200);
    await call('GET', '/healthz', '/healthz', 200);
    await call('POST', '/v1/extraction/targets', '/v1/extraction/targets', 201, jsonBody({ subject: 'Anand Rao' }));
    const targets = await call('GET', '/v1/extraction/targets', '/v1/extraction/targets?at=2025-02-01T00:00:00Z', 200);
    expect(targets['configured']).not.toEqual([]);
    const id = (targets['configured'] as string[])[0]!;
    await call('DELETE', '/v1/extraction/targets/{id}', `/v1/extraction/targets/${id}`, 200);
    await call('DELETE', '/v1/extraction/targets/{id}', `/v1/extraction/targets/${id}`, 404);
    await call('POST', '/v1/extraction/targets', '/v1/extraction/targets', 400, jsonBody({ subject: '' }));
  });

  it('intake: all accepted, some refused, and a wrong token', async () => {
    const article = {
      url: 'https://openapi-test.example/2025/03/10/ferry',
      title: 'Ferry line reopens',
      text: 'The ferry line between Gothenburg and Frederikshavn reopened on Monday after repairs.',
      published_at: '2025-03-10T08:00:00Z',
      source: 'openapi-test',
    };
    const auth = { authorization: `Bearer ${INTAKE_TOKEN}` };
    await call('POST', '/v1/articles', '/v1/articles', 202, jsonBody(article, auth));
    const some = await call(
      'POST',
      '/v1/articles',
      '/v1/articles',
      207,
      jsonBody({ articles: [article, { url: 7 }] }, auth),
    );
    expect(some['rejected']).toHaveLength(1);
    await call('POST', '/v1/articles', '/v1/articles', 401, jsonBody(article, { authorization: 'Bearer wrong' }));
  });

  it('spikes from the real detector: the list, one episode, the digest and its errors', async () => {
    const list = await call('GET', '/v1/spikes', '/v1/spikes?state=all', 200);
    const spikes = list['spikes'] as { id: string; entity_id: string }[];
    expect(spikes.map((s) => s.entity_id)).toContain(SPIKING);
    await call('GET', '/v1/spikes/{id}', `/v1/spikes/${encodeURIComponent(spikes[0]!.id)}`, 200);
    await call('GET', '/v1/spikes/{id}', '/v1/spikes/no-such-spike', 404);
    const digest = await call('GET', '/v1/spikes/digest', '/v1/spikes/digest?all=true', 200);
    const stories = [...(digest['stories'] as unknown[]), ...(digest['more'] as unknown[])];
    expect(stories.length).toBeGreaterThan(0);
    await call('GET', '/v1/spikes/digest', '/v1/spikes/digest?date=yesterday', 400);
  });

  it('the event stream: its spike and story events carry the documented SpikeAlert and Story', async () => {
    expect(Object.keys(served.paths['/v1/spikes/stream']!['get']!.responses['200']!.content ?? {})).toEqual([
      'text/event-stream',
    ]);
    const controller = new AbortController();
    const response = await fetch(`${base}/v1/spikes/stream`, {
      headers: { 'last-event-id': '0' },
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    const decoder = new TextDecoder();
    let text = '';
    const giveUp = setTimeout(() => controller.abort(), 5_000);
    try {
      while (!text.includes('event: spike')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      // Aborted: what arrived is checked below.
    }
    clearTimeout(giveUp);
    controller.abort();
    const events = text
      .split('\n\n')
      .map((block) => Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(': ')), line])))
      .filter((fields) => fields['event'] !== undefined && fields['data'] !== undefined);
    expect(events.map((fields) => fields['event'])).toContain('event: spike');
    const alert = ajv.compile(served.components.schemas['SpikeAlert']!);
    const story = ajv.compile(served.components.schemas['Story']!);
    for (const fields of events) {
      const kind = fields['event']!.slice('event: '.length);
      const data = JSON.parse(fields['data']!.slice('data: '.length)) as unknown;
      const validate = kind === 'spike' ? alert : story;
      expect(validate(data) ? [] : validate.errors, `${kind} event`).toEqual([]);
    }
  });
});

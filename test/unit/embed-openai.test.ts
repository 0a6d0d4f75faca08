import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbedderError } from '../../processors/embed/embedder.js';
import { OpenAiEmbedder, type OpenAiEmbedderOptions } from '../../streams/embed/openai-embedder.js';
import { Secret } from '../../schemas/connection-config.js';

/**
 * The real `openai` client against a small OpenAI-compatible `/v1/embeddings` server on 127.0.0.1
 * whose answers each test scripts: fixed vectors, 429, 500, a stall, malformed replies.
 */
const DIMENSIONS = 8;

/** A fixed, deliberately non-normalised vector per text, so normalisation is visible. */
function vectorFor(text: string, dimensions = DIMENSIONS): number[] {
  const digest = createHash('sha256').update(text).digest();
  return Array.from({ length: dimensions }, (_, i) => (digest[i % digest.length]! - 100) / 10);
}

interface EmbeddingsRequest {
  model: string;
  input: string[];
  encoding_format?: string;
  dimensions?: number;
}

type Reply =
  | { kind: 'vectors' }
  | { kind: 'status'; status: number; headers?: Record<string, string> }
  | { kind: 'stall' }
  | { kind: 'json'; body: unknown };

interface FakeServer {
  url: string;
  requests: { body: EmbeddingsRequest; authorization: string | undefined }[];
  /** Replies for the next requests, in order; afterwards every request gets vectors. */
  script: Reply[];
  maxConcurrent: number;
  /** Delay before answering with vectors, so concurrent requests overlap. */
  delayMs: number;
  close(): Promise<void>;
}

const servers: FakeServer[] = [];
const embedders: OpenAiEmbedder[] = [];
afterEach(async () => {
  await Promise.all(embedders.splice(0).map((e) => e.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

async function startFakeServer(): Promise<FakeServer> {
  let active = 0;
  const stalled: ServerResponse[] = [];
  const fake: FakeServer = {
    url: '',
    requests: [],
    script: [],
    maxConcurrent: 0,
    delayMs: 0,
    close: async () => {
      for (const response of stalled) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server: Server = createServer((request, response) => {
    void (async () => {
      if (request.method !== 'POST' || request.url !== '/v1/embeddings') {
        response.writeHead(404).end();
        return;
      }
      const body = (await readJson(request)) as EmbeddingsRequest;
      fake.requests.push({ body, authorization: request.headers.authorization });
      const reply = fake.script.shift() ?? { kind: 'vectors' };
      if (reply.kind === 'stall') {
        stalled.push(response);
        return;
      }
      if (reply.kind === 'status') {
        response
          .writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
          .end(JSON.stringify({ error: { message: `scripted ${reply.status}`, type: 'test' } }));
        return;
      }
      if (reply.kind === 'json') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
        return;
      }
      active += 1;
      fake.maxConcurrent = Math.max(fake.maxConcurrent, active);
      if (fake.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.delayMs));
      active -= 1;
      const data = body.input.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: vectorFor(text, body.dimensions ?? DIMENSIONS),
      }));
      // Out of order on purpose: clients must place vectors by `index`.
      data.reverse();
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          object: 'list',
          data,
          model: body.model,
          usage: { prompt_tokens: body.input.length, total_tokens: body.input.length },
        }),
      );
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  servers.push(fake);
  return fake;
}

function embedderFor(server: FakeServer, options: Partial<OpenAiEmbedderOptions> = {}): OpenAiEmbedder {
  const embedder = new OpenAiEmbedder({
    baseUrl: server.url,
    apiKey: new Secret('sk-test-secret-value'),
    model: 'text-embedding-test',
    dimensions: DIMENSIONS,
    timeoutMs: 2_000,
    // Retries are exercised without waiting; the waits themselves are checked separately.
    sleep: async () => undefined,
    ...options,
  });
  embedders.push(embedder);
  return embedder;
}

async function failureOf(promise: Promise<unknown>): Promise<EmbedderError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EmbedderError);
  return error as EmbedderError;
}

function unit(values: number[]): number[] {
  const norm = Math.sqrt(values.reduce((s, x) => s + x * x, 0));
  return values.map((x) => x / norm);
}

describe('OpenAiEmbedder against an OpenAI-compatible server', () => {
  it('sends a query as it is: the purpose adds no instruction and no field', async () => {
    const server = await startFakeServer();
    const embedder = embedderFor(server);
    const [asQuery] = await embedder.embed(['Los Angeles wildfires'], 'query');
    const [asDocument] = await embedder.embed(['Los Angeles wildfires'], 'document');
    expect(server.requests.map((r) => r.body)).toEqual([
      { model: 'text-embedding-test', input: ['Los Angeles wildfires'], encoding_format: 'float' },
      { model: 'text-embedding-test', input: ['Los Angeles wildfires'], encoding_format: 'float' },
    ]);
    expect([...asQuery!]).toEqual([...asDocument!]);
  });

  it('returns the served vectors, unit length, in input order, batched by batchSize', async () => {
    const server = await startFakeServer();
    const embedder = embedderFor(server, { batchSize: 4 });
    const texts = Array.from({ length: 10 }, (_, i) => `headline number ${i}`);
    const vectors = await embedder.embed(texts);

    expect(server.requests.map((r) => r.body.input.length)).toEqual([4, 4, 2]);
    expect(server.requests.flatMap((r) => r.body.input)).toEqual(texts);
    expect(vectors).toHaveLength(10);
    vectors.forEach((v, i) => {
      const expected = unit(vectorFor(texts[i]!));
      expect(v).toHaveLength(DIMENSIONS);
      v.forEach((x, d) => expect(x).toBeCloseTo(expected[d]!, 6));
    });
    expect(embedder.model).toBe('text-embedding-test');
    expect(embedder.dimensions).toBe(DIMENSIONS);
  });

  it('sends the model, float encoding, the bearer key, and dimensions only when asked to', async () => {
    const server = await startFakeServer();
    await embedderFor(server).embed(['a']);
    await embedderFor(server, { dimensions: 4, requestDimensions: true }).embed(['b']);
    const [plain, shortened] = server.requests;
    expect(plain!.body).toEqual({ model: 'text-embedding-test', input: ['a'], encoding_format: 'float' });
    expect(plain!.authorization).toBe('Bearer sk-test-secret-value');
    expect(shortened!.body.dimensions).toBe(4);
  });

  it('answers an empty list without a request', async () => {
    const server = await startFakeServer();
    expect(await embedderFor(server).embed([])).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('retries a 429 and then a 500, and succeeds', async () => {
    const server = await startFakeServer();
    server.script.push({ kind: 'status', status: 429 }, { kind: 'status', status: 500 });
    const [vector] = await embedderFor(server).embed(['retry me']);
    expect(server.requests).toHaveLength(3);
    expect(vector![0]).toBeCloseTo(unit(vectorFor('retry me'))[0]!, 6);
  });

  it('waits with full-jitter exponential backoff, and as long as Retry-After says', async () => {
    const server = await startFakeServer();
    server.script.push(
      { kind: 'status', status: 503 },
      { kind: 'status', status: 503 },
      { kind: 'status', status: 429, headers: { 'retry-after': '2' } },
    );
    const waits: number[] = [];
    await embedderFor(server, {
      retry: { attempts: 5, baseMs: 100, capMs: 10_000 },
      random: () => 1,
      sleep: async (ms) => waits.push(ms),
    }).embed(['x']);
    expect(waits).toEqual([100, 200, 2000]);

    const jittered: number[] = [];
    server.script.push({ kind: 'status', status: 500 }, { kind: 'status', status: 500 });
    await embedderFor(server, {
      retry: { attempts: 5, baseMs: 100, capMs: 10_000 },
      random: () => 0.25,
      sleep: async (ms) => jittered.push(ms),
    }).embed(['y']);
    expect(jittered).toEqual([25, 50]);
  });

  it('gives up after the configured attempts with a retriable embedder_unavailable', async () => {
    const server = await startFakeServer();
    server.script.push(...Array.from({ length: 3 }, (): Reply => ({ kind: 'status', status: 500 })));
    const error = await failureOf(embedderFor(server, { retry: { attempts: 3 } }).embed(['x']));
    expect(error.code).toBe('embedder_unavailable');
    expect(error.retriable).toBe(true);
    expect(error.message).toContain('HTTP 500');
    expect(server.requests).toHaveLength(3);
  });

  it('turns a stalled server into a timeout after the attempts, without waiting 10 minutes', async () => {
    const server = await startFakeServer();
    server.script.push({ kind: 'stall' }, { kind: 'stall' });
    const error = await failureOf(embedderFor(server, { timeoutMs: 300, retry: { attempts: 2 } }).embed(['x']));
    expect(error.code).toBe('timeout');
    expect(error.retriable).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it('recovers when a stall is followed by an answer', async () => {
    const server = await startFakeServer();
    server.script.push({ kind: 'stall' });
    const vectors = await embedderFor(server, { timeoutMs: 300 }).embed(['x']);
    expect(vectors).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry a 400 or a 401: embedder_rejected, not retriable, and no key in the message', async () => {
    for (const status of [400, 401]) {
      const server = await startFakeServer();
      server.script.push({ kind: 'status', status });
      const error = await failureOf(embedderFor(server).embed(['x']));
      expect(error.code).toBe('embedder_rejected');
      expect(error.retriable).toBe(false);
      expect(error.message).toContain(`HTTP ${status}`);
      expect(error.message).not.toContain('sk-test-secret-value');
      expect(server.requests).toHaveLength(1);
    }
  });

  it('reports an unreachable endpoint as retriable embedder_unavailable', async () => {
    const server = await startFakeServer();
    const url = server.url;
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const embedder = new OpenAiEmbedder({
      baseUrl: url,
      model: 'm',
      dimensions: DIMENSIONS,
      retry: { attempts: 2 },
      sleep: async () => undefined,
    });
    embedders.push(embedder);
    const error = await failureOf(embedder.embed(['x']));
    expect(error.code).toBe('embedder_unavailable');
    expect(error.retriable).toBe(true);
  });

  it('refuses vectors of the wrong length, a short answer and zero vectors', async () => {
    const server = await startFakeServer();
    const embedder = embedderFor(server, { dimensions: DIMENSIONS + 1 });
    const wrongLength = await failureOf(embedder.embed(['x']));
    expect(wrongLength.code).toBe('embedder_rejected');
    expect(wrongLength.message).toContain('NEON_EMBEDDINGS_DIMENSIONS');

    server.script.push({ kind: 'json', body: { object: 'list', data: [], model: 'm' } });
    const short = await failureOf(embedderFor(server).embed(['x']));
    expect(short.message).toContain('0 vectors for 1 texts');

    server.script.push({
      kind: 'json',
      body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: new Array(DIMENSIONS).fill(0) }] },
    });
    const zero = await failureOf(embedderFor(server).embed(['x']));
    expect(zero.message).toContain('zero vector');
  });

  it('never has more requests in flight than its concurrency, across callers', async () => {
    const server = await startFakeServer();
    server.delayMs = 20;
    const embedder = embedderFor(server, { batchSize: 2, concurrency: 2 });
    const calls = Array.from({ length: 4 }, (_, c) => embedder.embed(Array.from({ length: 6 }, (_, i) => `${c}-${i}`)));
    const results = await Promise.all(calls);
    expect(results.map((r) => r.length)).toEqual([6, 6, 6, 6]);
    expect(server.requests).toHaveLength(12);
    expect(server.maxConcurrent).toBe(2);
    expect(embedder.inFlight).toBe(0);
  });

  it('refuses, retriably, once its bounded queue of waiting requests is full', async () => {
    const server = await startFakeServer();
    server.script.push({ kind: 'stall' }, { kind: 'stall' });
    const embedder = embedderFor(server, {
      concurrency: 1,
      maxQueuedRequests: 1,
      timeoutMs: 500,
      retry: { attempts: 1 },
    });
    const first = embedder.embed(['a']);
    const second = embedder.embed(['b']);
    const third = await failureOf(embedder.embed(['c']));
    expect(third.code).toBe('embedder_unavailable');
    expect(third.retriable).toBe(true);
    expect(embedder.queued).toBe(1);
    expect((await failureOf(first)).code).toBe('timeout');
    expect((await failureOf(second)).code).toBe('timeout');
  });
});

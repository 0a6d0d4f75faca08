import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiEmbedder } from '../../streams/embed/openai-embedder.js';
import {
  approximateTokens,
  fakeReplies,
  fakeVector,
  startFakeOpenAiServer,
  type FakeOpenAiServer,
  type FakeOpenAiServerOptions,
} from '../../devkit/fake-openai-server.js';

/** The fake server's own contract, as the `openai` client and the project's embedder see it. */
const servers: FakeOpenAiServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(options: FakeOpenAiServerOptions = {}): Promise<{ server: FakeOpenAiServer; client: OpenAI }> {
  const server = await startFakeOpenAiServer(options);
  servers.push(server);
  return { server, client: new OpenAI({ baseURL: server.url, apiKey: 'sk-fake', maxRetries: 0, timeout: 2_000 }) };
}

describe('startFakeOpenAiServer', () => {
  it('listens on 127.0.0.1 at an ephemeral port and serves /v1 by default', async () => {
    const { server } = await start();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(server.url).toBe(`${server.origin}/v1`);
  });

  it('answers chat completions in the OpenAI wire format, with usage counted as ⌈characters / 4⌉', async () => {
    const { server, client } = await start({ chat: (request) => `you said ${request.messages.at(-1)!.content}` });
    const completion = await client.chat.completions.create({
      model: 'any-model',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello there' },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('any-model');
    expect(completion.choices[0]!.message.content).toBe('you said hello there');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    // ⌈8/4⌉ + ⌈11/4⌉ for the prompt, ⌈20/4⌉ for the answer.
    expect(completion.usage).toEqual({ prompt_tokens: 2 + 3, completion_tokens: 5, total_tokens: 10 });
    expect(server.totals).toEqual({
      calls: 1,
      chatCalls: 1,
      embeddingCalls: 0,
      promptTokens: 5,
      completionTokens: 5,
      embeddedTexts: 0,
    });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-fake');
    expect(server.chatRequests()[0]).toMatchObject({ model: 'any-model', json: false });
  });

  it('answers "OK" by default, "{}" when a JSON object is asked for, and the queue before the responder', async () => {
    const { server, client } = await start();
    const text = async (json = false) =>
      (
        await client.chat.completions.create({
          model: 'm',
          messages: [{ role: 'user', content: 'q' }],
          ...(json ? { response_format: { type: 'json_object' as const } } : {}),
        })
      ).choices[0]!.message.content;
    expect(await text()).toBe('OK');
    expect(await text(true)).toBe('{}');
    server.setChatResponder(async () => 'from the responder');
    server.enqueue(fakeReplies.json({ a: 1 }, { extra: true }), fakeReplies.invalidJson(), fakeReplies.huge(12));
    expect(server.queued.chat).toBe(3);
    expect(await text()).toBe('{"a":1,"extra":true}');
    const truncated = (await text())!;
    expect(() => JSON.parse(truncated) as unknown).toThrow(SyntaxError);
    expect(await text()).toBe('x'.repeat(12));
    expect(await text()).toBe('from the responder');
  });

  it('answers error statuses in the OpenAI error format, with Retry-After on a 429', async () => {
    const { server, client } = await start();
    server.enqueue(fakeReplies.rateLimited(7), fakeReplies.serverError(503), fakeReplies.unauthorized());
    const create = () => client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'q' }] });
    await expect(create()).rejects.toMatchObject({ status: 429, type: 'rate_limit_exceeded' });
    await expect(create()).rejects.toMatchObject({ status: 503 });
    await expect(create()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(server.requests.map((r) => r.status)).toEqual([429, 503, 401]);
    // Failed answers bill no tokens.
    expect([server.totals.promptTokens, server.totals.completionTokens]).toEqual([0, 0]);
    await expect(create()).resolves.toBeDefined();
  });

  it('holds a stalled request open, tracks concurrency, and releases it on close', async () => {
    const { server, client } = await start();
    server.enqueue(fakeReplies.stall());
    const stalled = client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'q' }] });
    const settled = stalled.then(
      () => 'answered',
      () => 'failed',
    );
    await expect.poll(() => server.inFlight).toBe(1);
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'r' }] });
    expect(server.maxConcurrent).toBe(2);
    expect(server.requests[0]!.status).toBeUndefined();
    await server.close();
    expect(await settled).toBe('failed');
  });

  it('answers deterministic embeddings as floats or base64, of the configured or requested length', async () => {
    const { server, client } = await start({ embeddingDimensions: 6 });
    const floats = await client.embeddings.create({ model: 'e', input: ['alpha', 'beta'], encoding_format: 'float' });
    expect(floats.data.map((d) => d.embedding)).toEqual([fakeVector('alpha', 6), fakeVector('beta', 6)]);
    // The client asks for base64 by default and decodes it.
    const decoded = await client.embeddings.create({ model: 'e', input: 'alpha' });
    expect(decoded.data[0]!.embedding).toEqual(Array.from(Float32Array.from(fakeVector('alpha', 6))));
    const longer = await client.embeddings.create({ model: 'e', input: 'alpha', dimensions: 40 });
    expect(longer.data[0]!.embedding).toHaveLength(40);
    expect(fakeVector('alpha', 40).slice(0, 6)).toEqual(fakeVector('alpha', 6));
    expect(server.totals).toMatchObject({
      embeddingCalls: 3,
      embeddedTexts: 4,
      promptTokens: 3 * approximateTokens('alpha') + approximateTokens('beta'),
    });
  });

  it('serves the project embedder, embeddings failures included', async () => {
    const { server } = await start({ embeddingDimensions: 4 });
    server.enqueueEmbeddings(fakeReplies.serverError(500));
    const embedder = new OpenAiEmbedder({
      baseUrl: server.url,
      model: 'e',
      dimensions: 4,
      sleep: async () => undefined,
    });
    const [vector] = await embedder.embed(['alpha']);
    const expected = fakeVector('alpha', 4);
    const norm = Math.hypot(...expected);
    expect(Array.from(vector!)).toEqual(Array.from(Float32Array.from(expected.map((x) => x / norm))));
    expect(server.totals.embeddingCalls).toBe(2);
    await embedder.close();
  });

  it('records path and query of other prefixes, 404s unknown routes, and forgets everything on reset', async () => {
    const { server } = await start();
    const post = (path: string) =>
      fetch(`${server.origin}${path}`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [] }) });
    expect((await post('/openai/deployments/d/chat/completions?api-version=2024-10-21')).status).toBe(200);
    expect((await post('/v1/models')).status).toBe(404);
    expect(server.requests.map((r) => [r.endpoint, r.path, r.query])).toEqual([
      ['chat', '/openai/deployments/d/chat/completions', { 'api-version': '2024-10-21' }],
      ['unknown', '/v1/models', {}],
    ]);
    server.enqueue(fakeReplies.stall());
    server.reset();
    expect(server.requests).toEqual([]);
    expect(server.totals.calls).toBe(0);
    expect(server.queued).toEqual({ chat: 0, embeddings: 0 });
    expect(server.maxConcurrent).toBe(0);
  });

  it('waits the configured latency before answering', async () => {
    const { server, client } = await start({ latencyMs: 60 });
    const answer = client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'q' }] });
    await expect.poll(() => server.requests.length).toBe(1);
    expect(server.inFlight).toBe(1);
    await answer;
    await expect.poll(() => server.inFlight).toBe(0);
  });
});

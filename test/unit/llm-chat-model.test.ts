import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatModelError, type ChatRequest } from '../../processors/extract/chat-model.js';
import { llmConfig, llmConfigFromEnv, type LlmConfig } from '../../processors/extract/llm-config.js';
import { LLM_METRIC_NAMES } from '../../streams/llm/llm-metrics.js';
import { chatModelFromEnv, OpenAiChatModel } from '../../streams/llm/openai-chat-model.js';
import { Secret } from '../../schemas/connection-config.js';
import {
  fakeReplies,
  startFakeOpenAiServer,
  type FakeOpenAiServer,
  type FakeOpenAiServerOptions,
} from '../../devkit/fake-openai-server.js';

/**
 * The real client (the `openai` package over HTTP) against the fake OpenAI-compatible server.
 * Backoff waits are recorded by an injected sleep instead of slept; only the timeout tests wait
 * (for a configured 150 ms), because a timeout is the client's own clock.
 */
const KEY = 'sk-test-abcdef0123456789-never-print';

const servers: FakeOpenAiServer[] = [];
const models: OpenAiChatModel[] = [];
const directories: string[] = [];
afterEach(async () => {
  await Promise.all(models.splice(0).map((m) => m.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(directories.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

interface Setup {
  server: FakeOpenAiServer;
  model: OpenAiChatModel;
  registry: Registry;
  waits: number[];
  config: LlmConfig;
  /** Another client on the same configuration and registry (a restarted process). */
  another: () => OpenAiChatModel;
}

async function setup(
  overrides: Partial<Omit<LlmConfig, 'retry'>> & { retry?: Partial<LlmConfig['retry']> } = {},
  serverOptions: FakeOpenAiServerOptions = {},
  clock?: () => number,
): Promise<Setup> {
  const server = await startFakeOpenAiServer(serverOptions);
  servers.push(server);
  const config = llmConfig({
    baseUrl: server.url,
    model: 'fake-model',
    apiKey: new Secret(KEY),
    timeoutMs: 2_000,
    ...overrides,
    retry: { attempts: 3, baseMs: 10, capMs: 2_000, ...overrides.retry },
  });
  const registry = new Registry();
  const waits: number[] = [];
  const build = () => {
    const model = new OpenAiChatModel(config, {
      registry,
      sleep: async (ms) => void waits.push(ms),
      random: () => 0.5,
      ...(clock === undefined ? {} : { now: clock }),
    });
    models.push(model);
    return model;
  };
  return { server, model: build(), registry, waits, config, another: build };
}

async function freshDirectory(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'neon-llm-'));
  directories.push(dir);
  return dir;
}

function ask(content: string, extra: Partial<ChatRequest> = {}): ChatRequest {
  return { messages: [{ role: 'user', content }], purpose: 'm1', ...extra };
}

async function failure(promise: Promise<unknown>): Promise<ChatModelError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ChatModelError) return error;
    throw error;
  }
  throw new Error('expected the completion to fail');
}

/** Sum of a family's samples whose labels include `labels` (histograms: pass the `_count` sample name). */
async function metric(registry: Registry, name: string, labels: Record<string, string> = {}, sample = name) {
  const family = registry.getSingleMetric(name);
  if (family === undefined) throw new Error(`${name} is not registered`);
  return (await family.get()).values
    .filter((v) => ((v as { metricName?: string }).metricName ?? name) === sample)
    .filter((v) => Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x))
    .reduce((sum, v) => sum + v.value, 0);
}

describe('OpenAiChatModel against an OpenAI-compatible server', () => {
  it('answers a completion and sends the request as configured', async () => {
    const { server, model, registry } = await setup(
      { pricePer1k: { prompt: 0.5, completion: 1.5 } },
      {
        chat: () => ({
          kind: 'reply',
          content: '{"ok":true}',
          usage: { prompt_tokens: 1000, completion_tokens: 2000 },
        }),
      },
    );
    const completion = await model.complete({
      messages: [
        { role: 'system', content: 'Answer in JSON.' },
        { role: 'user', content: 'Who won?' },
      ],
      maxTokens: 50,
      json: true,
      purpose: 'answer',
    });
    expect(completion).toEqual({
      text: '{"ok":true}',
      model: 'fake-model',
      promptTokens: 1000,
      completionTokens: 2000,
      cached: false,
    });
    expect(server.requests).toHaveLength(1);
    const [sent] = server.requests;
    expect(sent!.path).toBe('/v1/chat/completions');
    expect(sent!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent!.body).toEqual({
      model: 'fake-model',
      messages: [
        { role: 'system', content: 'Answer in JSON.' },
        { role: 'user', content: 'Who won?' },
      ],
      temperature: 0,
      max_tokens: 50,
      response_format: { type: 'json_object' },
    });

    expect(await metric(registry, LLM_METRIC_NAMES.calls, { purpose: 'answer', outcome: 'ok' })).toBe(1);
    expect(await metric(registry, LLM_METRIC_NAMES.tokens, { purpose: 'answer', direction: 'prompt' })).toBe(1000);
    expect(await metric(registry, LLM_METRIC_NAMES.tokens, { purpose: 'answer', direction: 'completion' })).toBe(2000);
    expect(await metric(registry, LLM_METRIC_NAMES.cost, { purpose: 'answer' })).toBeCloseTo(0.5 + 3, 10);
    const latencyCount = `${LLM_METRIC_NAMES.latency}_count`;
    expect(await metric(registry, LLM_METRIC_NAMES.latency, { purpose: 'answer' }, latencyCount)).toBe(1);
    expect(await metric(registry, LLM_METRIC_NAMES.failures)).toBe(0);
    expect(await metric(registry, LLM_METRIC_NAMES.inFlight)).toBe(0);
    expect(await metric(registry, LLM_METRIC_NAMES.queued)).toBe(0);
  });

  it('sends the length bound as max_completion_tokens when so configured', async () => {
    const { server, model } = await setup({ maxTokensField: 'max_completion_tokens' });
    await model.complete(ask('short', { maxTokens: 20 }));
    expect(server.requests[0]!.body).toMatchObject({ max_completion_tokens: 20 });
    expect(server.requests[0]!.body).not.toHaveProperty('max_tokens');
  });

  it('returns what the model wrote, even invalid JSON or extra keys: validation belongs to the caller', async () => {
    const { server, model } = await setup();
    server.enqueue(fakeReplies.invalidJson(), fakeReplies.json({ interactions: [] }, { confidence: 0.9 }));
    expect((await model.complete(ask('a', { json: true }))).text).toBe(
      '{"interactions": [{"subject": "Doja Cat", "object": ',
    );
    expect(JSON.parse((await model.complete(ask('b', { json: true }))).text)).toEqual({
      interactions: [],
      confidence: 0.9,
    });
  });

  it('estimates tokens (characters / 4) when the server reports no usage', async () => {
    const { server, model } = await setup();
    server.enqueue({ kind: 'reply', content: 'x'.repeat(10), usage: 'omit' });
    const completion = await model.complete(ask('y'.repeat(20)));
    // Prompt: 4 tokens of framing per message + ⌈20 / 4⌉; completion: ⌈10 / 4⌉.
    expect([completion.promptTokens, completion.completionTokens]).toEqual([9, 3]);
  });

  it('retries a 429 after the Retry-After the server asked for, and counts the retry', async () => {
    const { server, model, registry, waits } = await setup();
    server.enqueue(fakeReplies.rateLimited(1));
    const completion = await model.complete(ask('busy?'));
    expect(completion.text).toBe('OK');
    expect(server.totals.chatCalls).toBe(2);
    expect(waits).toEqual([1_000]);
    expect(await metric(registry, LLM_METRIC_NAMES.retries, { code: 'llm_rate_limited' })).toBe(1);
    expect(await metric(registry, LLM_METRIC_NAMES.calls, { outcome: 'ok' })).toBe(1);
    expect(await metric(registry, LLM_METRIC_NAMES.failures)).toBe(0);
  });

  it('caps a long Retry-After at the backoff cap', async () => {
    const { server, model, waits } = await setup({ retry: { capMs: 1_500 } });
    server.enqueue(fakeReplies.rateLimited(3_600));
    await model.complete(ask('busy?'));
    expect(waits).toEqual([1_500]);
  });

  it('retries 5xx with full-jitter exponential backoff until an answer comes', async () => {
    const { server, model, registry, waits } = await setup({ retry: { attempts: 4 } });
    server.enqueue(fakeReplies.serverError(500), fakeReplies.serverError(502), fakeReplies.serverError(503));
    expect((await model.complete(ask('again'))).text).toBe('OK');
    expect(server.totals.chatCalls).toBe(4);
    // random() = 0.5 of min(cap, 10 ms · 2^(attempt-1)).
    expect(waits).toEqual([5, 10, 20]);
    expect(await metric(registry, LLM_METRIC_NAMES.retries, { code: 'llm_unavailable' })).toBe(3);
  });

  it.each([
    { reply: fakeReplies.serverError(500), code: 'llm_unavailable' },
    { reply: fakeReplies.rateLimited(0), code: 'llm_rate_limited' },
  ] as const)('fails retriably with $code once the attempts are spent', async ({ reply, code }) => {
    const { server, model, registry } = await setup({ retry: { attempts: 3 } });
    server.enqueue(reply, reply, reply, reply);
    const error = await failure(model.complete(ask('never')));
    expect([error.code, error.retriable]).toEqual([code, true]);
    expect(server.totals.chatCalls).toBe(3);
    expect(server.queued.chat).toBe(1);
    expect(await metric(registry, LLM_METRIC_NAMES.retries, { code })).toBe(2);
    expect(await metric(registry, LLM_METRIC_NAMES.failures, { code })).toBe(1);
    expect(await metric(registry, LLM_METRIC_NAMES.calls, { purpose: 'm1', outcome: 'failed' })).toBe(1);
  });

  it('fails with llm_timeout when the server stalls, after each attempt times out', async () => {
    const { server, model, registry } = await setup({ timeoutMs: 150, retry: { attempts: 2 } });
    server.enqueue(fakeReplies.stall(), fakeReplies.stall());
    const error = await failure(model.complete(ask('hello?')));
    expect([error.code, error.retriable]).toEqual(['llm_timeout', true]);
    expect(server.totals.chatCalls).toBe(2);
    expect(await metric(registry, LLM_METRIC_NAMES.failures, { code: 'llm_timeout' })).toBe(1);
  });

  it('answers after a slow reply within the timeout', async () => {
    const { server, model } = await setup({ timeoutMs: 2_000 });
    server.enqueue(fakeReplies.slow(100, fakeReplies.reply('late but fine')));
    expect((await model.complete(ask('slow'))).text).toBe('late but fine');
  });

  it.each([401, 403])('fails %i at once as llm_unauthorized, without a retry', async (status) => {
    const { server, model, waits } = await setup();
    server.enqueue({ kind: 'status', status });
    const error = await failure(model.complete(ask('let me in')));
    expect([error.code, error.retriable]).toEqual(['llm_unauthorized', false]);
    expect(server.totals.chatCalls).toBe(1);
    expect(waits).toEqual([]);
  });

  it('fails another 4xx at once as llm_rejected', async () => {
    const { server, model } = await setup();
    server.enqueue({ kind: 'status', status: 400, message: "This model's maximum context length is 8192 tokens" });
    const error = await failure(model.complete(ask('too long')));
    expect([error.code, error.retriable]).toEqual(['llm_rejected', false]);
    expect(error.message).toBe(
      "the LLM endpoint answered HTTP 400: This model's maximum context length is 8192 tokens",
    );
    expect(server.totals.chatCalls).toBe(1);
  });

  it('refuses an answer longer than the bound, counts its tokens, and does not cache it', async () => {
    const { server, model, registry } = await setup({ maxResponseChars: 1_000 });
    server.enqueue(fakeReplies.huge(5_000));
    const error = await failure(model.complete(ask('write a lot')));
    expect([error.code, error.retriable]).toEqual(['llm_rejected', false]);
    expect(await metric(registry, LLM_METRIC_NAMES.tokens, { direction: 'completion' })).toBe(1_250);
    const again = await model.complete(ask('write a lot'));
    expect([again.text, again.cached, server.totals.chatCalls]).toEqual(['OK', false, 2]);
  });

  it('reports an unreachable endpoint as llm_unavailable after its attempts', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const { model, waits } = await setup({ baseUrl: `http://127.0.0.1:${port}/v1`, retry: { attempts: 2 } });
    const error = await failure(model.complete(ask('anyone?')));
    expect([error.code, error.retriable]).toEqual(['llm_unavailable', true]);
    expect(waits).toHaveLength(1);
  });

  it('never has more requests in flight than its concurrency', async () => {
    const { server, model, registry } = await setup({ concurrency: 3, maxQueued: 20 }, { latencyMs: 40 });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => model.complete(ask(`question ${i}`))));
    expect(answers.every((a) => a.text === 'OK')).toBe(true);
    expect(server.totals.chatCalls).toBe(12);
    expect(server.maxConcurrent).toBe(3);
    expect(await metric(registry, LLM_METRIC_NAMES.inFlight)).toBe(0);
    expect(await metric(registry, LLM_METRIC_NAMES.queued)).toBe(0);
  });

  it('refuses, retriably, a request that would wait beyond the queue bound', async () => {
    const { server, model, registry } = await setup({ concurrency: 1, maxQueued: 2 }, { latencyMs: 100 });
    const results = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => model.complete(ask(`q${i}`))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
    for (const result of results.slice(3)) {
      const error = (result as PromiseRejectedResult).reason as ChatModelError;
      expect([error.code, error.retriable]).toEqual(['llm_rate_limited', true]);
    }
    expect(server.totals.chatCalls).toBe(3);
    expect(server.maxConcurrent).toBe(1);
    expect(await metric(registry, LLM_METRIC_NAMES.failures, { code: 'llm_rate_limited' })).toBe(2);
  });

  it('stops at the hourly token budget without calling, and resumes once the tokens leave the window', async () => {
    let now = 0;
    const { server, model, registry } = await setup(
      { tokensPerHour: 100 },
      { chat: () => ({ kind: 'reply', content: 'fine', usage: { prompt_tokens: 30, completion_tokens: 20 } }) },
      () => now,
    );
    // Each request reserves 4 + ⌈2/4⌉ prompt tokens + its 10 max tokens = 15; each costs 50.
    await model.complete(ask('q1', { maxTokens: 10 }));
    await model.complete(ask('q2', { maxTokens: 10 }));
    expect(model.budgetRemaining()).toBe(0);

    const error = await failure(model.complete(ask('q3', { maxTokens: 10 })));
    expect([error.code, error.retriable]).toEqual(['llm_budget_exhausted', true]);
    expect(server.totals.chatCalls).toBe(2);
    expect(await metric(registry, LLM_METRIC_NAMES.failures, { code: 'llm_budget_exhausted' })).toBe(1);
    // A cached answer costs nothing, so it is still given.
    expect((await model.complete(ask('q1', { maxTokens: 10 }))).cached).toBe(true);

    now = 59 * 60_000;
    expect((await failure(model.complete(ask('q3', { maxTokens: 10 })))).code).toBe('llm_budget_exhausted');
    now = 60 * 60_000;
    expect((await model.complete(ask('q3', { maxTokens: 10 }))).text).toBe('fine');
    expect(server.totals.chatCalls).toBe(3);
  });

  it('answers a repeated request from the cache, also in a new client on the same directory', async () => {
    const cacheDir = await freshDirectory();
    const { server, model, registry, another } = await setup({ cacheDir }, { chat: () => 'first answer' });
    const first = await model.complete(ask('same question', { json: true }));
    expect(first.cached).toBe(false);

    server.setChatResponder(() => 'a different answer');
    const second = await model.complete(ask('same question', { json: true, purpose: 'm2' }));
    expect(second).toEqual({ ...first, cached: true });
    expect(server.totals.chatCalls).toBe(1);

    const restarted = another();
    const third = await restarted.complete(ask('same question', { json: true }));
    expect(third).toEqual({ ...first, cached: true });
    expect(server.totals.chatCalls).toBe(1);

    // Any change to the request is another entry.
    const fourth = await model.complete(ask('same question', { json: false }));
    expect([fourth.text, fourth.cached, server.totals.chatCalls]).toEqual(['a different answer', false, 2]);

    expect(await metric(registry, LLM_METRIC_NAMES.cacheHits, { layer: 'memory' })).toBe(1);
    expect(await metric(registry, LLM_METRIC_NAMES.cacheHits, { layer: 'disk' })).toBe(1);
    expect(await metric(registry, LLM_METRIC_NAMES.calls, { outcome: 'cached' })).toBe(2);
    // Cached answers cost no tokens.
    expect(await metric(registry, LLM_METRIC_NAMES.tokens)).toBe(
      first.promptTokens + first.completionTokens + fourth.promptTokens + fourth.completionTokens,
    );
  });

  it('does not cache a failure', async () => {
    const cacheDir = await freshDirectory();
    const { server, model } = await setup({ cacheDir, retry: { attempts: 1 } });
    server.enqueue(fakeReplies.serverError());
    expect((await failure(model.complete(ask('flaky')))).code).toBe('llm_unavailable');
    expect(await readdir(cacheDir)).toEqual([]);
    const answer = await model.complete(ask('flaky'));
    expect([answer.text, answer.cached, server.totals.chatCalls]).toEqual(['OK', false, 2]);
  });

  it('names unknown purposes `other` in metric labels', async () => {
    const { model, registry } = await setup();
    await model.complete(ask('x', { purpose: 'free text from somewhere' }));
    expect(await metric(registry, LLM_METRIC_NAMES.calls, { purpose: 'other', outcome: 'ok' })).toBe(1);
  });

  it('talks to Azure OpenAI: deployment path, api-version and the api-key header', async () => {
    const server = await startFakeOpenAiServer();
    servers.push(server);
    const model = new OpenAiChatModel(
      llmConfig({
        baseUrl: server.origin,
        model: 'gpt-4o',
        apiKey: new Secret(KEY),
        azure: { apiVersion: '2024-10-21', deployment: 'extract-gpt4o' },
      }),
    );
    models.push(model);
    expect((await model.complete(ask('hi'))).text).toBe('OK');
    const [sent] = server.requests;
    expect(sent!.path).toBe('/openai/deployments/extract-gpt4o/chat/completions');
    expect(sent!.query).toEqual({ 'api-version': '2024-10-21' });
    expect(sent!.headers['api-key']).toBe(KEY);
    expect(sent!.headers.authorization).toBeUndefined();
  });

  it('fails waiting and in-flight completions when closed, and refuses new ones', async () => {
    const { server, model } = await setup({ concurrency: 1 });
    server.enqueue(fakeReplies.stall());
    const inFlight = model.complete(ask('stalls'));
    const waiting = model.complete(ask('waits'));
    await expect.poll(() => server.inFlight).toBe(1);
    await model.close();
    for (const pending of [inFlight, waiting, model.complete(ask('after'))]) {
      const error = await failure(pending);
      expect([error.code, error.retriable]).toEqual(['llm_unavailable', false]);
    }
    expect(server.totals.chatCalls).toBe(1);
  });

  it('never shows the key: not in the model, its errors, or what reaches the log', async () => {
    const { server, model } = await setup();
    server.enqueue({ kind: 'status', status: 401, message: `Incorrect API key provided: ${KEY}` });
    const error = await failure(model.complete(ask('who am I')));
    expect(error.code).toBe('llm_unauthorized');
    expect(error.message).toContain('<redacted>');
    for (const shown of [error.message, inspect(error, { depth: 2 }), inspect(model, { depth: 5 })]) {
      expect(shown).not.toContain(KEY);
    }
    const config = llmConfigFromEnv({ NEON_LLM_URL: server.url, NEON_LLM_KEY: KEY, NEON_LLM_MODEL: 'm' });
    expect(inspect(config, { depth: 10 })).not.toContain(KEY);
    expect(JSON.stringify(config)).not.toContain(KEY);
  });
});

describe('chatModelFromEnv', () => {
  it('gives no model when no LLM is configured', () => {
    expect(chatModelFromEnv({})).toBeUndefined();
  });

  it('builds the configured client', async () => {
    const server = await startFakeOpenAiServer({ chat: (request) => `echo ${request.messages[0]!.content}` });
    servers.push(server);
    const model = chatModelFromEnv({
      NEON_LLM_URL: server.url,
      NEON_LLM_MODEL: 'local-model',
      NEON_LLM_CACHE_DIR: 'off',
    });
    if (model === undefined) throw new Error('expected a model');
    models.push(model);
    expect(model.model).toBe('local-model');
    expect((await model.complete(ask('ping'))).text).toBe('echo ping');
    // No key configured: the placeholder the client insists on, never a key from the environment.
    expect(server.requests[0]!.headers.authorization).toBe('Bearer no-key');
  });
});

import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible HTTP server on 127.0.0.1 (ephemeral port) for tests and benchmarks: the only
 * stand-in the project allows, for a paid service. The real `openai` client talks to it over HTTP.
 *
 *   const server = await startFakeOpenAiServer({ chat: (request) => '{"interactions": []}' });
 *   const model = new OpenAiChatModel(llmConfig({ baseUrl: server.url, model: 'fake' }));
 *   server.enqueue(fakeReplies.rateLimited(1), fakeReplies.serverError());   // the next two requests
 *   …
 *   expect(server.totals.chatCalls).toBe(3);
 *   await server.close();
 *
 * Routes: `POST …/chat/completions` and `POST …/embeddings`, under `/v1` (OpenAI, vLLM, Ollama,
 * llama.cpp) or any other prefix (Azure's `/openai/deployments/<d>/…?api-version=…`); the path and
 * query of every request are recorded so either form can be asserted.
 *
 * Each chat request is answered by the next behaviour in the queue (`enqueue`), else by the `chat`
 * responder, else with "OK" (or "{}" when a JSON object was asked for). Embeddings are answered the
 * same way from their own queue, else with deterministic vectors (`fakeVector`), as floats or
 * base64 as the request asks.
 *
 * Token counts in `usage` (and `totals`) are approximate: ⌈characters / 4⌉ per message or input
 * text, OpenAI's rule of thumb for English, summed; chat framing is not counted.
 */

/** How one request is answered. Every kind but `stall` may wait `delayMs` first (a slow answer). */
export type FakeChatBehaviour =
  /** A completion whose text is `content`; `usage: 'omit'` leaves the usage block out, as some servers do. */
  | {
      kind: 'reply';
      content: string;
      delayMs?: number;
      usage?: { prompt_tokens: number; completion_tokens: number } | 'omit';
      finishReason?: 'stop' | 'length';
    }
  /** A completion whose text is `JSON.stringify({ ...value, ...extraKeys })`. */
  | { kind: 'json'; value: Record<string, unknown>; extraKeys?: Record<string, unknown>; delayMs?: number }
  /** A completion whose text is truncated JSON. */
  | { kind: 'invalid-json'; delayMs?: number }
  /** A completion of `chars` characters (default 1,000,000), whatever `max_tokens` said. */
  | { kind: 'huge'; chars?: number; delayMs?: number }
  /** An OpenAI-style error answer: 429 (with Retry-After when given), 500, 401… */
  | { kind: 'status'; status: number; retryAfterSeconds?: number; message?: string; delayMs?: number }
  /** Never answers: the request stays open until the client gives up or the server closes. */
  | { kind: 'stall' };

export type FakeEmbeddingsBehaviour =
  { kind: 'vectors'; delayMs?: number } | Extract<FakeChatBehaviour, { kind: 'status' | 'stall' }>;

/** Shorthands for the behaviours tests use most. */
export const fakeReplies = {
  reply: (content: string): FakeChatBehaviour => ({ kind: 'reply', content }),
  json: (value: Record<string, unknown>, extraKeys?: Record<string, unknown>): FakeChatBehaviour => ({
    kind: 'json',
    value,
    ...(extraKeys === undefined ? {} : { extraKeys }),
  }),
  invalidJson: (): FakeChatBehaviour => ({ kind: 'invalid-json' }),
  huge: (chars = 1_000_000): FakeChatBehaviour => ({ kind: 'huge', chars }),
  rateLimited: (retryAfterSeconds?: number) =>
    ({
      kind: 'status',
      status: 429,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    }) satisfies FakeChatBehaviour & FakeEmbeddingsBehaviour,
  serverError: (status = 500) => ({ kind: 'status', status }) satisfies FakeChatBehaviour & FakeEmbeddingsBehaviour,
  unauthorized: () => ({ kind: 'status', status: 401 }) satisfies FakeChatBehaviour & FakeEmbeddingsBehaviour,
  stall: () => ({ kind: 'stall' }) satisfies FakeChatBehaviour & FakeEmbeddingsBehaviour,
  /** `behaviour` (default a reply "OK") after `latencyMs`. */
  slow: (latencyMs: number, behaviour: FakeChatBehaviour = { kind: 'reply', content: 'OK' }): FakeChatBehaviour =>
    behaviour.kind === 'stall' ? behaviour : { ...behaviour, delayMs: latencyMs },
};

export interface FakeChatMessage {
  role: string;
  content: string;
}

/** What a chat responder sees of a request. */
export interface FakeChatRequest {
  model: string;
  messages: FakeChatMessage[];
  temperature?: number;
  maxTokens?: number;
  /** `response_format: { type: 'json_object' }` was asked for. */
  json: boolean;
  /** The whole parsed body, for anything not lifted out above. */
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

export type FakeChatResponder = (
  request: FakeChatRequest,
) => FakeChatBehaviour | string | Promise<FakeChatBehaviour | string>;

export interface RecordedRequest {
  endpoint: 'chat' | 'embeddings' | 'unknown';
  method: string;
  /** Path without the query, e.g. `/v1/chat/completions`. */
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; undefined when the body was not JSON. */
  body: unknown;
  /** The HTTP status answered; undefined while unanswered (stalled, slow, or abandoned by the client). */
  status?: number;
}

export interface FakeTotals {
  /** Requests received on any route. */
  calls: number;
  chatCalls: number;
  embeddingCalls: number;
  /** Tokens reported in `usage` of successful answers only. */
  promptTokens: number;
  completionTokens: number;
  /** Texts embedded in successful embeddings answers. */
  embeddedTexts: number;
}

export interface FakeOpenAiServerOptions {
  /** Answers chat requests the queue does not; default "OK", or "{}" when JSON was asked for. */
  chat?: FakeChatResponder;
  /** Length of embedding vectors unless a request sends `dimensions` (default 8). */
  embeddingDimensions?: number;
  /** Delay before every answer whose behaviour sets none (default 0). */
  latencyMs?: number;
}

export interface FakeOpenAiServer {
  /** Base URL for the `openai` client, e.g. `http://127.0.0.1:43121/v1`. */
  readonly url: string;
  /** Scheme, host and port, for clients that add their own prefix (Azure). */
  readonly origin: string;
  /** Every request received, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** The bodies of the chat requests, as responders see them. */
  chatRequests: () => FakeChatRequest[];
  readonly totals: Readonly<FakeTotals>;
  /** Requests received and not yet answered or abandoned. */
  readonly inFlight: number;
  /** The most requests ever in flight at once (since start or `reset`). */
  readonly maxConcurrent: number;
  /** Behaviours for the next chat requests, in order. */
  enqueue: (...behaviours: FakeChatBehaviour[]) => void;
  /** Behaviours for the next embeddings requests, in order. */
  enqueueEmbeddings: (...behaviours: FakeEmbeddingsBehaviour[]) => void;
  /** Behaviours still queued (chat, embeddings). */
  readonly queued: { chat: number; embeddings: number };
  /** Replaces the chat responder. */
  setChatResponder: (responder: FakeChatResponder | undefined) => void;
  /** Forgets requests, totals, the concurrency peak and queued behaviours (between benchmark rounds). */
  reset: () => void;
  /** Ends stalled requests, drops connections and stops listening. */
  close: () => Promise<void>;
}

/** ⌈characters / 4⌉: the approximation used for every token count here. */
export function approximateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The deterministic vector of a text: SHA-256 of the text and a block counter, bytes mapped to
 * [-1, 1). Not normalised, so a client's normalisation is visible.
 */
export function fakeVector(text: string, dimensions: number): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}\u0000${text}`).digest();
    for (const byte of digest) {
      if (values.length === dimensions) break;
      values.push((byte - 128) / 128);
    }
  }
  return values;
}

const INVALID_JSON = '{"interactions": [{"subject": "Doja Cat", "object": ';

class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

function errorBody(status: number, message: string): unknown {
  const type =
    status === 429
      ? 'rate_limit_exceeded'
      : status === 401
        ? 'invalid_request_error'
        : status >= 500
          ? 'server_error'
          : 'invalid_request_error';
  return { error: { message, type, param: null, code: status === 401 ? 'invalid_api_key' : null } };
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  // Content parts: [{ type: 'text', text }…]
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : ''))
      .join('');
  }
  return '';
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeOpenAiServer(options: FakeOpenAiServerOptions = {}): Promise<FakeOpenAiServer> {
  const dimensions = options.embeddingDimensions ?? 8;
  if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError('embeddingDimensions must be ≥ 1');
  const defaultLatency = options.latencyMs ?? 0;
  let responder = options.chat;
  let requests: RecordedRequest[] = [];
  let chatQueue: FakeChatBehaviour[] = [];
  let embeddingsQueue: FakeEmbeddingsBehaviour[] = [];
  const emptyTotals = (): FakeTotals => ({
    calls: 0,
    chatCalls: 0,
    embeddingCalls: 0,
    promptTokens: 0,
    completionTokens: 0,
    embeddedTexts: 0,
  });
  let totals = emptyTotals();
  let inFlight = 0;
  let maxConcurrent = 0;
  let completionCounter = 0;
  const timers = new Set<NodeJS.Timeout>();

  const toChatRequest = (body: Record<string, unknown>, headers: IncomingHttpHeaders): FakeChatRequest => {
    const messages = Array.isArray(body.messages) ? (body.messages as { role?: unknown; content?: unknown }[]) : [];
    const responseFormat = body.response_format as { type?: unknown } | undefined;
    return {
      model: typeof body.model === 'string' ? body.model : '',
      messages: messages.map((m) => ({ role: String(m.role), content: messageText(m.content) })),
      ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
      ...(typeof body.max_tokens === 'number' ? { maxTokens: body.max_tokens } : {}),
      json: responseFormat?.type === 'json_object',
      body,
      headers,
    };
  };

  const statusAnswer = (behaviour: { status: number; retryAfterSeconds?: number; message?: string }): HttpAnswer =>
    new HttpAnswer(
      behaviour.status,
      errorBody(behaviour.status, behaviour.message ?? `fake server answered ${behaviour.status}`),
      behaviour.retryAfterSeconds === undefined ? {} : { 'retry-after': String(behaviour.retryAfterSeconds) },
    );

  const chatAnswer = (request: FakeChatRequest, behaviour: Exclude<FakeChatBehaviour, { kind: 'stall' }>) => {
    if (behaviour.kind === 'status') return statusAnswer(behaviour);
    const content =
      behaviour.kind === 'reply'
        ? behaviour.content
        : behaviour.kind === 'json'
          ? JSON.stringify({ ...behaviour.value, ...behaviour.extraKeys })
          : behaviour.kind === 'invalid-json'
            ? INVALID_JSON
            : 'x'.repeat(behaviour.chars ?? 1_000_000);
    const estimated = {
      prompt_tokens: request.messages.reduce((sum, m) => sum + approximateTokens(m.content), 0),
      completion_tokens: approximateTokens(content),
    };
    const usage = behaviour.kind === 'reply' && behaviour.usage !== undefined ? behaviour.usage : estimated;
    if (usage !== 'omit') {
      totals.promptTokens += usage.prompt_tokens;
      totals.completionTokens += usage.completion_tokens;
    }
    completionCounter += 1;
    return new HttpAnswer(200, {
      id: `chatcmpl-fake-${completionCounter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal: null },
          finish_reason: behaviour.kind === 'reply' ? (behaviour.finishReason ?? 'stop') : 'stop',
          logprobs: null,
        },
      ],
      ...(usage === 'omit' ? {} : { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }),
    });
  };

  const embeddingsAnswer = (body: Record<string, unknown>): HttpAnswer => {
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || !input.every((t) => typeof t === 'string')) {
      return new HttpAnswer(400, errorBody(400, 'the fake server embeds strings only'));
    }
    const length = typeof body.dimensions === 'number' ? body.dimensions : dimensions;
    const base64 = body.encoding_format === 'base64';
    const promptTokens = input.reduce((sum, t) => sum + approximateTokens(t), 0);
    totals.promptTokens += promptTokens;
    totals.embeddedTexts += input.length;
    return new HttpAnswer(200, {
      object: 'list',
      model: body.model,
      data: input.map((text, index) => {
        const vector = fakeVector(text, length);
        return {
          object: 'embedding',
          index,
          embedding: base64 ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector,
        };
      }),
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    });
  };

  const send = (response: ServerResponse, record: RecordedRequest, answer: HttpAnswer, delayMs: number): void => {
    const write = () => {
      if (response.destroyed || response.writableEnded) return;
      record.status = answer.status;
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      response.end(JSON.stringify(answer.body));
    };
    if (delayMs <= 0) {
      write();
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      write();
    }, delayMs);
    timers.add(timer);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const endpoint = url.pathname.endsWith('/chat/completions')
      ? 'chat'
      : url.pathname.endsWith('/embeddings')
        ? 'embeddings'
        : 'unknown';
    const raw = await readBody(request);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const record: RecordedRequest = {
      endpoint,
      method: request.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
      body,
    };
    requests.push(record);
    totals.calls += 1;

    if (request.method !== 'POST' || endpoint === 'unknown') {
      send(response, record, new HttpAnswer(404, errorBody(404, `no route ${url.pathname}`)), 0);
      return;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      send(response, record, new HttpAnswer(400, errorBody(400, 'the body must be a JSON object')), 0);
      return;
    }
    const fields = body as Record<string, unknown>;

    if (endpoint === 'embeddings') {
      totals.embeddingCalls += 1;
      const behaviour = embeddingsQueue.shift() ?? { kind: 'vectors' };
      if (behaviour.kind === 'stall') return;
      const answer = behaviour.kind === 'status' ? statusAnswer(behaviour) : embeddingsAnswer(fields);
      send(response, record, answer, behaviour.delayMs ?? defaultLatency);
      return;
    }

    totals.chatCalls += 1;
    if (fields.stream === true) {
      send(response, record, new HttpAnswer(400, errorBody(400, 'the fake server does not stream')), 0);
      return;
    }
    const chatRequest = toChatRequest(fields, request.headers);
    let behaviour: FakeChatBehaviour | string | undefined = chatQueue.shift();
    if (behaviour === undefined && responder !== undefined) behaviour = await responder(chatRequest);
    behaviour ??= chatRequest.json ? '{}' : 'OK';
    if (typeof behaviour === 'string') behaviour = { kind: 'reply', content: behaviour };
    if (behaviour.kind === 'stall') return;
    send(response, record, chatAnswer(chatRequest, behaviour), behaviour.delayMs ?? defaultLatency);
  };

  const server = createServer((request, response) => {
    inFlight += 1;
    maxConcurrent = Math.max(maxConcurrent, inFlight);
    // 'close' fires once the answer is sent or the client went away, whichever comes first.
    response.once('close', () => (inFlight -= 1));
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent || response.destroyed) return;
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify(errorBody(500, `fake server failure: ${String(error)}`)));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    url: `${origin}/v1`,
    origin,
    get requests() {
      return requests;
    },
    chatRequests: () =>
      requests
        .filter((r) => r.endpoint === 'chat' && typeof r.body === 'object' && r.body !== null)
        .map((r) => toChatRequest(r.body as Record<string, unknown>, r.headers)),
    get totals() {
      return totals;
    },
    get inFlight() {
      return inFlight;
    },
    get maxConcurrent() {
      return maxConcurrent;
    },
    get queued() {
      return { chat: chatQueue.length, embeddings: embeddingsQueue.length };
    },
    enqueue: (...behaviours) => void chatQueue.push(...behaviours),
    enqueueEmbeddings: (...behaviours) => void embeddingsQueue.push(...behaviours),
    setChatResponder: (next) => {
      responder = next;
    },
    reset: () => {
      requests = [];
      totals = emptyTotals();
      chatQueue = [];
      embeddingsQueue = [];
      maxConcurrent = inFlight;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Stalled and slow requests hold their connections open; end them so close() returns.
      server.closeAllConnections();
      await closed;
    },
  };
}

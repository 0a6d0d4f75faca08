import { setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AzureOpenAI,
} from 'openai';
import type { ChatCompletion as WireCompletion } from 'openai/resources/chat/completions';
import { Registry } from 'prom-client';
import {
  ChatModelError,
  type ChatCompletion,
  type ChatModel,
  type ChatRequest,
} from '../../processors/extract/chat-model.js';
import { llmConfigFromEnv, type LlmConfig, type LlmConfigOptions } from '../../processors/extract/llm-config.js';
import { retryAfterFromHeaders, retryDelay } from '../../processors/retry/backoff.js';
import { llmMetrics, type LlmMetrics } from './llm-metrics.js';
import { RequestSlots } from '../../processors/extract/request-slots.js';
import { cacheKey, ResponseCache, type CacheLogger, type CachedAnswer } from './response-cache.js';
import { TokenBudget, type BudgetReservation } from '../../processors/extract/token-budget.js';

export interface OpenAiChatModelOptions {
  /** Where the `neon_llm_*` families go; a private registry when absent. */
  registry?: Registry;
  /** Purposes named in metric labels (default m1, m2, answer); others count as `other`. */
  purposes?: readonly string[];
  /** Clock of the token budget; injected in tests so an hour passes at once. */
  now?: () => number;
  /** How to wait between attempts (tests record the waits instead of sleeping). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
  random?: () => number;
  /** Warnings that do not fail a completion (an unwritable cache). Never receives prompts or keys. */
  log?: CacheLogger;
}

/** Reserved for the answer when a request sets no `maxTokens`, so the budget check has a bound. */
const DEFAULT_COMPLETION_RESERVE = 512;

/**
 * Tokens of text the endpoint did not count for us: about 4 characters per token for English
 * (OpenAI's rule of thumb), plus a few tokens of chat framing per message.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function estimatePromptTokens(request: ChatRequest): number {
  return request.messages.reduce((sum, m) => sum + 4 + estimateTokens(m.content), 0);
}

/**
 * A ChatModel for any OpenAI-compatible chat endpoint (OpenAI, Azure OpenAI, vLLM, Ollama,
 * llama.cpp server) through the `openai` client.
 *
 * One completion goes: response cache (memory, then disk) → hourly token budget (fails fast) → a
 * bounded concurrency slot → attempts. The client's own retries are off (`maxRetries: 0`) so that
 * one policy applies here: full-jitter exponential backoff on 429 (Retry-After honoured up to the
 * cap), 408/409/5xx, connection errors and timeouts; 401/403 fail at once as `llm_unauthorized`,
 * other 4xx as `llm_rejected`. Each attempt times out after `timeoutMs`, shorter than the Kafka
 * consumer session. Only successful answers are cached; tokens a failed answer still cost (refused
 * as too long, say) are counted and charged to the budget.
 *
 * Replay-safe: the same request is answered from the cache without a call.
 */
export class OpenAiChatModel implements ChatModel {
  readonly model: string;
  readonly #config: LlmConfig;
  readonly #client: OpenAI;
  readonly #cache: ResponseCache;
  readonly #budget: TokenBudget | undefined;
  readonly #slots: RequestSlots;
  readonly #metrics: LlmMetrics;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<unknown>;
  readonly #random: () => number;
  readonly #closing = new AbortController();
  #reported = { active: 0, queued: 0 };

  constructor(config: LlmConfig, options: OpenAiChatModelOptions = {}) {
    if (!Number.isInteger(config.retry.attempts) || config.retry.attempts < 1) {
      throw new RangeError('retry.attempts must be a positive integer');
    }
    this.model = config.model;
    this.#config = config;
    this.#cache = new ResponseCache({
      ...(config.cacheDir === undefined ? {} : { dir: config.cacheDir }),
      ...config.memoryCache,
      ...(options.log === undefined ? {} : { log: options.log }),
    });
    this.#budget =
      config.tokensPerHour === undefined
        ? undefined
        : new TokenBudget(config.tokensPerHour, options.now === undefined ? {} : { now: options.now });
    this.#slots = new RequestSlots(config.concurrency, config.maxQueued);
    // Every attempt in flight (and each backoff wait) listens on the one closing signal.
    setMaxListeners(2 * config.concurrency + 10, this.#closing.signal);
    this.#metrics = llmMetrics(options.registry ?? new Registry(), options.purposes);
    this.#sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }));
    this.#random = options.random ?? Math.random;

    const common = {
      // Local servers often need no key; the client refuses to start without one.
      apiKey: config.apiKey?.reveal() ?? 'no-key',
      maxRetries: 0,
      timeout: config.timeoutMs,
      // Explicit, so nothing is picked up from OPENAI_* variables behind the configuration's back,
      // and the client never logs requests (their headers carry the key).
      organization: null,
      project: null,
      logLevel: 'off' as const,
    };
    this.#client = config.azure
      ? new AzureOpenAI({
          ...common,
          // baseURL rather than `endpoint`: the client would also read OPENAI_BASE_URL and refuse both.
          baseURL: `${config.baseUrl}/openai`,
          apiVersion: config.azure.apiVersion,
          deployment: config.azure.deployment,
        })
      : new OpenAI({ ...common, baseURL: config.baseUrl });
  }

  /** Requests holding a slot / waiting for one. */
  get inFlight(): number {
    return this.#slots.active;
  }

  get queued(): number {
    return this.#slots.queued;
  }

  /** Tokens left in the hourly budget; undefined without a budget. */
  budgetRemaining(): number | undefined {
    return this.#budget?.remaining();
  }

  async complete(request: ChatRequest): Promise<ChatCompletion> {
    const { purpose } = request;
    try {
      this.#check(request);
      const key = cacheKey(this.model, request);
      const hit = await this.#cache.get(key);
      if (hit !== undefined) {
        this.#metrics.cacheHit(hit.layer);
        this.#metrics.call(purpose, 'cached');
        return { ...hit.answer, cached: true };
      }
      const estimate = estimatePromptTokens(request) + (request.maxTokens ?? DEFAULT_COMPLETION_RESERVE);
      const reservation = this.#budget?.reserve(estimate);
      const started = performance.now();
      try {
        const answer = await this.#withSlot(() => this.#attempts(request, reservation));
        await this.#cache.put(key, answer);
        this.#metrics.call(purpose, 'ok');
        return { ...answer, cached: false };
      } finally {
        reservation?.cancel();
        this.#metrics.latency(purpose, (performance.now() - started) / 1000);
      }
    } catch (caught) {
      const failure = this.#closing.signal.aborted ? closedError(caught) : classifyChatFailure(caught, this.#secret());
      this.#metrics.failure(failure.code);
      this.#metrics.call(purpose, 'failed');
      throw failure;
    }
  }

  /** Refuses new completions, fails those waiting for a slot and aborts those in flight. */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    this.#slots.close();
    this.#syncGauges();
  }

  #check(request: ChatRequest): void {
    if (this.#closing.signal.aborted) throw closedError();
    if (request.messages.length === 0) throw new ChatModelError('llm_rejected', 'a completion needs messages', false);
    const { maxTokens } = request;
    if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 1)) {
      throw new ChatModelError('llm_rejected', 'maxTokens must be a positive integer', false);
    }
  }

  async #withSlot<T>(task: () => Promise<T>): Promise<T> {
    const acquiring = this.#slots.acquire();
    this.#syncGauges();
    let release: (() => void) | undefined;
    try {
      release = await acquiring;
      this.#syncGauges();
      return await task();
    } finally {
      release?.();
      this.#syncGauges();
    }
  }

  /** The gauges move by the change since the last report, so clients sharing a registry add up. */
  #syncGauges(): void {
    const { active, queued } = this.#slots;
    this.#metrics.inFlight(active - this.#reported.active);
    this.#metrics.queued(queued - this.#reported.queued);
    this.#reported = { active, queued };
  }

  async #attempts(request: ChatRequest, reservation: BudgetReservation | undefined): Promise<CachedAnswer> {
    const { retry } = this.#config;
    for (let attempt = 1; ; attempt++) {
      let waitMs: number | undefined;
      try {
        return await this.#attempt(request, reservation);
      } catch (caught) {
        const failure = classifyChatFailure(caught, this.#secret());
        if (!failure.retriable || attempt >= retry.attempts || this.#closing.signal.aborted) throw failure;
        this.#metrics.retry(failure.code);
        if (caught instanceof APIError)
          waitMs = retryAfterFromHeaders(caught.headers as Headers | undefined, Date.now());
      }
      // Full jitter: callers that failed together do not come back together.
      await this.#sleep(retryDelay(attempt, retry, this.#random, waitMs), this.#closing.signal);
    }
  }

  async #attempt(request: ChatRequest, reservation: BudgetReservation | undefined): Promise<CachedAnswer> {
    // One signal per attempt, aborted by close(): the client leaves a listener on the signal it is
    // given, so handing it the long-lived closing signal would grow that signal by one per call.
    const attempt = new AbortController();
    const abort = (): void => attempt.abort(this.#closing.signal.reason);
    this.#closing.signal.addEventListener('abort', abort, { once: true });
    try {
      return await this.#attemptWith(request, reservation, attempt.signal);
    } finally {
      this.#closing.signal.removeEventListener('abort', abort);
    }
  }

  async #attemptWith(
    request: ChatRequest,
    reservation: BudgetReservation | undefined,
    signal: AbortSignal,
  ): Promise<CachedAnswer> {
    const response: WireCompletion = await this.#client.chat.completions.create(
      {
        model: this.model,
        messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
        temperature: request.temperature ?? 0,
        ...(request.maxTokens === undefined ? {} : { [this.#config.maxTokensField]: request.maxTokens }),
        ...(request.json === true ? { response_format: { type: 'json_object' as const } } : {}),
      },
      { signal },
    );
    const choice = Array.isArray(response.choices) ? response.choices[0] : undefined;
    const message = choice?.message as { content?: unknown; refusal?: unknown } | undefined;
    const text = typeof message?.content === 'string' ? message.content : undefined;

    // Tokens are spent whether or not the answer is usable; servers that omit usage are estimated.
    const promptTokens = validCount(response.usage?.prompt_tokens) ?? estimatePromptTokens(request);
    const completionTokens = validCount(response.usage?.completion_tokens) ?? estimateTokens(text ?? '');
    reservation?.settle(promptTokens + completionTokens);
    const { purpose } = request;
    this.#metrics.tokens(purpose, promptTokens, completionTokens);
    const price = this.#config.pricePer1k;
    this.#metrics.cost(purpose, (promptTokens * price.prompt + completionTokens * price.completion) / 1000);

    if (choice === undefined) {
      throw new ChatModelError('llm_unavailable', 'the endpoint answered without a choice', true);
    }
    if (text === undefined) {
      const refused = typeof message?.refusal === 'string' && message.refusal !== '';
      throw new ChatModelError(
        'llm_rejected',
        refused ? 'the model refused to answer' : 'the endpoint answered without text',
        false,
      );
    }
    if (text.length > this.#config.maxResponseChars) {
      throw new ChatModelError(
        'llm_rejected',
        `the answer has ${text.length} characters, more than the bound of ${this.#config.maxResponseChars}`,
        false,
      );
    }
    const model = typeof response.model === 'string' && response.model !== '' ? response.model : this.model;
    return { text, model, promptTokens, completionTokens };
  }

  #secret(): string | undefined {
    return this.#config.apiKey?.reveal();
  }
}

/** The configured chat model, or undefined when none is configured (the offline extractor runs then). */
export function chatModelFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: OpenAiChatModelOptions & LlmConfigOptions = {},
): OpenAiChatModel | undefined {
  const setting = llmConfigFromEnv(env, options);
  return setting.kind === 'none' ? undefined : new OpenAiChatModel(setting, options);
}

function validCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** Server text is cut short (it may echo the prompt) and cleared of the key (some servers echo that too). */
function brief(text: string, secret: string | undefined): string {
  let oneLine = text.replace(/\s+/g, ' ').trim();
  if (secret !== undefined && secret.length >= 4) oneLine = oneLine.split(secret).join('<redacted>');
  return oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine;
}

function closedError(cause?: unknown): ChatModelError {
  return new ChatModelError('llm_unavailable', 'the LLM client is closed', false, { cause });
}

/** Maps one failed attempt to a ChatModelError whose `retriable` decides whether to try again. */
export function classifyChatFailure(error: unknown, secret?: string): ChatModelError {
  if (error instanceof ChatModelError) return error;
  if (error instanceof APIUserAbortError) return closedError(error);
  if (error instanceof APIConnectionTimeoutError) {
    return new ChatModelError('llm_timeout', 'the LLM endpoint did not answer in time', true, { cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new ChatModelError('llm_unavailable', 'the LLM endpoint is unreachable', true, { cause: error });
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    // No `cause` here: the client's error holds the server's body and headers whole, and servers
    // echo prompts and even keys into them; the status and a redacted excerpt are enough.
    const status = error.status;
    // The client's message starts with the status again.
    const text = error.message.replace(new RegExp(`^${status}\\s*`), '');
    const said = `the LLM endpoint answered HTTP ${status}${text === '' ? '' : `: ${brief(text, secret)}`}`;
    if (status === 401 || status === 403) {
      return new ChatModelError('llm_unauthorized', `${said} (check NEON_LLM_KEY)`, false);
    }
    if (status === 429) return new ChatModelError('llm_rate_limited', said, true);
    if (status === 408) return new ChatModelError('llm_timeout', said, true);
    // 409 is a lock contention OpenAI asks clients to retry; 5xx may succeed later unchanged.
    if (status === 409 || status >= 500) return new ChatModelError('llm_unavailable', said, true);
    return new ChatModelError('llm_rejected', said, false);
  }
  const text = error instanceof Error ? error.message : String(error);
  return new ChatModelError('llm_unavailable', `the LLM call failed: ${brief(text, secret)}`, true, { cause: error });
}

/**
 * What the extraction and answering stages need from a chat LLM: one completion for a list of
 * messages. The OpenAI-compatible client (retries, budget, cache, metrics) implements it; tests use
 * the same client against a fake OpenAI-compatible HTTP server.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Upper bound on generated tokens. */
  maxTokens?: number;
  /** Default 0: extraction must be repeatable. */
  temperature?: number;
  /** Ask for a JSON object (OpenAI `response_format: json_object`) when the endpoint supports it. */
  json?: boolean;
  /** Names the caller in metrics (`m1`, `m2`, `answer`); a bounded set. */
  purpose: string;
}

export interface ChatCompletion {
  text: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** True when the answer came from the response cache (no call, no cost). */
  cached: boolean;
}

export type ChatModelErrorCode =
  | 'llm_unavailable' // connection refused, 5xx after retries
  | 'llm_rate_limited' // 429 after retries
  | 'llm_timeout'
  | 'llm_budget_exhausted' // the hourly token budget is spent: retry later
  | 'llm_rejected' // 4xx other than 429: the request itself is wrong (e.g. context too long)
  | 'llm_unauthorized'; // 401/403: an operator must fix the key

export class ChatModelError extends Error {
  override readonly name = 'ChatModelError';
  constructor(
    readonly code: ChatModelErrorCode,
    message: string,
    readonly retriable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface ChatModel {
  /** Model name as configured; stamped on every interaction it produced. */
  readonly model: string;
  complete(request: ChatRequest): Promise<ChatCompletion>;
  close(): Promise<void>;
}

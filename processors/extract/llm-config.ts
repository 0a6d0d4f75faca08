import { join } from 'node:path';
import { z } from 'zod';
import { Secret } from '../../schemas/connection-config.js';
import { ConfigError, defaultDirectories } from '../../schemas/local-infra-config.js';

/**
 * Which chat LLM the extraction and answering stages use, from an environment-like object (tests
 * pass their own; nothing here reads `process.env`):
 *
 *   NEON_LLM_URL                     base URL of an OpenAI-compatible API (default
 *                                    https://api.openai.com/v1 when only a key is set); for Azure
 *                                    the resource endpoint, https://<resource>.openai.azure.com
 *   NEON_LLM_KEY / OPENAI_API_KEY    bearer key (the first wins); required for api.openai.com and Azure
 *   NEON_LLM_MODEL                   model name (default gpt-4o-mini on api.openai.com; required elsewhere,
 *                                    except on Azure where the deployment name stands in)
 *   NEON_LLM_AZURE_API_VERSION       Azure OpenAI: the api-version query parameter; selects the Azure client
 *   NEON_LLM_AZURE_DEPLOYMENT        Azure OpenAI: the deployment (default: the model name)
 *   NEON_LLM_TIMEOUT_MS              per attempt (default 20,000); must stay below the Kafka consumer session
 *   NEON_LLM_MAX_ATTEMPTS            attempts per completion, the first included (default 4)
 *   NEON_LLM_CONCURRENCY             requests in flight at once (default 4)
 *   NEON_LLM_MAX_QUEUED              requests that may wait for a slot before refusal (default 64)
 *   NEON_LLM_TOKENS_PER_HOUR         prompt + completion tokens per sliding hour (default: no budget)
 *   NEON_LLM_PRICE_IN_PER_1K         price of 1,000 prompt tokens, for the cost estimate (default 0)
 *   NEON_LLM_PRICE_OUT_PER_1K        price of 1,000 completion tokens (default 0)
 *   NEON_LLM_MAX_TOKENS_FIELD        max_tokens or max_completion_tokens: how the answer's length bound is
 *                                    sent (default max_completion_tokens on api.openai.com, whose reasoning
 *                                    models refuse max_tokens; max_tokens elsewhere, as Ollama and older
 *                                    servers know only that)
 *   NEON_LLM_CACHE_DIR               response cache directory (default <cache dir>/llm-responses;
 *                                    `off` keeps the cache in memory only)
 *
 * With neither a URL nor a key set there is no LLM: the result is `{ kind: 'none' }`, not an error,
 * because the product then runs its offline extractor and extractive answers. Every problem is
 * listed at once.
 */
export type LlmSetting = NoLlm | LlmConfig;

export interface NoLlm {
  kind: 'none';
}

export interface LlmConfig {
  kind: 'openai';
  baseUrl: string;
  /** Absent for local servers that need none; never printed (see Secret). */
  apiKey?: Secret;
  model: string;
  /** Set for Azure OpenAI, which takes the key in `api-key` and routes by deployment. */
  azure?: { apiVersion: string; deployment: string };
  timeoutMs: number;
  retry: RetryPolicy;
  concurrency: number;
  maxQueued: number;
  /** Undefined: no hourly budget. */
  tokensPerHour?: number;
  pricePer1k: { prompt: number; completion: number };
  /** Undefined: answers are cached in memory only. */
  cacheDir?: string;
  memoryCache: { maxEntries: number; maxChars: number };
  /** A longer answer is refused (`llm_rejected`) rather than cached and passed on. */
  maxResponseChars: number;
  /** The request field that carries ChatRequest.maxTokens. */
  maxTokensField: MaxTokensField;
}

export type MaxTokensField = 'max_tokens' | 'max_completion_tokens';

export interface RetryPolicy {
  /** Attempts per completion, the first included. */
  attempts: number;
  /** Full-jitter backoff: a uniform wait in [0, min(capMs, baseMs · 2^(attempt-1))). */
  baseMs: number;
  /** Also the longest Retry-After that is honoured. */
  capMs: number;
}

export const OPENAI_CHAT_URL = 'https://api.openai.com/v1';
export const DEFAULT_OPENAI_CHAT_MODEL = 'gpt-4o-mini';
/** The consumer session of `streams/kafka/kafka-transport.ts`: one attempt must end well within it. */
export const KAFKA_SESSION_TIMEOUT_MS = 30_000;

export const LLM_DEFAULTS = {
  timeoutMs: 20_000,
  retry: { attempts: 4, baseMs: 500, capMs: 10_000 } satisfies RetryPolicy,
  concurrency: 4,
  maxQueued: 64,
  memoryCache: { maxEntries: 1_000, maxChars: 16_000_000 },
  maxResponseChars: 200_000,
} as const;

const positiveInt = (max: number) => {
  const message = `must be an integer from 1 to ${max}`;
  return z.coerce
    .number({ error: message })
    .refine((n) => Number.isInteger(n) && n >= 1 && n <= max, message)
    .optional();
};
const PRICE = 'must be a price of at least 0';
const price = z.coerce
  .number({ error: PRICE })
  .refine((n) => Number.isFinite(n) && n >= 0, PRICE)
  .optional();

const envSchema = z.object({
  NEON_LLM_URL: z
    .string()
    .trim()
    .refine((v) => URL.canParse(v) && /^https?:\/\//.test(v), 'must be an http(s) URL')
    .transform((v) => v.replace(/\/+$/, ''))
    .optional(),
  NEON_LLM_KEY: z.string().optional(),
  OPENAI_API_KEY: z.string().optional(),
  NEON_LLM_MODEL: z.string().trim().min(1, 'must not be empty').optional(),
  NEON_LLM_AZURE_API_VERSION: z.string().trim().min(1, 'must not be empty').optional(),
  NEON_LLM_AZURE_DEPLOYMENT: z.string().trim().min(1, 'must not be empty').optional(),
  NEON_LLM_TIMEOUT_MS: positiveInt(600_000),
  NEON_LLM_MAX_ATTEMPTS: positiveInt(20),
  NEON_LLM_CONCURRENCY: positiveInt(256),
  NEON_LLM_MAX_QUEUED: positiveInt(100_000),
  NEON_LLM_TOKENS_PER_HOUR: positiveInt(1e12),
  NEON_LLM_PRICE_IN_PER_1K: price,
  NEON_LLM_PRICE_OUT_PER_1K: price,
  NEON_LLM_MAX_TOKENS_FIELD: z
    .enum(['max_tokens', 'max_completion_tokens'], 'must be max_tokens or max_completion_tokens')
    .optional(),
  NEON_LLM_CACHE_DIR: z.string().trim().optional(),
});

type Env = Readonly<Record<string, string | undefined>>;

export interface LlmConfigOptions {
  /** The consumer session the stages run with; an attempt must time out before it. */
  sessionTimeoutMs?: number;
}

export function llmConfigFromEnv(env: Env, options: LlmConfigOptions = {}): LlmSetting {
  // Empty variables count as unset, as shells and compose files often leave them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const key = present.NEON_LLM_KEY ?? present.OPENAI_API_KEY;
  if (present.NEON_LLM_URL === undefined && key === undefined) return { kind: 'none' };

  // Field by field, so a bad value in one variable does not hide the cross-field problems below.
  const problems: string[] = [];
  const fields: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(envSchema.shape)) {
    const parsed = schema.safeParse(present[name]);
    if (parsed.success) fields[name] = parsed.data;
    else problems.push(...parsed.error.issues.map((i) => `${name}: ${i.message}`));
  }
  const e = fields as Partial<z.infer<typeof envSchema>>;

  const baseUrl = e.NEON_LLM_URL ?? (present.NEON_LLM_URL === undefined ? OPENAI_CHAT_URL : undefined);
  const onOpenAi = baseUrl !== undefined && new URL(baseUrl).hostname === 'api.openai.com';
  const apiVersion = e.NEON_LLM_AZURE_API_VERSION;
  if (apiVersion === undefined && e.NEON_LLM_AZURE_DEPLOYMENT !== undefined) {
    problems.push('NEON_LLM_AZURE_DEPLOYMENT: only used with NEON_LLM_AZURE_API_VERSION (Azure OpenAI)');
  }
  if (apiVersion !== undefined && present.NEON_LLM_URL === undefined) {
    problems.push('NEON_LLM_URL: required for Azure OpenAI (the resource endpoint)');
  }
  if (key === undefined && (onOpenAi || apiVersion !== undefined)) {
    problems.push(`NEON_LLM_KEY (or OPENAI_API_KEY): required for ${onOpenAi ? 'api.openai.com' : 'Azure OpenAI'}`);
  }
  const model = e.NEON_LLM_MODEL ?? e.NEON_LLM_AZURE_DEPLOYMENT ?? (onOpenAi ? DEFAULT_OPENAI_CHAT_MODEL : undefined);
  if (model === undefined && present.NEON_LLM_MODEL === undefined) {
    problems.push(
      `NEON_LLM_MODEL: required for an endpoint other than api.openai.com (${apiVersion === undefined ? 'the model it serves' : 'on Azure, NEON_LLM_AZURE_DEPLOYMENT will do'})`,
    );
  }

  const sessionMs = options.sessionTimeoutMs ?? KAFKA_SESSION_TIMEOUT_MS;
  const timeoutMs = e.NEON_LLM_TIMEOUT_MS ?? LLM_DEFAULTS.timeoutMs;
  if (timeoutMs >= sessionMs) {
    problems.push(
      `NEON_LLM_TIMEOUT_MS: must be shorter than the Kafka consumer session (${sessionMs} ms), or a slow answer costs the stage its partitions`,
    );
  }

  const cacheSetting =
    e.NEON_LLM_CACHE_DIR ?? join(present.NEON_CACHE_DIR ?? defaultDirectories(env).cacheDir, 'llm-responses');

  if (problems.length > 0 || baseUrl === undefined || model === undefined) throw new ConfigError(problems);
  const tokensPerHour = e.NEON_LLM_TOKENS_PER_HOUR;
  return {
    kind: 'openai',
    baseUrl,
    ...(key === undefined ? {} : { apiKey: new Secret(key) }),
    model,
    ...(apiVersion === undefined ? {} : { azure: { apiVersion, deployment: e.NEON_LLM_AZURE_DEPLOYMENT ?? model } }),
    timeoutMs,
    retry: { ...LLM_DEFAULTS.retry, attempts: e.NEON_LLM_MAX_ATTEMPTS ?? LLM_DEFAULTS.retry.attempts },
    concurrency: e.NEON_LLM_CONCURRENCY ?? LLM_DEFAULTS.concurrency,
    maxQueued: e.NEON_LLM_MAX_QUEUED ?? LLM_DEFAULTS.maxQueued,
    ...(tokensPerHour === undefined ? {} : { tokensPerHour }),
    pricePer1k: { prompt: e.NEON_LLM_PRICE_IN_PER_1K ?? 0, completion: e.NEON_LLM_PRICE_OUT_PER_1K ?? 0 },
    ...(cacheSetting.toLowerCase() === 'off' ? {} : { cacheDir: cacheSetting }),
    memoryCache: { ...LLM_DEFAULTS.memoryCache },
    maxResponseChars: LLM_DEFAULTS.maxResponseChars,
    maxTokensField: e.NEON_LLM_MAX_TOKENS_FIELD ?? (onOpenAi ? 'max_completion_tokens' : 'max_tokens'),
  };
}

/** A full configuration from the few fields a caller cares about (tests, benchmarks, embedding in code). */
export function llmConfig(
  fields: Pick<LlmConfig, 'baseUrl' | 'model'> & Partial<Omit<LlmConfig, 'retry'>> & { retry?: Partial<RetryPolicy> },
): LlmConfig {
  return {
    kind: 'openai',
    timeoutMs: LLM_DEFAULTS.timeoutMs,
    concurrency: LLM_DEFAULTS.concurrency,
    maxQueued: LLM_DEFAULTS.maxQueued,
    pricePer1k: { prompt: 0, completion: 0 },
    memoryCache: { ...LLM_DEFAULTS.memoryCache },
    maxResponseChars: LLM_DEFAULTS.maxResponseChars,
    maxTokensField: 'max_tokens',
    ...fields,
    retry: { ...LLM_DEFAULTS.retry, ...fields.retry },
  };
}

import { z } from 'zod';
import { Secret } from '../../schemas/connection-config.js';
import { ConfigError, defaultDirectories } from '../../schemas/local-infra-config.js';
import { DEFAULT_LOCAL_MODEL, LOCAL_MODEL_NAMES, LOCAL_MODEL_PINS, type LocalModelName } from './model-pins.js';

/** Defaults of the in-process ONNX embedder, where the environment names none. */
export const LOCAL_DEFAULTS = { batchSize: 1, concurrency: 1, intraOpNumThreads: 1, maxQueuedBatches: 256 } as const;

/** Retries of one request to an OpenAI-compatible embeddings endpoint. */
export interface RetryPolicy {
  /** Attempts per request, the first included. */
  attempts: number;
  baseMs: number;
  capMs: number;
}

export const OPENAI_DEFAULTS = {
  batchSize: 64,
  concurrency: 4,
  maxQueuedRequests: 256,
  timeoutMs: 20_000,
  retry: { attempts: 5, baseMs: 500, capMs: 15_000 } satisfies RetryPolicy,
} as const;

/**
 * Which embedder runs, from an environment-like object (tests pass their own; nothing here reads
 * `process.env`):
 *
 *   NEON_EMBEDDER=local|openai|hashing     local (default): bge-small-en-v1.5-q in-process;
 *                                          openai: an OpenAI-compatible endpoint;
 *                                          hashing: unit tests only, never chosen by default
 *   NEON_EMBEDDINGS_MODEL                  local: bge-small-en-v1.5-q (default), bge-small-en-v1.5,
 *                                          all-MiniLM-L6-v2 or all-MiniLM-L6-v2-q (model-pins.ts);
 *                                          openai: the endpoint's model (default text-embedding-3-small)
 *   NEON_EMBEDDINGS_URL                    openai: base URL (default https://api.openai.com/v1)
 *   NEON_EMBEDDINGS_KEY / OPENAI_API_KEY   openai: bearer key (the first wins); required for api.openai.com
 *   NEON_EMBEDDINGS_DIMENSIONS             openai: vector length, sent to the endpoint (required for
 *                                          models not listed below); hashing: its length (default 384)
 *   NEON_EMBEDDINGS_BATCH_SIZE             texts per inference or request (local 1, openai 64; the
 *                                          quantised local models, -q, take only 1)
 *   NEON_EMBEDDINGS_CONCURRENCY            inferences or requests at once (local 1, openai 4)
 *   NEON_EMBEDDINGS_THREADS                local: cores per inference (intraOpNumThreads, default 1)
 *   NEON_EMBEDDINGS_TIMEOUT_S              openai: per attempt (default 20)
 *   NEON_EMBEDDINGS_ATTEMPTS               openai: attempts per request, first included (default 5)
 *   NEON_CACHE_DIR                         local: where `neon infra prepare` put the model
 *
 * Every problem is listed at once.
 */
export type EmbedderConfig = LocalEmbedderConfig | OpenAiEmbedderConfig | HashingEmbedderConfig;

export interface LocalEmbedderConfig {
  kind: 'local';
  model: LocalModelName;
  cacheDir: string;
  batchSize: number;
  concurrency: number;
  intraOpNumThreads: number;
}

export interface OpenAiEmbedderConfig {
  kind: 'openai';
  baseUrl: string;
  apiKey?: Secret;
  model: string;
  dimensions: number;
  /** Sent only when configured: not every compatible server accepts the parameter. */
  requestDimensions: boolean;
  batchSize: number;
  concurrency: number;
  timeoutMs: number;
  attempts: number;
}

export interface HashingEmbedderConfig {
  kind: 'hashing';
  dimensions: number;
}

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_OPENAI_MODEL = 'text-embedding-3-small';

/** Native vector lengths of OpenAI's embedding models, so the common case needs no setting. */
const KNOWN_OPENAI_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

const positiveInt = (max: number) => {
  const message = `must be an integer from 1 to ${max}`;
  return z.coerce
    .number({ error: message })
    .refine((n) => Number.isInteger(n) && n >= 1 && n <= max, message)
    .optional();
};
const SECONDS = 'must be a number of seconds from 0 to 600';

const envSchema = z.object({
  NEON_EMBEDDER: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['local', 'openai', 'hashing'], 'must be local, openai or hashing'))
    .default('local'),
  NEON_EMBEDDINGS_MODEL: z.string().trim().min(1, 'must not be empty').optional(),
  NEON_EMBEDDINGS_URL: z
    .string()
    .trim()
    .refine((v) => URL.canParse(v) && /^https?:\/\//.test(v), 'must be an http(s) URL')
    .transform((v) => v.replace(/\/+$/, ''))
    .optional(),
  NEON_EMBEDDINGS_KEY: z.string().optional(),
  OPENAI_API_KEY: z.string().optional(),
  NEON_EMBEDDINGS_DIMENSIONS: positiveInt(65_536),
  NEON_EMBEDDINGS_BATCH_SIZE: positiveInt(2048),
  NEON_EMBEDDINGS_CONCURRENCY: positiveInt(64),
  NEON_EMBEDDINGS_THREADS: positiveInt(256),
  NEON_EMBEDDINGS_TIMEOUT_S: z.coerce
    .number({ error: SECONDS })
    .refine((n) => Number.isFinite(n) && n > 0 && n <= 600, SECONDS)
    .optional(),
  NEON_EMBEDDINGS_ATTEMPTS: positiveInt(20),
});

type Env = Readonly<Record<string, string | undefined>>;

/** `a, b, c or d`. */
function oneOf(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)!}`;
}

export function embedderConfigFromEnv(env: Env): EmbedderConfig {
  // Empty variables count as unset, as shells and compose files often leave them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  // Field by field, so a bad value in one variable does not hide the cross-field problems below.
  const problems: string[] = [];
  const fields: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(envSchema.shape)) {
    const parsed = schema.safeParse(present[name]);
    if (parsed.success) fields[name] = parsed.data;
    else problems.push(...parsed.error.issues.map((i) => `${name}: ${i.message}`));
  }
  const e = fields as Partial<z.infer<typeof envSchema>>;
  const kind = e.NEON_EMBEDDER ?? 'local';

  if (kind === 'hashing') {
    if (problems.length > 0) throw new ConfigError(problems);
    return { kind: 'hashing', dimensions: e.NEON_EMBEDDINGS_DIMENSIONS ?? 384 };
  }

  if (kind === 'local') {
    const model = e.NEON_EMBEDDINGS_MODEL ?? DEFAULT_LOCAL_MODEL;
    if (!(LOCAL_MODEL_NAMES as readonly string[]).includes(model)) {
      problems.push(`NEON_EMBEDDINGS_MODEL: the local embedder runs ${oneOf(LOCAL_MODEL_NAMES)}, not ${model}`);
    }
    const pinned = Object.hasOwn(LOCAL_MODEL_PINS, model) ? LOCAL_MODEL_PINS[model as LocalModelName] : undefined;
    if (pinned && e.NEON_EMBEDDINGS_DIMENSIONS !== undefined && e.NEON_EMBEDDINGS_DIMENSIONS !== pinned.dimensions) {
      problems.push(`NEON_EMBEDDINGS_DIMENSIONS: ${model} makes ${pinned.dimensions}-dimensional vectors`);
    }
    if (pinned?.oneTextPerInference && (e.NEON_EMBEDDINGS_BATCH_SIZE ?? 1) > 1) {
      problems.push(
        `NEON_EMBEDDINGS_BATCH_SIZE: ${model} runs one text per inference (its int8 activations are scaled over the whole batch, so batching would change each text's vector)`,
      );
    }
    if (e.NEON_EMBEDDINGS_URL !== undefined) {
      problems.push('NEON_EMBEDDINGS_URL: only used with NEON_EMBEDDER=openai');
    }
    if (problems.length > 0) throw new ConfigError(problems);
    return {
      kind: 'local',
      model: model as LocalModelName,
      cacheDir: env.NEON_CACHE_DIR ?? defaultDirectories(env).cacheDir,
      batchSize: e.NEON_EMBEDDINGS_BATCH_SIZE ?? LOCAL_DEFAULTS.batchSize,
      concurrency: e.NEON_EMBEDDINGS_CONCURRENCY ?? LOCAL_DEFAULTS.concurrency,
      intraOpNumThreads: e.NEON_EMBEDDINGS_THREADS ?? LOCAL_DEFAULTS.intraOpNumThreads,
    };
  }

  const baseUrl = e.NEON_EMBEDDINGS_URL ?? OPENAI_BASE_URL;
  const model = e.NEON_EMBEDDINGS_MODEL ?? DEFAULT_OPENAI_MODEL;
  const key = e.NEON_EMBEDDINGS_KEY ?? e.OPENAI_API_KEY;
  if (key === undefined && new URL(baseUrl).hostname === 'api.openai.com') {
    problems.push('NEON_EMBEDDINGS_KEY (or OPENAI_API_KEY): required for api.openai.com');
  }
  const dimensions = e.NEON_EMBEDDINGS_DIMENSIONS ?? KNOWN_OPENAI_DIMENSIONS[model];
  if (dimensions === undefined) {
    problems.push(`NEON_EMBEDDINGS_DIMENSIONS: required for model ${model} (the length of its vectors)`);
  }
  if (problems.length > 0 || dimensions === undefined) throw new ConfigError(problems);
  return {
    kind: 'openai',
    baseUrl,
    ...(key === undefined ? {} : { apiKey: new Secret(key) }),
    model,
    dimensions,
    requestDimensions: e.NEON_EMBEDDINGS_DIMENSIONS !== undefined,
    batchSize: e.NEON_EMBEDDINGS_BATCH_SIZE ?? OPENAI_DEFAULTS.batchSize,
    concurrency: e.NEON_EMBEDDINGS_CONCURRENCY ?? OPENAI_DEFAULTS.concurrency,
    timeoutMs: Math.round((e.NEON_EMBEDDINGS_TIMEOUT_S ?? OPENAI_DEFAULTS.timeoutMs / 1000) * 1000),
    attempts: e.NEON_EMBEDDINGS_ATTEMPTS ?? OPENAI_DEFAULTS.retry.attempts,
  };
}

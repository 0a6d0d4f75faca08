import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { ChatRequest } from '../../processors/extract/chat-model.js';

/** What a cached completion keeps: enough to answer again without a call. */
export interface CachedAnswer {
  text: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
}

export type CacheLayer = 'memory' | 'disk';

export type CacheLogger = (level: 'warn', message: string, fields?: Record<string, unknown>) => void;

/** Bumped when the key's inputs or the file format change, so old entries are simply missed. */
const CACHE_FORMAT = 1;

/**
 * SHA-256 of exactly what decides the answer: model, messages, temperature, max tokens and the JSON
 * flag, in a fixed order. Defaults are filled in as they are sent, so leaving `temperature` out and
 * passing 0 share an entry. `purpose` only names the caller and is left out.
 */
export function cacheKey(model: string, request: ChatRequest): string {
  const canonical = JSON.stringify([
    CACHE_FORMAT,
    model,
    request.messages.map((m) => [m.role, m.content]),
    request.temperature ?? 0,
    request.maxTokens ?? null,
    request.json ?? false,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

const fileSchema = z.object({
  format: z.literal(CACHE_FORMAT),
  key: z.string(),
  text: z.string(),
  model: z.string(),
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  createdAt: z.string(),
});

export interface ResponseCacheOptions {
  /** One file per key under here; undefined keeps answers in memory only. */
  dir?: string;
  maxEntries: number;
  /** Total characters of cached text held in memory. */
  maxChars: number;
  log?: CacheLogger;
}

/**
 * Successful completions by request key, so a replay of the same chunks costs nothing: a bounded
 * LRU in memory in front of one JSON file per key on disk (`<dir>/<2 hex>/<key>.json`, written to a
 * temporary name and renamed, so a reader never sees half a file and concurrent writers of the same
 * key both leave a whole one). A cache that cannot be read or written is a miss, never a failure of
 * the completion; an unreadable file is treated as absent and later overwritten.
 */
export class ResponseCache {
  readonly #dir: string | undefined;
  readonly #maxEntries: number;
  readonly #maxChars: number;
  readonly #log: CacheLogger | undefined;
  /** Map order is recency order: the first entry is the least recently used. */
  readonly #memory = new Map<string, CachedAnswer>();
  #chars = 0;

  constructor(options: ResponseCacheOptions) {
    if (!Number.isInteger(options.maxEntries) || options.maxEntries < 0) throw new RangeError('maxEntries must be ≥ 0');
    if (!Number.isInteger(options.maxChars) || options.maxChars < 0) throw new RangeError('maxChars must be ≥ 0');
    this.#dir = options.dir;
    this.#maxEntries = options.maxEntries;
    this.#maxChars = options.maxChars;
    this.#log = options.log;
  }

  get memoryEntries(): number {
    return this.#memory.size;
  }

  async get(key: string): Promise<{ answer: CachedAnswer; layer: CacheLayer } | undefined> {
    const remembered = this.#memory.get(key);
    if (remembered !== undefined) {
      this.#memory.delete(key);
      this.#memory.set(key, remembered);
      return { answer: remembered, layer: 'memory' };
    }
    const fromDisk = await this.#read(key);
    if (fromDisk === undefined) return undefined;
    this.#remember(key, fromDisk);
    return { answer: fromDisk, layer: 'disk' };
  }

  async put(key: string, answer: CachedAnswer): Promise<void> {
    this.#remember(key, answer);
    if (this.#dir === undefined) return;
    const path = this.#path(key);
    const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
    const content = JSON.stringify({ format: CACHE_FORMAT, key, ...answer, createdAt: new Date().toISOString() });
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(temporary, content, { flag: 'wx' });
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true }).catch(() => undefined);
      this.#log?.('warn', 'could not write an LLM response to the cache', { code: errorCode(error) });
    }
  }

  #remember(key: string, answer: CachedAnswer): void {
    const previous = this.#memory.get(key);
    if (previous !== undefined) {
      this.#memory.delete(key);
      this.#chars -= previous.text.length;
    }
    // An answer larger than the whole memory bound would evict everything and still not fit.
    if (answer.text.length > this.#maxChars || this.#maxEntries === 0) return;
    this.#memory.set(key, answer);
    this.#chars += answer.text.length;
    for (const [oldest, entry] of this.#memory) {
      if (this.#memory.size <= this.#maxEntries && this.#chars <= this.#maxChars) break;
      this.#memory.delete(oldest);
      this.#chars -= entry.text.length;
    }
  }

  async #read(key: string): Promise<CachedAnswer | undefined> {
    if (this.#dir === undefined) return undefined;
    let raw: string;
    try {
      raw = await readFile(this.#path(key), 'utf8');
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') {
        this.#log?.('warn', 'could not read the LLM response cache', { code: errorCode(error) });
      }
      return undefined;
    }
    let parsed: ReturnType<typeof fileSchema.safeParse>;
    try {
      parsed = fileSchema.safeParse(JSON.parse(raw));
    } catch {
      return undefined;
    }
    if (!parsed.success || parsed.data.key !== key) return undefined;
    const { text, model, promptTokens, completionTokens } = parsed.data;
    return { text, model, promptTokens, completionTokens };
  }

  #path(key: string): string {
    // Keys are hex digests: safe as file names, and the 2-character fan-out keeps directories small.
    return join(this.#dir ?? '', key.slice(0, 2), `${key}.json`);
  }
}

/** An fs error's code (ENOENT, EACCES…): a bounded word, unlike the message, which holds paths. */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unknown';
}

/**
 * `POST /v1/articles`: push intake over HTTP. The body is one article in the JSONL line shape
 * (`url`, `title`, `text` or `html`, `published_at`, `source`, optional `id`) or
 * `{ "articles": [ … ] }` with up to 1,000 of them.
 *
 * Delivery: an article listed under `accepted` has been published (the publisher resolved); one
 * listed under `rejected` has been dead-lettered with its original bytes (the request body for a
 * single article, the item's own JSON for a batch item) and reason code, origin `http`. When the publisher fails the answer is 503 and the client retries the whole request: what
 * was already published is published again under the same deterministic id and overwrites.
 *
 * A replay says what its items are, within the guards (`neon replay` sends what its reader
 * declared): `?min_text_chars=N` (at least 30, the floor for one-sentence summaries) and
 * `?earliest=YYYY-MM-DD` (not before 1900: an archive's old news is accepted, epoch 0 is still a
 * parsing accident).
 *
 * Answers: 202 all accepted; 207 at least one rejected (per-article reasons: `invalid_input` for a
 * batch item of the wrong shape, otherwise normalisation's codes); 400 a body that is not UTF-8
 * JSON, or not an article or a batch; 401 no or a wrong bearer token (checked before the body is read); 413 a
 * body over `maxBodyBytes`; 415 not JSON; 429 (with Retry-After) a token past its request rate, or an
 * address that failed authentication too often; 503 the publisher failed.
 */
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { z } from 'zod';
import {
  IntakeRejection,
  type ArticlePublisher,
  type IntakeRejectionReason,
} from '../processors/intake/article-input.js';
import { decodeUtf8 } from '../processors/intake/decode-body.js';
import {
  DEFAULT_NORMALIZE_OPTIONS,
  normalizeArticle,
  SUMMARY_MIN_TEXT_CHARS,
  type NormalizeOptions,
} from '../processors/intake/normalize-article.js';
import { EARLIEST_REPLAY_PUBLISH_TIME } from '../processors/intake/publish-time.js';
import { articleLineSchema, describeZodIssues, parseArticleLine } from '../processors/intake/article-line.js';
import type { Article } from '../schemas/records.generated.js';
import { BearerTokens } from '../processors/access/bearer-tokens.js';
import { perMinuteLimiter, type RateLimiter } from '../processors/access/rate-limiter.js';
import { serverLogOptions } from './request-log.js';

export const ARTICLES_ROUTE = '/v1/articles';
export const MAX_ARTICLES_PER_REQUEST = 1000;
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Articles of one request published at once: enough to fill a producer batch, bounded. */
const PUBLISH_CONCURRENCY = 16;
/**
 * Requests a minute per intake token, with bursts of a sixth of that: far above what a client
 * sending batches of articles one request at a time needs (`neon replay` sends 200 per request).
 */
export const DEFAULT_INTAKE_RATE_PER_MINUTE = 1200;
/** Failed authentications a minute per address, with bursts of a sixth of that. */
export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 60;

export interface ArticleEndpointOptions {
  publisher: ArticlePublisher;
  /** Accepted bearer tokens; at least one. */
  tokens: readonly string[];
  now?: () => number;
  /** Default 16 MiB. */
  maxBodyBytes?: number;
  normalize?: Partial<NormalizeOptions>;
  /** Requests per intake token. Default DEFAULT_INTAKE_RATE_PER_MINUTE. */
  limiter?: RateLimiter;
  /** Failed authentications per address (shared with the API's routes when served with them). */
  authFailures?: RateLimiter;
}

export interface ArticleEndpointResponse {
  accepted: { id: string; url: string }[];
  rejected: { index: number; reason: IntakeRejectionReason; message: string }[];
}

export interface ArticleEndpointError {
  error:
    | 'unauthorized'
    | 'rate_limited'
    | 'invalid_json'
    | 'invalid_input'
    | 'oversized'
    | 'unsupported_media_type'
    | 'unavailable';
  message: string;
}

const batchSchema = z.object({
  articles: z
    .array(z.unknown())
    .min(1, 'articles must not be empty')
    .max(MAX_ARTICLES_PER_REQUEST, `at most ${MAX_ARTICLES_PER_REQUEST} articles per request`),
});

/**
 * A server with nothing but the article endpoint, for `neon intake` (the query service registers
 * the endpoint on its own server instead); the caller starts it with `listen`.
 */
export function createArticleEndpointServer(options: ArticleEndpointOptions): FastifyInstance {
  const app = Fastify(serverLogOptions('intake-endpoint'));
  registerArticleEndpoint(app, options);
  return app;
}

/** Registers the route in its own encapsulated scope (its body parser and error format stay local). */
export function registerArticleEndpoint(app: FastifyInstance, options: ArticleEndpointOptions): void {
  if (options.tokens.length === 0 || options.tokens.some((t) => t.length === 0)) {
    throw new Error('the article endpoint needs at least one non-empty bearer token');
  }
  const tokens = new BearerTokens(options.tokens);
  const now = options.now ?? Date.now;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const limiter = options.limiter ?? perMinuteLimiter(DEFAULT_INTAKE_RATE_PER_MINUTE);
  const authFailures = options.authFailures ?? perMinuteLimiter(DEFAULT_AUTH_FAILURES_PER_MINUTE);

  void app.register(async (scope) => {
    // The raw bytes are kept: a dead letter carries exactly what the client sent.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
      done(null, body);
    });

    scope.setErrorHandler((error: { statusCode?: number; code?: string; message: string }, _request, reply) => {
      const status = error.statusCode ?? 500;
      if (status === 413) return sendError(reply, 413, 'oversized', `body larger than ${maxBodyBytes} bytes`);
      if (status === 415) return sendError(reply, 415, 'unsupported_media_type', 'send application/json');
      if (status >= 400 && status < 500) return sendError(reply, 400, 'invalid_input', error.message);
      return sendError(reply, 503, 'unavailable', 'articles could not be accepted now; retry');
    });

    scope.addHook('onRequest', async (request, reply) => {
      // An address that failed too often is refused before its token is looked at: otherwise a
      // right guess would still be told apart from the wrong ones.
      const address = `addr:${request.ip}`;
      const lockedOutMs = authFailures.waitMs(address);
      if (lockedOutMs > 0) return sendRateLimited(reply, lockedOutMs, 'too many failed authentication attempts');
      const token = tokens.match(request.headers.authorization);
      if (token === undefined) {
        authFailures.take(address);
        void reply.header('www-authenticate', 'Bearer');
        return sendError(reply, 401, 'unauthorized', 'a valid bearer token is required');
      }
      const waitMs = limiter.take(`token:${token}`);
      if (waitMs > 0) return sendRateLimited(reply, waitMs, 'too many requests');
      return undefined;
    });

    scope.post(ARTICLES_ROUTE, { bodyLimit: maxBodyBytes }, async (request, reply) => {
      const raw = request.body;
      if (!Buffer.isBuffer(raw)) return sendError(reply, 400, 'invalid_json', 'a JSON body is required');
      let body: unknown;
      try {
        body = JSON.parse(decodeUtf8(raw));
      } catch (err) {
        return sendError(reply, 400, 'invalid_json', `body is not JSON: ${err instanceof Error ? err.message : ''}`);
      }
      const items = requestItems(body, raw);
      if (typeof items === 'string') return sendError(reply, 400, 'invalid_input', items);
      const declared = declaredIntake(request.query);
      if (typeof declared === 'string') return sendError(reply, 400, 'invalid_input', declared);
      const normalize: Partial<NormalizeOptions> = { ...options.normalize, ...declared };

      const result: ArticleEndpointResponse = { accepted: [], rejected: [] };
      const accepted: ({ id: string; url: string } | undefined)[] = new Array<undefined>(items.length);
      await forEachBounded(items, PUBLISH_CONCURRENCY, async (item, index) => {
        let article: Article;
        try {
          article = normalizeArticle(parseArticleLine(item.value), now(), normalize);
        } catch (err) {
          if (!(err instanceof IntakeRejection)) throw err;
          await options.publisher.reject(item.raw, err, 'http');
          result.rejected.push({ index, reason: err.reason, message: err.message });
          return;
        }
        await options.publisher.publish(article);
        accepted[index] = { id: article.id, url: article.url };
      });
      result.accepted = accepted.filter((a) => a !== undefined);
      result.rejected.sort((a, b) => a.index - b.index);
      return reply.code(result.rejected.length === 0 ? 202 : 207).send(result);
    });
  });
}

const isoDay = (t: number): string => new Date(t).toISOString().slice(0, 10);

/**
 * What a request may declare of its items (`neon replay` sends what its reader declared), within
 * the guards: summaries have at least 30 characters; archives reach back to 1900, never to epoch 0.
 */
export const articleIntakeQuery = z.strictObject({
  min_text_chars: z
    .string()
    .regex(/^\d+$/, 'a whole number')
    .transform(Number)
    .refine((n) => n >= SUMMARY_MIN_TEXT_CHARS, `at least ${SUMMARY_MIN_TEXT_CHARS}`)
    .optional()
    .describe(
      `Shortest text accepted (at least ${SUMMARY_MIN_TEXT_CHARS}, for one-sentence summaries). ` +
        `Default: ${DEFAULT_NORMALIZE_OPTIONS.minTextChars}.`,
    ),
  earliest: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date, YYYY-MM-DD')
    .transform((d) => Date.parse(`${d}T00:00:00Z`))
    .refine((t) => t >= EARLIEST_REPLAY_PUBLISH_TIME, `a real date not before ${isoDay(EARLIEST_REPLAY_PUBLISH_TIME)}`)
    .optional()
    .describe(
      `Earliest publication date accepted, for archives (not before ${isoDay(EARLIEST_REPLAY_PUBLISH_TIME)}). ` +
        `Default: ${isoDay(DEFAULT_NORMALIZE_OPTIONS.earliestPublishTime)}.`,
    ),
});

/** What a request declares of its items, as normalisation options; or what is wrong with it. */
function declaredIntake(query: unknown): Partial<NormalizeOptions> | string {
  const parsed = articleIntakeQuery.safeParse(query ?? {});
  if (!parsed.success) return describeZodIssues(parsed.error);
  const { min_text_chars: minTextChars, earliest } = parsed.data;
  return {
    ...(minTextChars === undefined ? {} : { minTextChars }),
    ...(earliest === undefined ? {} : { earliestPublishTime: earliest }),
  };
}

/** The request's articles with the bytes each came from, or what is wrong with the body. */
function requestItems(body: unknown, raw: Buffer): { value: unknown; raw: Buffer }[] | string {
  if (typeof body === 'object' && body !== null && !Array.isArray(body) && 'articles' in body) {
    const batch = batchSchema.safeParse(body);
    if (!batch.success) return describeZodIssues(batch.error);
    return batch.data.articles.map((value) => ({ value, raw: Buffer.from(JSON.stringify(value), 'utf8') }));
  }
  // A single article of the wrong shape is the whole request being wrong: say so with a 400.
  const single = articleLineSchema.safeParse(body);
  if (!single.success) return `not an article or {"articles": [...]}: ${describeZodIssues(single.error)}`;
  return [{ value: body, raw }];
}

function sendError(
  reply: FastifyReply,
  status: number,
  error: ArticleEndpointError['error'],
  message: string,
): FastifyReply {
  const body: ArticleEndpointError = { error, message };
  return reply.code(status).type('application/json').send(body);
}

function sendRateLimited(reply: FastifyReply, waitMs: number, what: string): FastifyReply {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  void reply.header('retry-after', String(seconds));
  return sendError(reply, 429, 'rate_limited', `${what}; retry in ${seconds} s`);
}

/** Runs `work` over `items` with at most `limit` at a time; the first failure is rethrown after all settle. */
async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && failure === undefined) {
      const index = next;
      next += 1;
      try {
        await work(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
}

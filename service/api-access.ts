import type { FastifyInstance, FastifyReply } from 'fastify';
import type { BearerTokens } from '../processors/access/bearer-tokens.js';
import type { RateLimiter } from '../processors/access/rate-limiter.js';

export interface ApiAccess {
  /** Absent or empty: no authentication (a local, loopback-only run). */
  tokens?: BearerTokens;
  /** Per key (or per address without keys). */
  limiter?: RateLimiter;
  /**
   * Failed authentications per address: once an address has used them up, every request from it is
   * answered 429 (a right key included) until the bucket refills, so keys cannot be guessed at speed.
   */
  authFailures?: RateLimiter;
}

export function sendApiError(
  reply: FastifyReply,
  status: number,
  error: string,
  message: string,
  extra: Record<string, unknown> = {},
): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send({ error, message, ...extra });
}

/** 429 with Retry-After (whole seconds, at least 1). */
export function sendRateLimited(reply: FastifyReply, waitMs: number, what = 'too many requests'): FastifyReply {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  void reply.header('retry-after', String(seconds));
  return sendApiError(reply, 429, 'rate_limited', `${what}; retry in ${seconds} s`);
}

/**
 * API keys and rate limits for every route of a scope. A key goes in `Authorization: Bearer <key>`;
 * routes listed in `queryTokenPaths` (server-sent event streams: a browser's EventSource cannot set
 * headers) also take `?access_token=<key>`.
 */
export function guardScope(scope: FastifyInstance, access: ApiAccess, queryTokenPaths: readonly string[] = []): void {
  const guarded = access.tokens !== undefined && access.tokens.size > 0;
  scope.addHook('onRequest', async (request, reply) => {
    let client = request.ip;
    if (guarded) {
      const address = `addr:${request.ip}`;
      const lockedOutMs = access.authFailures?.waitMs(address) ?? 0;
      if (lockedOutMs > 0) return sendRateLimited(reply, lockedOutMs, 'too many failed authentication attempts');
      const path = request.url.split('?', 1)[0] ?? '';
      const query = request.query as Record<string, unknown> | undefined;
      const fromQuery = queryTokenPaths.includes(path) ? query?.['access_token'] : undefined;
      const header = typeof fromQuery === 'string' ? `Bearer ${fromQuery}` : request.headers.authorization;
      const key = access.tokens!.match(header);
      if (key === undefined) {
        access.authFailures?.take(address);
        void reply.header('www-authenticate', 'Bearer');
        return sendApiError(reply, 401, 'unauthorized', 'a valid API key is required (Authorization: Bearer <key>)');
      }
      client = `key:${key}`;
    }
    const waitMs = access.limiter?.take(client) ?? 0;
    if (waitMs > 0) return sendRateLimited(reply, waitMs);
    return undefined;
  });
}

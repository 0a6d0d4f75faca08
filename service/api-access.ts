import type { FastifyInstance, FastifyReply } from 'fastify';
import type { BearerTokens } from './bearer-tokens.js';
import type { RateLimiter } from './rate-limiter.js';

export interface ApiAccess {
  /** Absent or empty: no authentication (a local, loopback-only run). */
  tokens?: BearerTokens;
  /** Per key (or per address without keys). */
  limiter?: RateLimiter;
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
      const path = request.url.split('?', 1)[0] ?? '';
      const query = request.query as Record<string, unknown> | undefined;
      const fromQuery = queryTokenPaths.includes(path) ? query?.['access_token'] : undefined;
      const header = typeof fromQuery === 'string' ? `Bearer ${fromQuery}` : request.headers.authorization;
      const key = access.tokens!.match(header);
      if (key === undefined) {
        void reply.header('www-authenticate', 'Bearer');
        return sendApiError(reply, 401, 'unauthorized', 'a valid API key is required (Authorization: Bearer <key>)');
      }
      client = `key:${key}`;
    }
    const waitMs = access.limiter?.take(client) ?? 0;
    if (waitMs > 0) {
      void reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
      return sendApiError(reply, 429, 'rate_limited', `too many requests; retry in ${Math.ceil(waitMs / 1000)} s`);
    }
    return undefined;
  });
}

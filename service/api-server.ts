import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { histogramOf, METRIC_FAMILIES } from '../streams/telemetry/metrics.js';
import type { ChatModel } from '../processors/extract/chat-model.js';
import type { SpikeFeed } from '../streams/views/spike-feed.js';
import { BearerTokens } from '../processors/access/bearer-tokens.js';
import { registerQueryRoutes } from './query-routes.js';
import { perMinuteLimiter } from '../processors/access/rate-limiter.js';
import { isLoopbackAddress, refuseForeignHosts } from './loopback-host.js';
import type { Retriever } from '../streams/retrieval/retrieve.js';
import { registerSpikeRoutes } from './spike-routes.js';
import type { ApiAccess } from './api-access.js';
import { registerExtractionRoutes, type ExtractionRoutesOptions } from './extraction-routes.js';
import type { EntityDirectory } from '../processors/query/entity-directory.js';
import { registerEntityRoutes } from './entity-routes.js';
import { registerEventRoutes } from './event-routes.js';
import { registerStatusRoutes, type StatusDocument } from './status-routes.js';
import type { ArticlePublisher } from '../processors/intake/article-input.js';
import {
  DEFAULT_AUTH_FAILURES_PER_MINUTE,
  DEFAULT_INTAKE_RATE_PER_MINUTE,
  registerArticleEndpoint,
} from './article-endpoint.js';
import { registerDashboardRoutes } from './dashboard-routes.js';
import { serverLogOptions } from './request-log.js';
import type { Logger } from 'pino';

export interface ApiServerOptions {
  port: number;
  /** Loopback unless asked: without API keys the API is open to whoever can reach it. */
  host?: string;
  /** `NEON_API_KEYS`, comma-separated; none: no authentication. */
  apiKeys?: readonly string[];
  /** Requests a minute per key (or address), with bursts of a sixth of that. Default 600. */
  ratePerMinute?: number;
  /**
   * Failed authentications a minute per address, with bursts of a sixth of that; past them the
   * address gets 429 on every route until its bucket refills. Default 60 (bursts of 10).
   */
  authFailuresPerMinute?: number;
  /** `POST /v1/articles` requests a minute per intake token, with bursts of a sixth of that. Default 1,200. */
  intakeRatePerMinute?: number;
  spikes?: SpikeFeed;
  /** The query routes (`/v1/search`, `/v1/ask`, timelines) when the datastores are there. */
  retriever?: Retriever;
  chat?: ChatModel;
  /** The extraction-target routes (`/v1/extraction/targets`) when extraction runs in this process. */
  extraction?: Omit<ExtractionRoutesOptions, keyof ApiAccess>;
  /** `/v1/entities` (and, with a retriever, their mention counts). */
  directory?: EntityDirectory;
  /** `/v1/status`. */
  status?: () => Promise<StatusDocument>;
  /** `POST /v1/articles`, with its own bearer tokens (intake credentials are not query keys). */
  intake?: { publisher: ArticlePublisher; tokens: readonly string[] };
  /** Where `neon_http_request_seconds` is recorded; none: not recorded. */
  registry?: Registry;
  /** Where request lines and route errors go; default the process's logger. */
  logger?: Logger;
}

/**
 * Request latency by route template (bounded: the registered routes, never the raw path) and
 * status class. Server-sent-event streams are left out: their "latency" is their lifetime.
 */
function recordRequestLatency(app: FastifyInstance, registry: Registry): void {
  const seconds = histogramOf(registry, METRIC_FAMILIES.httpRequestSeconds);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (reply.getHeader('content-type')?.toString().startsWith('text/event-stream')) return;
    seconds.observe(
      { route, method: request.method, status: `${Math.floor(reply.statusCode / 100)}xx` },
      reply.elapsedTime / 1000,
    );
  });
}

export interface ApiServer {
  /** Base url, e.g. http://127.0.0.1:8080 (no trailing slash). */
  readonly url: string;
  /** Every route registered, as Fastify holds them (`/v1/spikes/:id`), for checking the OpenAPI document. */
  readonly routes: readonly { method: string; url: string }[];
  close(): Promise<void>;
}

/** API keys from the environment: `NEON_API_KEYS=key1,key2`. */
export function apiKeysFrom(env: NodeJS.ProcessEnv): string[] {
  return (env.NEON_API_KEYS ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
}

/** The product's HTTP API on one port: spike alerts and the query service. */
export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const app = Fastify({ ...serverLogOptions('api', options.logger), bodyLimit: 64 * 1024 });
  const routes: { method: string; url: string }[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
  const host = options.host ?? '127.0.0.1';
  const tokens = new BearerTokens(options.apiKeys ?? []);
  // Without keys the API is open to whatever reaches loopback, web pages included through DNS
  // rebinding: answer only requests addressed to a loopback name. First, so every route has it.
  if (tokens.size === 0 && isLoopbackAddress(host)) refuseForeignHosts(app);
  const limiter = perMinuteLimiter(options.ratePerMinute ?? 600);
  // One count of failures per address over every route, the intake endpoint's included.
  const authFailures = perMinuteLimiter(options.authFailuresPerMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE);
  const access = { tokens, limiter, authFailures };
  if (options.registry) recordRequestLatency(app, options.registry);
  if (options.spikes) registerSpikeRoutes(app, { feed: options.spikes, ...access });
  if (options.retriever) {
    registerQueryRoutes(app, {
      retriever: options.retriever,
      ...access,
      ...(options.chat ? { chat: options.chat } : {}),
    });
  }
  if (options.retriever) {
    registerEventRoutes(app, {
      retriever: options.retriever,
      ...access,
      ...(options.directory ? { directory: options.directory } : {}),
    });
  }
  if (options.extraction) registerExtractionRoutes(app, { ...options.extraction, ...access });
  if (options.directory) {
    registerEntityRoutes(app, {
      directory: options.directory,
      ...access,
      ...(options.retriever ? { retriever: options.retriever } : {}),
    });
  }
  if (options.status) registerStatusRoutes(app, { status: options.status, ...access });
  if (options.intake && options.intake.tokens.length > 0) {
    registerArticleEndpoint(app, {
      publisher: options.intake.publisher,
      tokens: options.intake.tokens,
      limiter: perMinuteLimiter(options.intakeRatePerMinute ?? DEFAULT_INTAKE_RATE_PER_MINUTE),
      authFailures,
    });
  }
  // The dashboard (static files, no key needed: the page asks for one when the API wants it).
  registerDashboardRoutes(app);
  app.get('/healthz', async () => ({ ok: true }));
  const url = await app.listen({ port: options.port, host });
  return { url: url.replace(/\/$/, ''), routes, close: () => app.close() };
}

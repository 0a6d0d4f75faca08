import Fastify from 'fastify';
import type { SpikeFeed } from '../streams/spike-feed.js';
import { BearerTokens } from './bearer-tokens.js';
import { registerSpikeRoutes } from './spike-routes.js';

export interface ApiServerOptions {
  port: number;
  /** Loopback unless asked: without API keys the API is open to whoever can reach it. */
  host?: string;
  /** `NEON_API_KEYS`, comma-separated; none: no authentication. */
  apiKeys?: readonly string[];
  spikes: SpikeFeed;
}

export interface ApiServer {
  /** Base url, e.g. http://127.0.0.1:8080 (no trailing slash). */
  readonly url: string;
  close(): Promise<void>;
}

/** API keys from the environment: `NEON_API_KEYS=key1,key2`. */
export function apiKeysFrom(env: NodeJS.ProcessEnv): string[] {
  return (env.NEON_API_KEYS ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
}

/** The product's HTTP API on one port: today the spike routes (`/v1/spikes`, its SSE stream). */
export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const app = Fastify({ logger: false });
  registerSpikeRoutes(app, { feed: options.spikes, tokens: new BearerTokens(options.apiKeys ?? []) });
  app.get('/healthz', async () => ({ ok: true }));
  const url = await app.listen({ port: options.port, host: options.host ?? '127.0.0.1' });
  return { url: url.replace(/\/$/, ''), close: () => app.close() };
}

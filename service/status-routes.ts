/**
 * `GET /v1/status` — what this process is doing: mode, the news source and how far it got, every
 * stage's lag and counters, what the datastores hold, spikes, and which models answer. For the
 * dashboard's status strip, `neon topics` and people checking on a run.
 */
import type { FastifyInstance } from 'fastify';
import type { FeedStatus } from '../streams/stages/intake-sources.js';
import { guardScope, sendApiError, type ApiAccess } from './api-access.js';

export type { FeedStatus };

export interface StatusDocument {
  mode: 'embedded' | 'cluster';
  started_at: string;
  /** The server's clock, so a client can tell how fresh the rest is. */
  server_time: string;
  feed: FeedStatus;
  stages: {
    stage: string;
    group: string;
    lag: number | null;
    received: number;
    sent: number;
    dead_lettered: number;
    running: boolean;
  }[];
  datastores: { location: string; chunks: number | null; interactions: number | null };
  entities: number;
  spikes: { open: number; total: number };
  embedder: string;
  llm: string | null;
  extractor: string;
}

export interface StatusRoutesOptions extends ApiAccess {
  status: () => Promise<StatusDocument>;
}

export function registerStatusRoutes(app: FastifyInstance, options: StatusRoutesOptions): void {
  void app.register(async (scope) => {
    guardScope(scope, options);
    scope.get('/v1/status', async (_request, reply) => {
      try {
        return await reply.send(await options.status());
      } catch (error) {
        return sendApiError(
          reply,
          503,
          'unavailable',
          `status could not be gathered: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    });
  });
}

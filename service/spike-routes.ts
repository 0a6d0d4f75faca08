/**
 * Spike alerts over HTTP:
 * - `GET /v1/spikes?state=open|ended|all&entity=<id>&granularity=day|hour&since=<ISO>&limit=<n>` —
 *   episodes, open ones first, each with its latest state and drill-down;
 * - `GET /v1/spikes/:id` — one episode with every state it went through;
 * - `GET /v1/spikes/digest?date=YYYY-MM-DD&all=true&limit=<n>` — a day's stories, ranked by
 *   significance and volume, within the alert budget (the rest under `more`, all of them with
 *   `all=true`), and the stories of earlier days still developing; without a date, the latest day
 *   that has stories;
 * - `GET /v1/spikes/stream` — server-sent events: one `spike` event per new alert state, and a
 *   `story` event when a story is delivered within the budget, with the event id a client sends
 *   back as `Last-Event-ID` to resume without gaps (recent events are kept).
 *
 * When API keys are configured every route wants `Authorization: Bearer <key>`; the stream also takes
 * `?access_token=<key>`, since a browser's EventSource cannot set headers.
 */
import type { FastifyInstance } from 'fastify';
import type { SpikeEvent } from '../processors/spikes/spike-book.js';
import { alertJson, episodeJson } from '../processors/spikes/alert-view.js';
import { digestJson, storyJson } from '../processors/spikes/digest-view.js';
import type { SpikeFeed } from '../streams/views/spike-feed.js';
import { guardScope, sendApiError as sendError, type ApiAccess } from './api-access.js';
import { digestQuery, spikeListQuery } from './api-schemas.js';

export interface SpikeRoutesOptions extends ApiAccess {
  feed: SpikeFeed;
  /** Comment lines that keep idle connections (and proxies) from timing out. Default 15 s. */
  heartbeatMs?: number;
  /** A stream client that falls this far behind is disconnected rather than buffered for. Default 1 MiB. */
  maxBufferedBytes?: number;
}

export function registerSpikeRoutes(app: FastifyInstance, options: SpikeRoutesOptions): void {
  const { feed } = options;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;

  void app.register(async (scope) => {
    guardScope(scope, options, ['/v1/spikes/stream']);

    scope.get('/v1/spikes', async (request, reply) => {
      const parsed = spikeListQuery.safeParse(request.query);
      if (!parsed.success) {
        const message = parsed.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ');
        return sendError(reply, 400, 'invalid_query', message);
      }
      const q = parsed.data;
      const episodes = feed.book.query({
        state: q.state,
        ...(q.entity === undefined ? {} : { entityId: q.entity }),
        ...(q.granularity === undefined ? {} : { granularity: q.granularity === 'day' ? 'DAY' : 'HOUR' }),
        ...(q.since === undefined ? {} : { since: Date.parse(q.since) }),
        limit: q.limit,
      });
      return reply.send({ spikes: episodes.map((e) => episodeJson(e)) });
    });

    scope.get('/v1/spikes/digest', async (request, reply) => {
      const parsed = digestQuery.safeParse(request.query);
      if (!parsed.success) {
        const message = parsed.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ');
        return sendError(reply, 400, 'invalid_query', message);
      }
      const q = parsed.data;
      const day = q.date === undefined ? (feed.desk.days()[0] ?? Date.now()) : Date.parse(`${q.date}T00:00:00Z`);
      const digest = feed.desk.digest(day, {
        all: q.all === 'true',
        ...(q.limit === undefined ? {} : { limit: q.limit }),
      });
      return reply.send(digestJson(digest));
    });

    scope.get('/v1/spikes/stream', (request, reply) => {
      const lastEventId = Number(request.headers['last-event-id'] ?? NaN);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      // Declared before anything can call close(): the backlog of a resume may overflow the bound
      // before the subscription and the heartbeat exist.
      let closed = false;
      const live: { unsubscribe?: () => void; heartbeat?: NodeJS.Timeout } = {};
      const close = (): void => {
        if (closed) return;
        closed = true;
        live.unsubscribe?.();
        clearInterval(live.heartbeat);
        res.end();
      };
      const send = (event: SpikeEvent): void => {
        if (closed) return;
        res.write(`id: ${event.seq}\nevent: spike\ndata: ${JSON.stringify(alertJson(event.alert))}\n\n`);
        if (event.delivered && event.story) {
          const rank = feed.desk.storiesOn(event.story.day).indexOf(event.story) + 1;
          res.write(`event: story\ndata: ${JSON.stringify(storyJson(event.story, rank))}\n\n`);
        }
        // A client that does not read is cut off, not buffered for without bound. One resuming
        // from far back is cut off the same way after part of its backlog: it reconnects with the
        // last id it received and gets the next part.
        if (res.writableLength > maxBuffered) close();
      };
      request.raw.on('close', close);
      res.write(`retry: 3000\n: ${feed.book.size()} spike episodes known\n\n`);
      if (Number.isInteger(lastEventId)) for (const event of feed.book.eventsAfter(lastEventId)) send(event);
      if (res.writableEnded) return; // cut off during the backlog: nothing to subscribe for
      live.unsubscribe = feed.subscribe(send);
      live.heartbeat = setInterval(() => {
        if (!closed) res.write(': keep-alive\n\n');
      }, heartbeatMs);
    });

    scope.get('/v1/spikes/:id', async (request, reply) => {
      const { id } = request.params as { id: string };
      const episode = feed.book.get(id);
      if (!episode) return sendError(reply, 404, 'not_found', `no spike ${id}`);
      return reply.send(episodeJson(episode, true));
    });
  });
}

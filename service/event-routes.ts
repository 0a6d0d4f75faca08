/**
 * The event graph over HTTP (see processors/events/event-graph.ts):
 * - `GET /v1/entities/:id/events?date=&from=&limit=` — the entity's story: its events, earliest
 *   first, each linked to the story's previous and next event, as of `date` (default now);
 * - `GET /v1/events/:id?date=` — one event, with every report of it, and for each participant the
 *   events just before and after it.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { EventLink, NewsEvent } from '../processors/events/event-graph.js';
import type { EntityDirectory } from '../processors/query/entity-directory.js';
import { EventGraphReader } from '../streams/retrieval/read-events.js';
import type { Retriever } from '../streams/retrieval/retrieve.js';
import { guardScope, sendApiError, type ApiAccess } from './api-access.js';
import { entityEventsQuery, eventQuery } from './api-schemas.js';
import { failedRetrieval } from './query-routes.js';
import { parseInstant, problemsOf } from './entity-routes.js';

export interface EventRoutesOptions extends ApiAccess {
  retriever: Retriever;
  /** Names and types of entities (a place participant is an event's `where`). */
  directory?: EntityDirectory;
  now?: () => number;
}

const iso = (t: number): string => new Date(t).toISOString();

/** An event as the API answers with it: times as ISO 8601. */
export interface EventJson extends Omit<NewsEvent, 'when' | 'last_reported' | 'reports'> {
  when: string;
  last_reported: string;
  reports: (Omit<NewsEvent['reports'][number], 'published_at'> & { published_at: string })[];
}

export function eventJson(event: NewsEvent): EventJson {
  return {
    id: event.id,
    day: event.day,
    when: iso(event.when),
    last_reported: iso(event.last_reported),
    who: event.who,
    where: event.where,
    what: event.what,
    reports: event.reports.map((r) => ({ ...r, published_at: iso(r.published_at) })),
    sources: event.sources,
    articles: event.articles,
  };
}

const linkJson = (link: EventLink): Record<string, unknown> => ({ ...link, when: iso(link.when) });

function invalid(reply: FastifyReply, error: z.ZodError | undefined, extra: string[] = []): FastifyReply {
  const problems = [...(error ? problemsOf(error) : []), ...extra];
  return sendApiError(reply, 400, 'invalid_request', problems.join('; '), { problems });
}

export function registerEventRoutes(app: FastifyInstance, options: EventRoutesOptions): void {
  const now = options.now ?? Date.now;
  const reader = new EventGraphReader(options.retriever);
  const isPlace = options.directory
    ? (id: string): boolean => options.directory!.get(id)?.type === 'LOCATION'
    : undefined;
  void app.register(async (scope) => {
    guardScope(scope, options);

    scope.get('/v1/entities/:id/events', async (request, reply) => {
      const { id } = request.params as { id: string };
      const parsed = entityEventsQuery.safeParse(request.query);
      const badId = id.length === 0 || id.length > 512 ? ['id: must be 1 to 512 characters'] : [];
      if (!parsed.success || badId.length > 0) return invalid(reply, parsed.error, badId);
      const tq = parsed.data.date === undefined ? now() : parseInstant(parsed.data.date, true);
      const from = parsed.data.from === undefined ? undefined : parseInstant(parsed.data.from, false);
      if (from !== undefined && from > tq) return invalid(reply, undefined, ['from: must not be after date']);
      const started = performance.now();
      let story;
      try {
        story = await reader.story(id, tq, {
          limit: parsed.data.limit,
          ...(from === undefined ? {} : { from }),
          ...(isPlace ? { isPlace } : {}),
        });
      } catch (error) {
        return await failedRetrieval(reply, error);
      }
      return reply.send({
        entity_id: id,
        name: options.directory?.get(id)?.name ?? null,
        date: iso(tq),
        events: story.events.map((e) => ({ ...eventJson(e), before: e.before, after: e.after })),
        complete: story.complete,
        timings_ms: { read: Math.round((performance.now() - started) * 100) / 100 },
      });
    });

    scope.get('/v1/events/:id', async (request, reply) => {
      const { id } = request.params as { id: string };
      const parsed = eventQuery.safeParse(request.query);
      if (!parsed.success) return invalid(reply, parsed.error);
      const tq = parsed.data.date === undefined ? now() : parseInstant(parsed.data.date, true);
      let found;
      try {
        found = await reader.event(id, tq, isPlace);
      } catch (error) {
        return await failedRetrieval(reply, error);
      }
      if (!found) return sendApiError(reply, 404, 'not_found', `no event ${id} as of ${iso(tq)}`);
      return reply.send({
        date: iso(tq),
        event: eventJson(found.event),
        before: found.before.map(linkJson),
        after: found.after.map(linkJson),
      });
    });
  });
}

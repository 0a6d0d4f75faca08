/**
 * Entities over HTTP:
 * - `GET /v1/entities?q=<text>&type=<TYPE>&limit=<n>` — registry entities whose name or an alias
 *   contains q, most mentioned first;
 * - `GET /v1/entities/:id` — one entity;
 * - `GET /v1/entities/:id/mentions?from=&to=&granularity=day|hour` — unique chunks mentioning it per
 *   bucket (what spike detection counts), from the chunks datastore, as of `to` (default now).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { DirectoryEntity, EntityDirectory } from '../processors/query/entity-directory.js';
import { guardScope, sendApiError, type ApiAccess } from './api-access.js';
import { failedRetrieval } from './query-routes.js';
import type { Retriever } from '../streams/retrieval/retrieve.js';
import { entityListQuery, mentionsQuery } from './api-schemas.js';

export interface EntityRoutesOptions extends ApiAccess {
  directory: EntityDirectory;
  retriever?: Retriever;
  now?: () => number;
}

const DAY_MS = 86_400_000;
/** Hours are bounded tighter than days: a year of hours is 8,760 buckets. */
const MAX_SPAN_MS = { day: 3 * 366 * DAY_MS, hour: 31 * DAY_MS } as const;

function entityJson(entity: DirectoryEntity): Record<string, unknown> {
  return {
    id: entity.id,
    name: entity.name,
    type: entity.type,
    aliases: entity.aliases,
    mentions: entity.mentions,
    first_seen: entity.first_seen_at === null ? null : new Date(entity.first_seen_at).toISOString(),
    last_seen: entity.last_seen_at === null ? null : new Date(entity.last_seen_at).toISOString(),
    fused_into: entity.fused_into ?? null,
  };
}

/** A bare date is the start of that day for `from` and its end for `to` (UTC). */
export function parseInstant(text: string, end: boolean): number {
  if (text.length === 10) return Date.parse(`${text}T${end ? '23:59:59.999' : '00:00:00.000'}Z`);
  return Date.parse(text);
}

export function problemsOf(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`);
}

export function registerEntityRoutes(app: FastifyInstance, options: EntityRoutesOptions): void {
  const now = options.now ?? Date.now;
  void app.register(async (scope) => {
    guardScope(scope, options);

    scope.get('/v1/entities', async (request, reply) => {
      const parsed = entityListQuery.safeParse(request.query);
      if (!parsed.success) {
        const problems = problemsOf(parsed.error);
        return sendApiError(reply, 400, 'invalid_request', problems.join('; '), { problems });
      }
      const { q, type, limit } = parsed.data;
      return reply.send({
        entities: options.directory.search(q, limit, type).map(entityJson),
        known: options.directory.size,
      });
    });

    scope.get('/v1/entities/:id', async (request, reply) => {
      const { id } = request.params as { id: string };
      const entity = options.directory.get(id);
      if (!entity) return sendApiError(reply, 404, 'not_found', `no entity ${id}`);
      return reply.send(entityJson(entity));
    });

    scope.get('/v1/entities/:id/mentions', async (request, reply) => {
      const { id } = request.params as { id: string };
      const parsed = mentionsQuery.safeParse(request.query);
      const problems = parsed.success ? [] : problemsOf(parsed.error);
      if (id.length === 0 || id.length > 512) problems.push('id: must be 1 to 512 characters');
      if (!parsed.success || problems.length > 0) {
        return sendApiError(reply, 400, 'invalid_request', problems.join('; '), { problems });
      }
      const { granularity } = parsed.data;
      const to = parsed.data.to === undefined ? now() : parseInstant(parsed.data.to, true);
      const from =
        parsed.data.from === undefined
          ? to - (granularity === 'day' ? 90 * DAY_MS : 7 * DAY_MS)
          : parseInstant(parsed.data.from, false);
      if (from > to) return sendApiError(reply, 400, 'invalid_request', 'from: must not be after to');
      if (to - from > MAX_SPAN_MS[granularity]) {
        const days = MAX_SPAN_MS[granularity] / DAY_MS;
        return sendApiError(reply, 400, 'invalid_request', `from–to: at most ${days} days by ${granularity}`);
      }
      if (!options.retriever) {
        return sendApiError(reply, 503, 'datastore_unavailable', 'no datastore is attached to this service');
      }
      let buckets;
      try {
        buckets = await options.retriever.mentions(id, from, to, granularity);
      } catch (error) {
        return await failedRetrieval(reply, error);
      }
      return reply.send({
        entity_id: id,
        name: options.directory.get(id)?.name ?? null,
        granularity,
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        buckets: buckets.map((b) => ({ start: new Date(b.start).toISOString(), count: b.count })),
      });
    });
  });
}

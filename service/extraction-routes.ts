/**
 * Extraction targets at run time (NEON's target subjects S):
 * - `GET /v1/extraction/targets?at=<ISO>` — the configured subjects, the entities spiking at `at`
 *   (default now), and the mode (`gated`, or `all` when every entity is extracted);
 * - `POST /v1/extraction/targets` with `{"subject": "<entity id or name>"}` — adds a subject; chunks
 *   from then on are extracted for it (201, with its entity id);
 * - `DELETE /v1/extraction/targets/:id` — removes a configured subject (404 if it was not one).
 *
 * Targets added here live in this process: set `NEON_EXTRACT_SUBJECTS` for ones that must survive a
 * restart.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ConfiguredTargets, ExtractionTargets } from '../processors/extract/extraction-targets.js';
import { guardScope, sendApiError, type ApiAccess } from './api-access.js';
import { addExtractionTargetBody, extractionTargetsQuery } from './api-schemas.js';

export interface ExtractionRoutesOptions extends ApiAccess {
  configured: ConfiguredTargets;
  spiking: ExtractionTargets;
  mode: 'gated' | 'all';
}

export function registerExtractionRoutes(app: FastifyInstance, options: ExtractionRoutesOptions): void {
  void app.register(async (scope) => {
    guardScope(scope, options);
    const problems = (error: z.ZodError) =>
      error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');

    scope.get('/v1/extraction/targets', async (request, reply) => {
      const parsed = extractionTargetsQuery.safeParse(request.query ?? {});
      if (!parsed.success) return sendApiError(reply, 400, 'invalid_query', problems(parsed.error));
      const at = parsed.data.at ? Date.parse(parsed.data.at) : Date.now();
      return { mode: options.mode, configured: options.configured.list(), spiking: options.spiking.list(at) };
    });

    scope.post('/v1/extraction/targets', async (request, reply) => {
      const parsed = addExtractionTargetBody.safeParse(request.body);
      if (!parsed.success) return sendApiError(reply, 400, 'invalid_body', problems(parsed.error));
      const id = options.configured.add(parsed.data.subject);
      return reply.code(201).send({ id, configured: options.configured.list() });
    });

    scope.delete<{ Params: { id: string } }>('/v1/extraction/targets/:id', async (request, reply) => {
      if (!options.configured.remove(request.params.id)) {
        return sendApiError(reply, 404, 'not_found', `${request.params.id} is not a configured subject`);
      }
      return { configured: options.configured.list() };
    });
  });
}

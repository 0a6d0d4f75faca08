/**
 * The query API:
 * - `GET|POST /v1/search` — retrieval only: the reformulated query, linked entities, ranked items;
 * - `GET|POST /v1/ask` — the same plus an answer with citations [n];
 * - `GET /v1/entities/:id/timeline?date=&limit=&before=` — an entity's interactions, newest first;
 * - `GET /v1/openapi.json` — the OpenAPI description of all of it.
 * Parameters of search and ask: see `processors/query/search-request.ts` (bounded k, question
 * length, windows and dates). Errors: 400 invalid_request (every problem listed), 401, 404, 429
 * (with Retry-After), 503 datastore_unavailable, 504 timeout.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ChatModel } from '../processors/extract/chat-model.js';
import {
  DEFAULT_ANSWER_SENTENCES,
  DEFAULT_FUSION,
  DEFAULT_PER_ARTICLE,
  parseSearchRequest,
  type SearchRequest,
} from '../processors/query/search-request.js';
import { guardScope, sendApiError, type ApiAccess } from './api-access.js';
import { answerQuestion } from '../streams/retrieval/answer-question.js';
import { openApiDocument } from './openapi.js';
import { timelineQuery } from './api-schemas.js';
import { DatastoreUnavailable, EmbeddingModelMismatch, RetrievalTimeout } from '../streams/datastore/datastore.js';
import type { Retriever } from '../streams/retrieval/retrieve.js';

export interface QueryRoutesOptions extends ApiAccess {
  retriever: Retriever;
  chat?: ChatModel;
  now?: () => number;
}

function parameters(request: FastifyRequest): unknown {
  return request.method === 'POST' ? request.body : request.query;
}

function describe(request: SearchRequest): Record<string, unknown> {
  return {
    q: request.q,
    date: new Date(request.tq).toISOString(),
    k: request.k,
    strategy: request.strategy,
    store: request.store,
    constraint: request.constraint,
    constraint_date: new Date(request.constraintAt).toISOString(),
    window_days: request.windowDays,
    alpha: request.alpha,
    hops: request.hops ?? 1,
    fusion: request.fusion ?? DEFAULT_FUSION,
    answer_sentences: request.answerSentences ?? DEFAULT_ANSWER_SENTENCES,
    per_article: request.perArticle ?? DEFAULT_PER_ARTICLE,
    time_words: request.timeWords !== false,
    include_future: request.includeFuture,
  };
}

/** A retrieval failure as the API answers it: 504, 503, or (a bug) rethrown for a 500. */
export async function failedRetrieval(reply: FastifyReply, error: unknown): Promise<FastifyReply> {
  if (error instanceof RetrievalTimeout) return sendApiError(reply, 504, 'timeout', error.message);
  if (error instanceof EmbeddingModelMismatch) return sendApiError(reply, 503, 'model_mismatch', error.message);
  if (error instanceof DatastoreUnavailable) {
    return sendApiError(reply, 503, 'datastore_unavailable', 'the datastore did not answer; retry shortly');
  }
  const status = (error as { meta?: { statusCode?: number } }).meta?.statusCode;
  const name = error instanceof Error ? error.name : '';
  if (name === 'ConnectionError' || name === 'NoLivingConnectionsError' || (status !== undefined && status >= 500)) {
    return sendApiError(reply, 503, 'datastore_unavailable', 'the datastore did not answer; retry shortly');
  }
  throw error;
}

export function registerQueryRoutes(app: FastifyInstance, options: QueryRoutesOptions): void {
  const now = options.now ?? Date.now;
  void app.register(async (scope) => {
    guardScope(scope, options);

    const parse = (request: FastifyRequest, reply: FastifyReply): SearchRequest | undefined => {
      const parsed = parseSearchRequest(parameters(request) ?? {}, now());
      if (parsed.ok) return parsed.request;
      void sendApiError(reply, 400, 'invalid_request', parsed.problems.join('; '), { problems: parsed.problems });
      return undefined;
    };

    const search = async (request: FastifyRequest, reply: FastifyReply) => {
      const query = parse(request, reply);
      if (!query) return reply;
      let result;
      try {
        result = await options.retriever.search(query);
      } catch (error) {
        return await failedRetrieval(reply, error);
      }
      return reply.send({ query: describe(query), ...result });
    };
    scope.get('/v1/search', search);
    scope.post('/v1/search', search);

    const ask = async (request: FastifyRequest, reply: FastifyReply) => {
      const query = parse(request, reply);
      if (!query) return reply;
      let result;
      try {
        result = await answerQuestion(options.retriever, query, options.chat);
      } catch (error) {
        return await failedRetrieval(reply, error);
      }
      return reply.send({ query: describe(query), ...result });
    };
    scope.get('/v1/ask', ask);
    scope.post('/v1/ask', ask);

    scope.get('/v1/entities/:id/timeline', async (request, reply) => {
      const { id } = request.params as { id: string };
      const parsed = timelineQuery.safeParse(request.query);
      if (!parsed.success || id.length === 0 || id.length > 512) {
        const problems = parsed.success
          ? ['id: must be 1 to 512 characters']
          : parsed.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`);
        return sendApiError(reply, 400, 'invalid_request', problems.join('; '), { problems });
      }
      const date = parsed.data.date;
      const tq = date === undefined ? now() : Date.parse(date.length === 10 ? `${date}T23:59:59.999Z` : date);
      let result;
      try {
        result = await options.retriever.timeline(
          id,
          tq,
          parsed.data.limit,
          parsed.data.before === undefined ? undefined : Date.parse(parsed.data.before),
        );
      } catch (error) {
        return await failedRetrieval(reply, error);
      }
      return reply.send({ entity_id: id, date: new Date(tq).toISOString(), ...result });
    });
  });
  app.get('/v1/openapi.json', async () => openApiDocument());
}

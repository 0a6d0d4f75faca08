import {
  CONSTRAINTS,
  DEFAULT_ALPHA,
  DEFAULT_FUSION,
  DEFAULT_PER_ARTICLE,
  MAX_PER_ARTICLE,
  DEFAULT_STORE,
  DEFAULT_STRATEGY,
  MAX_HOPS,
  MAX_K,
  MAX_QUERY_CHARS,
  MAX_WINDOW_DAYS,
  STORES,
  STRATEGIES,
} from '../processors/query/search-request.js';
import { FUSION_MODES } from '../processors/query/fuse-rankings.js';

/** The OpenAPI 3.1 description of the HTTP API, served at `/v1/openapi.json`. */
export function openApiDocument(): Record<string, unknown> {
  const searchParameters = [
    { name: 'q', in: 'query', required: true, schema: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS } },
    {
      name: 'date',
      in: 'query',
      description: 'Query time t_q (ISO 8601; a bare date means the end of that day, UTC). Default: now.',
      schema: { type: 'string' },
    },
    { name: 'k', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_K, default: 10 } },
    { name: 'strategy', in: 'query', schema: { type: 'string', enum: STRATEGIES, default: DEFAULT_STRATEGY } },
    { name: 'store', in: 'query', schema: { type: 'string', enum: STORES, default: DEFAULT_STORE } },
    { name: 'constraint', in: 'query', schema: { type: 'string', enum: CONSTRAINTS, default: 'none' } },
    {
      name: 'constraint_date',
      in: 'query',
      description: 'Anchor of the constraint; default t_q.',
      schema: { type: 'string' },
    },
    {
      name: 'window_days',
      in: 'query',
      description: 'r of the temporal widening and half-width of "around".',
      schema: { type: 'integer', minimum: 0, maximum: MAX_WINDOW_DAYS, default: 7 },
    },
    {
      name: 'alpha',
      in: 'query',
      description: "TempRALM's α: the weight of recency against relevance (0: relevance alone).",
      schema: { type: 'number', minimum: 0, maximum: 1000, default: DEFAULT_ALPHA },
    },
    {
      name: 'fusion',
      in: 'query',
      description:
        'How lexical (BM25 over text, headline and entity names) and dense relevance are fused: reciprocal-rank fusion, a weighted sum of normalised scores, or one alone.',
      schema: { type: 'string', enum: FUSION_MODES, default: DEFAULT_FUSION },
    },
    {
      name: 'per_article',
      in: 'query',
      description:
        'At most this many items from one article among the k (0: no cap), so that one report does not fill the results.',
      schema: { type: 'integer', minimum: 0, maximum: MAX_PER_ARTICLE, default: DEFAULT_PER_ARTICLE },
    },
    {
      name: 'hops',
      in: 'query',
      description:
        'Rounds of retrieval along the entity graph: 2 also brings the events of the entities the first results connect the question to (multi-hop).',
      schema: { type: 'integer', minimum: 1, maximum: MAX_HOPS, default: 1 },
    },
    {
      name: 'time_words',
      in: 'query',
      description:
        'Read the question\'s own time words ("last week", "in March 2023", "the latest") as its time scope and recency; an explicit constraint replaces them.',
      schema: { type: 'boolean', default: true },
    },
    {
      name: 'include_future',
      in: 'query',
      description: 'Also return documents published after t_q (never the default).',
      schema: { type: 'boolean', default: false },
    },
  ];
  const item = {
    type: 'object',
    required: ['id', 'kind', 'text', 'published_at', 'url', 'score'],
    properties: {
      id: { type: 'string' },
      kind: { type: 'string', enum: ['interaction', 'chunk'] },
      text: { type: 'string' },
      published_at: { type: 'string', format: 'date-time' },
      url: { type: ['string', 'null'] },
      score: { type: 'number', description: "The strategy's final score: relevance, with time where it weighs it." },
      relevance: { type: 'number', description: 'Dense and lexical relevance, fused.' },
      semantic_score: {
        type: 'number',
        description: 'Dense similarity (1 + cos) / 2, when among the nearest vectors.',
      },
      lexical_score: { type: 'number', description: 'BM25, when among the lexical matches.' },
      temporal_score: { type: 'number' },
      day_distance: { type: 'integer' },
      via_entity: { type: 'string', description: 'With hops=2: the entity whose events brought this item in.' },
      entity_ids: { type: 'array', items: { type: 'string' } },
      title: { type: 'string', description: "Chunks: their article's headline." },
      entity_names: { type: 'array', items: { type: 'string' } },
      chunk_ids: { type: 'array', items: { type: 'string' } },
      article_ids: { type: 'array', items: { type: 'string' } },
    },
  };
  const error = {
    type: 'object',
    required: ['error', 'message'],
    properties: {
      error: { type: 'string' },
      message: { type: 'string' },
      problems: { type: 'array', items: { type: 'string' } },
    },
  };
  const errors: Record<string, unknown> = Object.fromEntries(
    (
      [
        ['400', 'invalid request (every problem listed)'],
        ['401', 'missing or wrong API key'],
        ['421', 'no API keys, on loopback: the Host is not a loopback name (DNS rebinding)'],
        ['429', 'rate limited, or too many failed authentications from this address (see Retry-After)'],
        ['503', 'datastore unavailable'],
        ['504', 'query timed out'],
      ] as const
    ).map(([code, description]) => [code, { description, content: { 'application/json': { schema: error } } }]),
  );
  const retrieval = {
    type: 'object',
    properties: {
      query: { type: 'object' },
      reformulated: { type: 'string' },
      time: {
        type: 'object',
        description:
          "How the question's own time words were read: the words, the constraint and publication window they set, the reference time, whether the latest matching report is preferred, a named event's date, and whether the request's own time parameters replaced them.",
        properties: {
          expressions: { type: 'array', items: { type: 'string' } },
          constraint: { type: 'string', enum: ['none', 'before', 'after', 'around', 'within'] },
          window: {
            type: 'object',
            properties: { from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' } },
          },
          reference: { type: 'string', format: 'date-time' },
          recency: { type: 'boolean' },
          event: { type: 'object' },
          explanation: { type: 'string' },
          applied: { type: 'boolean' },
        },
      },
      entities: { type: 'array', items: { type: 'object' } },
      items: { type: 'array', items: item },
      timings_ms: { type: 'object', additionalProperties: { type: 'number' } },
    },
  };
  const answer = {
    allOf: [
      retrieval,
      {
        type: 'object',
        properties: {
          answer: { type: 'string' },
          citations: { type: 'array', items: { type: 'object' } },
          lead: {
            type: ['object', 'null'],
            description: "The extractive answer's leading sentence: verbatim from item n, and the name it gives first.",
            properties: {
              text: { type: 'string' },
              n: { type: 'integer', minimum: 1 },
              name: { type: ['string', 'null'] },
            },
          },
          model: { type: ['string', 'null'] },
          fallback: { type: 'string' },
        },
      },
    ],
  };
  const entity = {
    type: 'object',
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      type: { type: 'string' },
      aliases: { type: 'array', items: { type: 'string' } },
      mentions: { type: 'integer' },
      first_seen: { type: ['string', 'null'], format: 'date-time' },
      last_seen: { type: ['string', 'null'], format: 'date-time' },
    },
  };
  const ok = (schema: unknown) => ({ description: 'OK', content: { 'application/json': { schema } } });
  return {
    openapi: '3.1.0',
    info: {
      title: 'neon-stream API',
      version: '1',
      description: 'Temporal, entity-centric questions over live news, as of a date, with citations; spike alerts.',
    },
    components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
    security: [{ apiKey: [] }],
    paths: {
      '/v1/search': {
        get: {
          summary: 'Retrieve interactions or chunks as of a date',
          parameters: searchParameters,
          responses: { 200: ok(retrieval), ...errors },
        },
        post: { summary: 'The same, parameters as a JSON body', responses: { 200: ok(retrieval), ...errors } },
      },
      '/v1/ask': {
        get: {
          summary: 'Answer a question as of a date, with citations',
          parameters: searchParameters,
          responses: { 200: ok(answer), ...errors },
        },
        post: { summary: 'The same, parameters as a JSON body', responses: { 200: ok(answer), ...errors } },
      },
      '/v1/entities/{id}/timeline': {
        get: {
          summary: "An entity's interactions, newest first, as of a date",
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'date', in: 'query', schema: { type: 'string' } },
            {
              name: 'before',
              in: 'query',
              description: 'Page: only items before this time.',
              schema: { type: 'string' },
            },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_K, default: 50 } },
          ],
          responses: { 200: ok({ type: 'object', properties: { items: { type: 'array', items: item } } }), ...errors },
        },
      },
      '/v1/entities': {
        get: {
          summary: 'Entities of the registry whose name or an alias contains q, most mentioned first',
          parameters: [
            { name: 'q', in: 'query', schema: { type: 'string', maxLength: 200 } },
            {
              name: 'type',
              in: 'query',
              schema: { type: 'string', enum: ['PERSON', 'ORGANIZATION', 'LOCATION', 'EVENT', 'OTHER'] },
            },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 20 } },
          ],
          responses: {
            200: ok({
              type: 'object',
              properties: { entities: { type: 'array', items: entity }, known: { type: 'integer' } },
            }),
            ...errors,
          },
        },
      },
      '/v1/entities/{id}': {
        get: {
          summary: 'One entity of the registry',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: ok(entity), 404: { description: 'no such entity' }, ...errors },
        },
      },
      '/v1/entities/{id}/mentions': {
        get: {
          summary: 'Unique chunks mentioning the entity per day or hour (what spike detection counts), as of `to`',
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
            {
              name: 'from',
              in: 'query',
              description: 'Default: 90 days (7 for hours) before `to`.',
              schema: { type: 'string' },
            },
            { name: 'to', in: 'query', description: 'Default: now.', schema: { type: 'string' } },
            { name: 'granularity', in: 'query', schema: { type: 'string', enum: ['day', 'hour'], default: 'day' } },
          ],
          responses: {
            200: ok({
              type: 'object',
              properties: {
                entity_id: { type: 'string' },
                name: { type: ['string', 'null'] },
                granularity: { type: 'string' },
                buckets: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: { start: { type: 'string', format: 'date-time' }, count: { type: 'integer' } },
                  },
                },
              },
            }),
            ...errors,
          },
        },
      },
      '/v1/status': {
        get: {
          summary: 'What this process does: mode, news source, lag and counters per stage, datastores, spikes, models',
          responses: { 200: ok({ type: 'object' }), ...errors },
        },
      },
      '/v1/articles': {
        post: {
          summary:
            'Intake: one article ({url, title, text or html, published_at, source, id?}) or {"articles": [...]} ' +
            '(up to 1,000); needs an intake token (NEON_INTAKE_TOKENS), not an API key',
          responses: {
            202: { description: 'all accepted' },
            207: { description: 'some refused: per-article reasons; refused ones are dead-lettered' },
            400: { description: 'not JSON, or neither an article nor a batch' },
            401: { description: 'missing or wrong intake token' },
            413: { description: 'body too large' },
            429: {
              description: 'rate limited, per token, or too many failed tokens from this address (see Retry-After)',
            },
            503: { description: 'could not be published; retry the request' },
          },
        },
      },
      '/v1/extraction/targets': {
        get: {
          summary: 'Extraction targets: configured subjects, the entities spiking at `at`, and the mode',
          parameters: [{ name: 'at', in: 'query', schema: { type: 'string', format: 'date-time' } }],
          responses: { 200: ok({ type: 'object' }), ...errors },
        },
        post: {
          summary: 'Add a subject ({"subject": "<entity id or name>"}); chunks from then on are extracted for it',
          responses: { 201: ok({ type: 'object' }), ...errors },
        },
      },
      '/v1/extraction/targets/{id}': {
        delete: {
          summary: 'Remove a configured subject',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: ok({ type: 'object' }), 404: { description: 'not a configured subject' }, ...errors },
        },
      },
      '/v1/spikes': {
        get: {
          summary: 'Current and past spike episodes',
          parameters: [
            { name: 'state', in: 'query', schema: { type: 'string', enum: ['open', 'ended', 'all'] } },
            { name: 'entity', in: 'query', schema: { type: 'string' } },
            { name: 'granularity', in: 'query', schema: { type: 'string', enum: ['day', 'hour'] } },
            { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time' } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
          ],
          responses: { 200: ok({ type: 'object' }), ...errors },
        },
      },
      '/v1/spikes/{id}': {
        get: {
          summary: 'One spike episode with its states',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: ok({ type: 'object' }), 404: { description: 'no such spike' } },
        },
      },
      '/v1/spikes/digest': {
        get: {
          summary: "A day's spike stories ranked by significance and volume, within the alert budget",
          parameters: [
            { name: 'date', in: 'query', schema: { type: 'string', format: 'date' } },
            { name: 'all', in: 'query', schema: { type: 'string', enum: ['true', 'false'] } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
          ],
          responses: { 200: ok({ type: 'object' }), ...errors },
        },
      },
      '/v1/spikes/stream': {
        get: {
          summary:
            'Server-sent events: one "spike" event per new alert state, a "story" event per story delivered within the budget; resume with Last-Event-ID',
          responses: { 200: { description: 'text/event-stream' } },
        },
      },
    },
  };
}

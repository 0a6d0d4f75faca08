/**
 * The OpenAPI 3.1 description of the HTTP API, served at `/v1/openapi.json`, generated from the zod
 * schemas the routes validate with (`api-schemas.ts`, the search request's own schema) and the
 * schemas of the JSON they answer with, through zod's own JSON Schema output: OpenAPI 3.1 schemas
 * are JSON Schema 2020-12, so nothing is translated by hand. A parameter the routes do not take, or
 * a bound they do not enforce, cannot appear here; the API's tests check that every route is
 * described and that real answers fit what is described.
 */
import { z } from 'zod';
import { searchRequestSchema } from '../processors/query/search-request.js';
import { articleLineSchema } from '../processors/intake/article-line.js';
import {
  digestJsonSchema,
  spikeAlertJsonSchema,
  spikeEpisodeWithStatesJsonSchema,
  spikeListJsonSchema,
  storyJsonSchema,
} from '../processors/spikes/spike-view-schemas.js';
import { articleIntakeQuery, MAX_ARTICLES_PER_REQUEST } from './article-endpoint.js';
import {
  addedExtractionTargetResponseSchema,
  addExtractionTargetBody,
  answerResponseSchema,
  apiErrorSchema,
  articleIntakeResponseSchema,
  digestQuery,
  entityEventsQuery,
  entityEventsResponseSchema,
  entityJsonSchema,
  entityListQuery,
  eventJsonSchema,
  eventQuery,
  eventResponseSchema,
  entityListResponseSchema,
  extractionTargetsQuery,
  extractionTargetsResponseSchema,
  healthResponseSchema,
  mentionsQuery,
  mentionsResponseSchema,
  removedExtractionTargetResponseSchema,
  retrievalResponseSchema,
  spikeListQuery,
  statusResponseSchema,
  timelineQuery,
  timelineResponseSchema,
} from './api-schemas.js';

type JsonSchema = Record<string, unknown>;

/** Named response schemas, under `components.schemas`. */
const COMPONENTS = {
  Error: apiErrorSchema,
  Retrieval: retrievalResponseSchema,
  Answer: answerResponseSchema,
  Timeline: timelineResponseSchema,
  Event: eventJsonSchema,
  EventWithNeighbours: eventResponseSchema,
  EntityEvents: entityEventsResponseSchema,
  Entity: entityJsonSchema,
  EntityList: entityListResponseSchema,
  Mentions: mentionsResponseSchema,
  Status: statusResponseSchema,
  ExtractionTargets: extractionTargetsResponseSchema,
  AddedExtractionTarget: addedExtractionTargetResponseSchema,
  RemovedExtractionTarget: removedExtractionTargetResponseSchema,
  ArticleIntake: articleIntakeResponseSchema,
  SpikeList: spikeListJsonSchema,
  SpikeEpisode: spikeEpisodeWithStatesJsonSchema,
  SpikeAlert: spikeAlertJsonSchema,
  Story: storyJsonSchema,
  Digest: digestJsonSchema,
  Health: healthResponseSchema,
} satisfies Record<string, z.ZodType>;

export type ComponentName = keyof typeof COMPONENTS;

/**
 * A zod schema as JSON Schema 2020-12: `input` for what a client sends (defaults optional,
 * coercions as their target types), `output` for what the API answers.
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json: JsonSchema = { ...z.toJSONSchema(schema, { target: 'draft-2020-12', io }) };
  // The document's dialect is already 2020-12; a `$schema` inside each schema would only repeat it.
  delete json['$schema'];
  return json;
}

/** One query parameter per property of an object schema, with its description and requiredness. */
function queryParameters(schema: z.ZodObject): JsonSchema[] {
  const json = jsonSchemaOf(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...propertySchema } = property;
    return {
      name,
      in: 'query',
      ...(json.required?.includes(name) ? { required: true } : {}),
      ...(typeof description === 'string' ? { description } : {}),
      schema: propertySchema,
    };
  });
}

function pathParameter(name: string, description: string, schema: z.ZodType = z.string().min(1)): JsonSchema {
  return { name, in: 'path', required: true, description, schema: jsonSchemaOf(schema, 'input') };
}

const ref = (name: ComponentName): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

function json(description: string, name: ComponentName): JsonSchema {
  return { description, content: { 'application/json': { schema: ref(name) } } };
}

function jsonBody(schema: z.ZodType, description?: string): JsonSchema {
  return {
    required: true,
    ...(description ? { description } : {}),
    content: { 'application/json': { schema: jsonSchemaOf(schema, 'input') } },
  };
}

const ERROR_DESCRIPTIONS = {
  400: 'invalid request (every problem listed)',
  401: 'missing or wrong API key',
  404: 'not found',
  421: 'no API keys, on loopback: the Host is not a loopback name (DNS rebinding)',
  429: 'rate limited, or too many failed authentications from this address (see Retry-After)',
  503: 'datastore unavailable',
  504: 'query timed out',
} as const;

type ErrorStatus = keyof typeof ERROR_DESCRIPTIONS;

/** Error answers, each with the error schema; a description given replaces the shared one. */
function errors(statuses: readonly ErrorStatus[], own: Partial<Record<number, string>> = {}): JsonSchema {
  return Object.fromEntries(statuses.map((s) => [s, json(own[s] ?? ERROR_DESCRIPTIONS[s], 'Error')]));
}

/** Errors of any route behind an API key. */
const GUARDED: readonly ErrorStatus[] = [401, 421, 429];
const DATASTORE: readonly ErrorStatus[] = [503, 504];

const entityId = z.string().min(1).max(512);

/** The OpenAPI 3.1 description of the HTTP API, served at `/v1/openapi.json`. */
export function openApiDocument(): Record<string, unknown> {
  const searchParameters = queryParameters(searchRequestSchema);
  const searchBody = jsonBody(searchRequestSchema, 'The same parameters as a JSON object.');
  const noKey: JsonSchema[] = [];
  return {
    openapi: '3.1.0',
    info: {
      title: 'neon-stream API',
      version: '1',
      description: 'Temporal, entity-centric questions over live news, as of a date, with citations; spike alerts.',
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (NEON_API_KEYS); none configured: open.' },
        intakeToken: { type: 'http', scheme: 'bearer', description: 'An intake token (NEON_INTAKE_TOKENS).' },
      },
      schemas: Object.fromEntries(Object.entries(COMPONENTS).map(([name, s]) => [name, jsonSchemaOf(s, 'output')])),
    },
    security: [{ apiKey: [] }],
    paths: {
      '/v1/search': {
        get: {
          summary: 'Retrieve interactions or chunks as of a date',
          parameters: searchParameters,
          responses: { 200: json('OK', 'Retrieval'), ...errors([400, ...GUARDED, ...DATASTORE]) },
        },
        post: {
          summary: 'The same, parameters as a JSON body',
          requestBody: searchBody,
          responses: { 200: json('OK', 'Retrieval'), ...errors([400, ...GUARDED, ...DATASTORE]) },
        },
      },
      '/v1/ask': {
        get: {
          summary: 'Answer a question as of a date, with citations',
          parameters: searchParameters,
          responses: { 200: json('OK', 'Answer'), ...errors([400, ...GUARDED, ...DATASTORE]) },
        },
        post: {
          summary: 'The same, parameters as a JSON body',
          requestBody: searchBody,
          responses: { 200: json('OK', 'Answer'), ...errors([400, ...GUARDED, ...DATASTORE]) },
        },
      },
      '/v1/entities': {
        get: {
          summary: 'Entities of the registry whose name or an alias contains q, most mentioned first',
          parameters: queryParameters(entityListQuery),
          responses: { 200: json('OK', 'EntityList'), ...errors([400, ...GUARDED]) },
        },
      },
      '/v1/entities/{id}': {
        get: {
          summary: 'One entity of the registry',
          parameters: [pathParameter('id', 'Entity id.')],
          responses: { 200: json('OK', 'Entity'), ...errors([404, ...GUARDED], { 404: 'no such entity' }) },
        },
      },
      '/v1/entities/{id}/timeline': {
        get: {
          summary: "An entity's interactions, newest first, as of a date",
          parameters: [pathParameter('id', 'Entity id.', entityId), ...queryParameters(timelineQuery)],
          responses: { 200: json('OK', 'Timeline'), ...errors([400, ...GUARDED, ...DATASTORE]) },
        },
      },
      '/v1/entities/{id}/events': {
        get: {
          summary: "An entity's story: its events, earliest first, as of a date",
          description:
            "Events are built from the interactions as of the date: those of the same participants on one day that say the same thing are one event with many reports; each event links to the story's previous and next one.",
          parameters: [pathParameter('id', 'Entity id.', entityId), ...queryParameters(entityEventsQuery)],
          responses: { 200: json('OK', 'EntityEvents'), ...errors([400, ...GUARDED, ...DATASTORE]) },
        },
      },
      '/v1/events/{id}': {
        get: {
          summary:
            'One event of the event graph as of a date, with the events before and after it through each participant',
          parameters: [pathParameter('id', 'Event id (`ev-…`).'), ...queryParameters(eventQuery)],
          responses: {
            200: json('OK', 'EventWithNeighbours'),
            ...errors([400, 404, ...GUARDED, ...DATASTORE], { 404: 'no such event as of the date' }),
          },
        },
      },
      '/v1/entities/{id}/mentions': {
        get: {
          summary: 'Unique chunks mentioning the entity per day or hour (what spike detection counts), as of `to`',
          description: 'At most 3 years by day, 31 days by hour.',
          parameters: [pathParameter('id', 'Entity id.', entityId), ...queryParameters(mentionsQuery)],
          responses: {
            200: json('OK', 'Mentions'),
            ...errors([400, ...GUARDED, ...DATASTORE], { 503: 'no datastore attached, or it is unavailable' }),
          },
        },
      },
      '/v1/status': {
        get: {
          summary: 'What this process does: mode, news source, lag and counters per stage, datastores, spikes, models',
          responses: {
            200: json('OK', 'Status'),
            ...errors([...GUARDED, 503], { 503: 'the status could not be gathered' }),
          },
        },
      },
      '/v1/articles': {
        post: {
          summary:
            'Intake: one article ({url, title, text or html, published_at, source, id?}) or {"articles": [...]} ' +
            `(up to ${MAX_ARTICLES_PER_REQUEST.toLocaleString('en')}); needs an intake token (NEON_INTAKE_TOKENS), not an API key`,
          security: [{ intakeToken: [] }],
          parameters: queryParameters(articleIntakeQuery),
          requestBody: jsonBody(
            z.union([
              articleLineSchema,
              z.object({ articles: z.array(articleLineSchema).min(1).max(MAX_ARTICLES_PER_REQUEST) }),
            ]),
          ),
          responses: {
            202: json('all accepted', 'ArticleIntake'),
            207: json('some refused: per-article reasons; refused ones are dead-lettered', 'ArticleIntake'),
            400: json('not JSON, or neither an article nor a batch', 'Error'),
            401: json('missing or wrong intake token', 'Error'),
            413: json('body too large', 'Error'),
            415: json('not application/json', 'Error'),
            429: json(
              'rate limited, per token, or too many failed tokens from this address (see Retry-After)',
              'Error',
            ),
            503: json('could not be published; retry the request', 'Error'),
          },
        },
      },
      '/v1/extraction/targets': {
        get: {
          summary: 'Extraction targets: configured subjects, the entities spiking at `at`, and the mode',
          parameters: queryParameters(extractionTargetsQuery),
          responses: { 200: json('OK', 'ExtractionTargets'), ...errors([400, ...GUARDED]) },
        },
        post: {
          summary: 'Add a subject; chunks from then on are extracted for it',
          requestBody: jsonBody(addExtractionTargetBody),
          responses: { 201: json('added', 'AddedExtractionTarget'), ...errors([400, ...GUARDED]) },
        },
      },
      '/v1/extraction/targets/{id}': {
        delete: {
          summary: 'Remove a configured subject',
          parameters: [pathParameter('id', 'Entity id of the subject.')],
          responses: {
            200: json('removed', 'RemovedExtractionTarget'),
            ...errors([404, ...GUARDED], { 404: 'not a configured subject' }),
          },
        },
      },
      '/v1/spikes': {
        get: {
          summary: 'Current and past spike episodes, open ones first, each with its latest state',
          parameters: queryParameters(spikeListQuery),
          responses: { 200: json('OK', 'SpikeList'), ...errors([400, ...GUARDED]) },
        },
      },
      '/v1/spikes/{id}': {
        get: {
          summary: 'One spike episode with its states',
          parameters: [pathParameter('id', 'Spike id.')],
          responses: { 200: json('OK', 'SpikeEpisode'), ...errors([404, ...GUARDED], { 404: 'no such spike' }) },
        },
      },
      '/v1/spikes/digest': {
        get: {
          summary: "A day's spike stories ranked by significance and volume, within the alert budget",
          parameters: queryParameters(digestQuery),
          responses: { 200: json('OK', 'Digest'), ...errors([400, ...GUARDED]) },
        },
      },
      '/v1/spikes/stream': {
        get: {
          summary:
            'Server-sent events: one "spike" event per new alert state (data: a SpikeAlert), a "story" event per ' +
            'story delivered within the budget (data: a Story); resume with Last-Event-ID',
          parameters: [
            {
              name: 'access_token',
              in: 'query',
              description: "The API key, for clients that cannot set headers (a browser's EventSource).",
              schema: { type: 'string' },
            },
            {
              name: 'Last-Event-ID',
              in: 'header',
              description: 'The id of the last event received: the stream resumes after it.',
              schema: { type: 'string' },
            },
          ],
          responses: {
            200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            ...errors(GUARDED),
          },
        },
      },
      '/v1/openapi.json': {
        get: {
          summary: 'This document',
          security: noKey,
          responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: {} } } } },
        },
      },
      '/healthz': {
        get: {
          summary: 'The server answers',
          security: noKey,
          responses: { 200: json('OK', 'Health'), ...errors([421]) },
        },
      },
      '/': {
        get: {
          summary: 'The web dashboard',
          security: noKey,
          responses: {
            200: { description: 'Its page', content: { 'text/html': { schema: { type: 'string' } } } },
            304: { description: 'Not modified (If-None-Match)' },
            ...errors([404, 421], { 404: 'the dashboard files are not installed' }),
          },
        },
      },
      '/web/{file}': {
        get: {
          summary: "The dashboard's scripts, styles and icons",
          security: noKey,
          parameters: [pathParameter('file', 'A file under the web root (it may contain slashes).')],
          responses: {
            200: { description: 'The file, with its content type' },
            304: { description: 'Not modified (If-None-Match)' },
            ...errors([404, 421], { 404: 'no such file' }),
          },
        },
      },
    },
  };
}

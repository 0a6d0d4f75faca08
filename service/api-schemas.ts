/**
 * The zod schemas of the HTTP API: the query parameters and bodies the routes validate with, and the
 * JSON they answer with. The routes parse with the request schemas; `openapi.ts` turns all of them
 * into the OpenAPI document, so the document cannot describe a parameter the routes do not take.
 * The spike alerts' shapes live beside their views (`processors/spikes/spike-view-schemas.ts`), and
 * the search request beside its parser (`processors/query/search-request.ts`).
 */
import { z } from 'zod';
import { ENTITY_TYPE_SYMBOLS } from '../schemas/records.generated.js';
import { INTAKE_REJECTION_REASONS } from '../processors/intake/article-input.js';
import { MAX_K } from '../processors/query/search-request.js';
import type { AnswerResult } from '../streams/retrieval/answer-question.js';
import type { RetrievalResult } from '../streams/retrieval/retrieve.js';
import type { StatusDocument } from './status-routes.js';

const isoTime = z.iso.datetime();
/** An instant as a caller may write it: ISO 8601 with an offset, or a bare date (UTC). */
const instant = z.iso.datetime({ offset: true }).or(z.iso.date());

// ---- Requests ----------------------------------------------------------------------------------

export const timelineQuery = z
  .object({
    date: instant.optional().describe('As of this time (a bare date: the end of that day, UTC). Default: now.'),
    before: z.iso.datetime({ offset: true }).optional().describe('Page: only items before this time.'),
    limit: z.coerce.number().int().min(1).max(MAX_K).default(50),
  })
  .strict();

export const entityEventsQuery = z
  .object({
    date: instant.optional().describe('As of this time (a bare date: the end of that day, UTC). Default: now.'),
    from: instant.optional().describe('Only events first reported at or after this time (a bare date: its start).'),
    limit: z.coerce.number().int().min(1).max(200).default(50).describe('The latest this many events.'),
  })
  .strict();

export const eventQuery = z
  .object({
    date: instant.optional().describe('As of this time (a bare date: the end of that day, UTC). Default: now.'),
  })
  .strict();

export const entityListQuery = z
  .object({
    q: z.string().max(200).optional().describe('Text the name or an alias contains.'),
    type: z.enum(ENTITY_TYPE_SYMBOLS).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(20),
  })
  .strict();

export const mentionsQuery = z
  .object({
    from: instant.optional().describe('Default: 90 days (7 for hours) before `to`; a bare date: its start.'),
    to: instant.optional().describe('Default: now; a bare date: its end.'),
    granularity: z.enum(['day', 'hour']).default('day'),
  })
  .strict();

export const MAX_SPIKE_LIMIT = 1000;

export const spikeListQuery = z
  .object({
    state: z.enum(['open', 'ended', 'all']).default('all'),
    entity: z.string().min(1).max(512).optional().describe('Only the episodes of this entity id.'),
    granularity: z.enum(['day', 'hour']).optional(),
    since: z.iso.datetime({ offset: true }).optional().describe('Episodes still open at, or ended after, this time.'),
    limit: z.coerce.number().int().min(1).max(MAX_SPIKE_LIMIT).default(100),
  })
  .strict();

export const digestQuery = z
  .object({
    date: z.iso.date().optional().describe('The day (UTC). Default: the latest day that has stories.'),
    all: z.enum(['true', 'false']).default('false').describe('List every story of the day under `more`.'),
    limit: z.coerce.number().int().min(1).max(MAX_SPIKE_LIMIT).optional(),
  })
  .strict();

export const extractionTargetsQuery = z.strictObject({
  at: z.iso.datetime({ offset: true }).optional().describe('Which entities are spiking at this time. Default: now.'),
});

export const addExtractionTargetBody = z.strictObject({
  subject: z.string().trim().min(1).max(256).describe('An entity id or name.'),
});

// ---- Responses ---------------------------------------------------------------------------------

export const apiErrorSchema = z
  .object({
    error: z.string().describe('A code, e.g. invalid_request, unauthorized, not_found, rate_limited.'),
    message: z.string(),
    problems: z.array(z.string()).optional().describe('Every problem of an invalid request.'),
  })
  .describe('An error answer.');

const entityRef = z.object({ id: z.string(), name: z.string() });

export const retrievedItemSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['interaction', 'chunk']),
    text: z.string(),
    published_at: isoTime,
    url: z.string().nullable(),
    score: z.number().describe("The strategy's final score: relevance, with time where it weighs it."),
    relevance: z.number().describe('Dense and lexical relevance, fused.'),
    semantic_score: z
      .number()
      .optional()
      .describe(
        "Dense similarity (1 + cos) / 2, when among the nearest vectors; for a statement matched through its passage, the better of its own and its passage's.",
      ),
    lexical_score: z
      .number()
      .optional()
      .describe(
        "BM25, when among the lexical matches; for a statement matched through its passage, the better of its own match and its passage's, each as a share of its list's best (0-1].",
      ),
    sentence_score: z
      .number()
      .optional()
      .describe('Its best answer sentence’s score, when one of its sentences shares a word with the question.'),
    temporal_score: z.number().optional(),
    day_distance: z.number().int().optional(),
    via_entity: z.string().optional().describe('With hops ≥ 2: the entity whose events brought this item in.'),
    hop: z.number().int().optional().describe('With hops ≥ 2: the hop that found it (2 for the first later hop).'),
    via_query: z.string().optional().describe("With hops ≥ 2: the later hop's own sub-query that found it."),
    entity_ids: z.array(z.string()),
    title: z.string().optional().describe("Chunks: their article's headline."),
    entity_names: z.array(z.string()).optional().describe('Chunks: the names of their marked entities.'),
    passage: z
      .string()
      .optional()
      .describe('Interactions: the passage the statement was extracted from (its chunk’s text), when stored.'),
    subject: entityRef.optional().describe("Interactions: the subject's entity."),
    object: entityRef.nullable().optional().describe("Interactions: the object's entity, if any."),
    chunk_ids: z.array(z.string()),
    article_ids: z.array(z.string()),
  })
  .describe('One retrieved document: an interaction or a chunk.');

const timeReadingSchema = z
  .object({
    expressions: z.array(z.string()).describe('The time words found, as written.'),
    constraint: z.enum(['none', 'before', 'after', 'around', 'within']),
    window: z.object({ from: isoTime.optional(), to: isoTime.optional() }).optional(),
    reference: isoTime,
    recency: z.boolean().describe('The latest matching report is preferred.'),
    event: z
      .object({ relation: z.enum(['before', 'after']), phrase: z.string(), at: isoTime.nullable() })
      .optional()
      .describe('"before/after <named event>": the event and the date a lookup found for it.'),
    as_recency: z.boolean().optional().describe('A recent period up to now, weighed as recency, not filtered.'),
    outside: z
      .number()
      .int()
      .optional()
      .describe('The window held fewer than k items: this many from outside it come last.'),
    explanation: z.string(),
    applied: z.boolean().describe("False when the request's own time parameters replaced the question's time scope."),
  })
  .describe(
    "How the question's own time words were read: the words, the constraint and publication window they set, the reference time, whether the latest matching report is preferred, a named event's date, and whether the request's own time parameters replaced them.",
  );

/** The request as understood, defaults filled (see `describe` in `query-routes.ts`). */
const understoodQuerySchema = z.object({
  q: z.string(),
  date: isoTime,
  k: z.number().int(),
  strategy: z.string(),
  store: z.string(),
  constraint: z.string(),
  constraint_date: isoTime,
  window_days: z.number().int(),
  alpha: z.number(),
  hops: z.number().int(),
  fusion: z.string(),
  answer_sentences: z.boolean(),
  per_article: z.number().int(),
  time_words: z.boolean(),
  include_future: z.boolean(),
});

const retrievalFields = {
  query: understoodQuerySchema.describe('The request as understood, defaults filled.'),
  reformulated: z.string().describe('The query as searched for.'),
  time: timeReadingSchema.optional(),
  entities: z
    .array(z.object({ id: z.string(), name: z.string(), surface: z.string().describe('The words that named it.') }))
    .describe('Entities of the registry the question names.'),
  items: z.array(retrievedItemSchema),
  timings_ms: z.record(z.string(), z.number()),
  decomposition: z
    .object({
      by: z.string().describe('The model that planned the later hops, or "offline".'),
      fallbacks: z
        .array(z.string())
        .optional()
        .describe("Hops the model's plan could not be used for (planned offline instead), and why."),
    })
    .optional()
    .describe('How the later hops were planned; present when more than one hop was asked for.'),
};

export const retrievalResponseSchema = z
  .object(retrievalFields)
  .describe('Retrieval only: the reformulated query, linked entities, ranked items.');

export const answerResponseSchema = z
  .object({
    ...retrievalFields,
    answer: z.string().describe('The answer, citing items as [n].'),
    citations: z.array(
      z.object({
        n: z.number().int().min(1),
        id: z.string(),
        kind: z.enum(['interaction', 'chunk']),
        url: z.string().nullable(),
        published_at: isoTime,
      }),
    ),
    lead: z
      .object({
        text: z.string().describe('The sentence, verbatim from item n.'),
        n: z.number().int().min(1),
        name: z.string().nullable().describe('The name it gives first, for a question that asks for a name.'),
        context: z
          .string()
          .optional()
          .describe(
            'The sentence before it in the same item, quoted with it because the lead opens on what that one said ("In response to the visit, …"); absent when the lead reads alone.',
          ),
      })
      .nullable()
      .describe("The extractive answer's leading sentence; null for an LLM answer or when nothing answered."),
    disagreements: z
      .array(
        z.object({
          slot: z.string().describe('What they disagree about: "killed", "injured", "% of vote", "seats", "name"…'),
          sources: z
            .array(
              z.object({
                n: z.number().int().min(1),
                source: z.string().describe("The publisher's host."),
                value: z.string().describe('What it reports: "12 killed", "Jane Smith".'),
                published_at: isoTime,
              }),
            )
            .length(2)
            .describe('The two reports, the earlier first.'),
        }),
      )
      .optional()
      .describe('Sources of the extractive answer that report one event with different facts; absent when none do.'),
    model: z.string().nullable().describe('The model that wrote the answer; null for the extractive answer.'),
    fallback: z.string().optional().describe('Why an LLM answer was not given although a model is configured.'),
  })
  .describe('Retrieval plus an answer with citations [n].');

export const timelineResponseSchema = z.object({
  entity_id: z.string(),
  date: isoTime.describe('As of this time.'),
  items: z.array(retrievedItemSchema).describe("The entity's interactions, newest first."),
  timings_ms: z.record(z.string(), z.number()),
});

const participantSchema = z.object({ id: z.string(), name: z.string() });

export const eventJsonSchema = z
  .object({
    id: z.string().describe('`ev-` and its first report: stable while later reports join it.'),
    day: z.iso.date().describe('UTC day of its first report.'),
    when: isoTime.describe('Its first report.'),
    last_reported: isoTime.describe('Its latest report as of the date.'),
    who: z.array(participantSchema).describe('Its participants: the subject, then the object.'),
    where: z.array(participantSchema).describe('The participants that are places.'),
    what: z.string().describe('The statement that shares most words with the other reports.'),
    reports: z
      .array(
        z.object({
          interaction_id: z.string(),
          statement: z.string(),
          published_at: isoTime,
          urls: z.array(z.string()).describe("The reporting articles' URLs."),
        }),
      )
      .describe('Every report of the event (one event, many sources), earliest first.'),
    sources: z.array(z.string()).describe('Distinct source URLs, in the order they first reported it.'),
    articles: z.number().int().describe('Distinct articles behind the reports.'),
  })
  .describe('An event of the event graph: interactions of the same participants on one day that say the same thing.');

const eventLinkSchema = z.object({
  event_id: z.string(),
  via: participantSchema.describe('The participant both events share.'),
  when: isoTime,
  what: z.string(),
});

export const entityEventsResponseSchema = z.object({
  entity_id: z.string(),
  name: z.string().nullable().describe("The entity's name in the registry; null when it is not there."),
  date: isoTime.describe('As of this time.'),
  events: z
    .array(
      eventJsonSchema.extend({
        before: z.string().nullable().describe("The story's previous event."),
        after: z.string().nullable().describe("The story's next event (as of the date)."),
      }),
    )
    .describe("The entity's events, earliest first: its story."),
  complete: z
    .boolean()
    .describe('False when older events were left out (the limit, or more interactions than a story reads).'),
  timings_ms: z.record(z.string(), z.number()),
});

export const eventResponseSchema = z.object({
  date: isoTime.describe('As of this time.'),
  event: eventJsonSchema,
  before: z
    .array(eventLinkSchema)
    .describe("For each participant, the event just before this one in the participant's story."),
  after: z
    .array(eventLinkSchema)
    .describe("For each participant, the event just after this one in the participant's story, as of the date."),
});

export const entityJsonSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.string(),
    aliases: z.array(z.string()),
    mentions: z.number().int(),
    first_seen: isoTime.nullable(),
    last_seen: isoTime.nullable(),
    fused_into: z
      .string()
      .nullable()
      .describe(
        'The entity this one was fused into (an acronym, short form or spelling of it); null when it stands alone.',
      ),
  })
  .describe('An entity of the registry.');

export const entityListResponseSchema = z.object({
  entities: z.array(entityJsonSchema).describe('Most mentioned first.'),
  known: z.number().int().describe('Entities in the registry.'),
});

export const mentionsResponseSchema = z.object({
  entity_id: z.string(),
  name: z.string().nullable(),
  granularity: z.enum(['day', 'hour']),
  from: isoTime,
  to: isoTime,
  buckets: z
    .array(z.object({ start: isoTime, count: z.number().int() }))
    .describe('Unique chunks mentioning the entity per bucket.'),
});

export const statusResponseSchema = z
  .object({
    mode: z.enum(['embedded', 'cluster']),
    started_at: isoTime,
    server_time: isoTime.describe("The server's clock, so a client can tell how fresh the rest is."),
    feed: z.object({
      kind: z.enum(['sample', 'feeds', 'none']),
      name: z.string(),
      articles_total: z.number().int().nullable(),
      articles_replayed: z.number().int(),
      articles_rejected: z.number().int(),
      position: isoTime.nullable().describe('Publication time of the latest article sent.'),
      done: z.boolean(),
    }),
    stages: z.array(
      z.object({
        stage: z.string(),
        group: z.string(),
        lag: z.number().int().nullable(),
        received: z.number().int(),
        sent: z.number().int(),
        dead_lettered: z.number().int(),
        running: z.boolean(),
      }),
    ),
    datastores: z.object({
      location: z.string(),
      chunks: z.number().int().nullable(),
      interactions: z.number().int().nullable(),
    }),
    entities: z.number().int(),
    spikes: z.object({ open: z.number().int(), total: z.number().int() }),
    embedder: z.string(),
    llm: z.string().nullable(),
    extractor: z.string(),
  })
  .describe('What this process does: mode, news source, lag and counters per stage, datastores, spikes, models.');

export const extractionTargetsResponseSchema = z.object({
  mode: z.enum(['gated', 'all']).describe('gated: only target subjects are extracted; all: every entity.'),
  configured: z.array(z.string()).describe('Configured subjects (entity ids).'),
  spiking: z.array(z.string()).describe('Entities spiking at `at`.'),
});

export const addedExtractionTargetResponseSchema = z.object({
  id: z.string().describe("The subject's entity id."),
  configured: z.array(z.string()),
});

export const removedExtractionTargetResponseSchema = z.object({ configured: z.array(z.string()) });

export const articleIntakeResponseSchema = z.object({
  accepted: z.array(z.object({ id: z.string(), url: z.string() })).describe('Published articles.'),
  rejected: z
    .array(
      z.object({
        index: z.number().int().min(0).describe("The article's place in the request."),
        reason: z.enum(INTAKE_REJECTION_REASONS),
        message: z.string(),
      }),
    )
    .describe('Refused articles, dead-lettered with their reason.'),
});

export const healthResponseSchema = z.object({ ok: z.literal(true) });

/**
 * The typed answers must fit their schemas: a field added to, renamed in or retyped in one of
 * these interfaces without its schema fails to compile here.
 */
type Fits<Actual extends Expected, Expected> = Actual;
export type CheckedStatus = Fits<StatusDocument, z.infer<typeof statusResponseSchema>>;
export type CheckedRetrieval = Fits<RetrievalResult, Omit<z.infer<typeof retrievalResponseSchema>, 'query'>>;
export type CheckedAnswer = Fits<AnswerResult, Omit<z.infer<typeof answerResponseSchema>, 'query'>>;

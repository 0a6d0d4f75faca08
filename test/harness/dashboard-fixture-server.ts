/**
 * A query service for the dashboard's browser tests: the real spike routes over a real `SpikeHub`
 * (alerts are pushed by hand, as the spike stage's topic would), the real status route and the
 * dashboard's own routes, plus stand-in routes for entities, mentions, timelines and `/v1/ask`
 * that answer from the fixture data below in the API's shapes. Everything here is test data.
 *
 * `/v1/ask` parses its parameters with the product's own request parser (so the page's requests are
 * checked as the real service checks them) and composes the product's extractive answer; a question
 * containing "outage" is answered 503, to show how the page reports a failure.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { extractiveAnswer } from '../../processors/query/compose-answer.js';
import { spellDate } from '../../processors/query/reformulate-query.js';
import { parseSearchRequest } from '../../processors/query/search-request.js';
import { understandQuestionTime } from '../../processors/query/understand-question-time.js';
import type { SpikeAlert } from '../../schemas/records.generated.js';
import { guardScope, sendApiError } from '../../service/api-access.js';
import { BearerTokens } from '../../processors/access/bearer-tokens.js';
import { registerDashboardRoutes } from '../../service/dashboard-routes.js';
import { registerSpikeRoutes } from '../../service/spike-routes.js';
import { registerStatusRoutes, type StatusDocument } from '../../service/status-routes.js';
import { hubFeed, SpikeHub } from '../../streams/views/spike-feed.js';

const DAY = 86_400_000;
const day = (iso: string): number => Date.parse(`${iso}T00:00:00Z`);

/** The question's time words as the query service reports them (the product's own reading). */
function timeReadingOf(q: string, tq: number): Record<string, unknown> {
  const intent = understandQuestionTime(q, tq);
  const iso = (t: number | undefined): string | undefined => (t === undefined ? undefined : new Date(t).toISOString());
  return {
    expressions: intent.expressions.map((e) => e.text),
    constraint: intent.constraint,
    ...(intent.window ? { window: { from: iso(intent.window.from), to: iso(intent.window.to) } } : {}),
    reference: iso(intent.reference),
    recency: intent.recency,
    explanation: intent.explanation,
    applied: true,
  };
}

export interface FixtureEntity {
  id: string;
  name: string;
  type: string;
  aliases: string[];
  mentions: number;
  first_seen: string | null;
  last_seen: string | null;
}

export const FIXTURE_ENTITIES: readonly FixtureEntity[] = [
  {
    id: 'e-m23',
    name: 'M23',
    type: 'ORGANIZATION',
    aliases: ['March 23 Movement'],
    mentions: 412,
    first_seen: '2024-12-02T08:00:00.000Z',
    last_seen: '2025-01-30T18:20:00.000Z',
  },
  {
    id: 'e-goma',
    name: 'Goma',
    type: 'LOCATION',
    aliases: [],
    mentions: 388,
    first_seen: '2024-12-05T10:00:00.000Z',
    last_seen: '2025-01-30T16:00:00.000Z',
  },
  {
    id: 'e-rwanda',
    name: 'Rwanda',
    type: 'LOCATION',
    aliases: ['Republic of Rwanda'],
    mentions: 205,
    first_seen: '2024-12-03T09:00:00.000Z',
    last_seen: '2025-01-30T12:00:00.000Z',
  },
  {
    id: 'e-tshisekedi',
    name: 'Félix Tshisekedi',
    type: 'PERSON',
    aliases: ['Tshisekedi'],
    mentions: 97,
    first_seen: '2024-12-10T07:00:00.000Z',
    last_seen: '2025-01-29T21:00:00.000Z',
  },
  {
    id: 'e-monusco',
    name: 'MONUSCO',
    type: 'ORGANIZATION',
    aliases: ['UN mission in Congo'],
    mentions: 64,
    first_seen: '2024-12-12T07:00:00.000Z',
    last_seen: '2025-01-28T15:00:00.000Z',
  },
  {
    id: 'e-minova',
    name: 'Minova',
    type: 'LOCATION',
    aliases: [],
    mentions: 23,
    first_seen: '2025-01-20T07:00:00.000Z',
    last_seen: '2025-01-27T15:00:00.000Z',
  },
];

/**
 * Daily mention counts of M23: a quiet baseline with empty days left out (as the API does), a
 * small episode in early January and the big one from January 23.
 */
export function m23DailyCounts(): { start: number; count: number }[] {
  const counts: { start: number; count: number }[] = [];
  const surge: Record<string, number> = {
    '2025-01-05': 7,
    '2025-01-06': 9,
    '2025-01-07': 6,
    '2025-01-23': 12,
    '2025-01-24': 18,
    '2025-01-25': 25,
    '2025-01-26': 31,
    '2025-01-27': 22,
    '2025-01-28': 15,
    '2025-01-29': 9,
    '2025-01-30': 6,
  };
  for (let t = day('2024-12-02'); t <= day('2025-01-30'); t += DAY) {
    const iso = new Date(t).toISOString().slice(0, 10);
    const n = (t / DAY) % 7;
    const count = surge[iso] ?? [2, 0, 3, 1, 4, 0, 2][n]!;
    if (count > 0) counts.push({ start: t, count });
  }
  return counts;
}

/** Other entities: M23's days, scaled down and shifted (Goma trails M23 by a day); Minova has none. */
export function dailyCountsOf(entityId: string): { start: number; count: number }[] {
  if (entityId === 'e-m23') return m23DailyCounts();
  const shape: Record<string, { shift: number; scale: number }> = {
    'e-goma': { shift: 1, scale: 0.9 },
    'e-rwanda': { shift: 2, scale: 0.5 },
    'e-tshisekedi': { shift: 0, scale: 0.3 },
    'e-monusco': { shift: 0, scale: 0.2 },
  };
  const found = shape[entityId];
  if (!found) return [];
  return m23DailyCounts()
    .map((c) => ({ start: c.start + found.shift * DAY, count: Math.round(c.count * found.scale) }))
    .filter((c) => c.count > 0 && c.start <= day('2025-01-30'));
}

interface AlertInput {
  entity: FixtureEntity;
  started: string;
  state: SpikeAlert['state'];
  windowEnd: string;
  observed: number;
  score: number;
  detected?: string;
  urls?: string[];
}

/** A day-granularity alert as the spike stage writes it (times in epoch ms). */
export function fixtureAlert(input: AlertInput): SpikeAlert {
  const windowEnd = day(input.windowEnd);
  const counts = Array.from({ length: 10 }, (_, i) => ({
    bucket_start: windowEnd - (10 - i) * DAY,
    count: i >= 7 ? Math.round(input.observed / 3) : 1 + (i % 3),
  }));
  const urls = input.urls ?? [
    `https://news.example/${input.entity.id}/${input.windowEnd}/a`,
    `https://wire.example/${input.entity.id}/${input.windowEnd}/b`,
  ];
  return {
    id: `spike:${input.entity.id}:day:${input.started}`,
    entity_id: input.entity.id,
    entity_name: input.entity.name,
    entity_type: input.entity.type as SpikeAlert['entity_type'],
    granularity: 'DAY',
    window_start: windowEnd - 3 * DAY,
    window_end: windowEnd,
    observed: input.observed,
    baseline_mean: 5.2,
    baseline_std: 2.1,
    threshold: 7.3,
    score: input.score,
    article_ids: urls.map((_, i) => `art-${input.entity.id}-${i}`),
    urls,
    detected_at: input.detected === undefined ? windowEnd + 2 * 3_600_000 : Date.parse(input.detected),
    state: input.state,
    episode_start: day(input.started),
    rule: '3-day rolling sum > mean + 1 std of the previous 28 (at least 3)',
    baseline_buckets: 28,
    counts,
    first_interactions: [],
    method: 'surprise',
    significance: input.score,
    articles: Math.round(input.observed / 2),
  };
}

const entity = (id: string): FixtureEntity => FIXTURE_ENTITIES.find((e) => e.id === id)!;

/** The alert states the service knows when the page loads, in the order the topic had them. */
export function initialAlerts(): SpikeAlert[] {
  const m23 = entity('e-m23');
  const early = { entity: m23, started: '2025-01-05' };
  const main = { entity: m23, started: '2025-01-23' };
  return [
    fixtureAlert({ ...early, state: 'STARTED', windowEnd: '2025-01-06', observed: 16, score: 4.3 }),
    fixtureAlert({ ...early, state: 'ENDED', windowEnd: '2025-01-09', observed: 6, score: 0.4 }),
    fixtureAlert({
      entity: entity('e-tshisekedi'),
      started: '2025-01-14',
      state: 'STARTED',
      windowEnd: '2025-01-15',
      observed: 11,
      score: 2.8,
    }),
    fixtureAlert({
      entity: entity('e-tshisekedi'),
      started: '2025-01-14',
      state: 'ENDED',
      windowEnd: '2025-01-17',
      observed: 4,
      score: -0.2,
    }),
    fixtureAlert({ ...main, state: 'STARTED', windowEnd: '2025-01-24', observed: 30, score: 11.8 }),
    fixtureAlert({ ...main, state: 'ONGOING', windowEnd: '2025-01-27', observed: 78, score: 34.7 }),
    fixtureAlert({
      entity: entity('e-goma'),
      started: '2025-01-26',
      state: 'STARTED',
      windowEnd: '2025-01-27',
      observed: 41,
      score: 17.1,
    }),
  ];
}

/** The alert a test pushes while the page is open. */
export function liveAlert(): SpikeAlert {
  return fixtureAlert({
    entity: entity('e-rwanda'),
    started: '2025-01-28',
    state: 'STARTED',
    windowEnd: '2025-01-29',
    observed: 27,
    score: 9.6,
  });
}

interface FixtureItem {
  id: string;
  kind: 'interaction' | 'chunk';
  text: string;
  published_at: string;
  url: string | null;
  entity_ids: string[];
  subject?: { id: string; name: string };
  object?: { id: string; name: string } | null;
}

const ref = (id: string): { id: string; name: string } => ({ id, name: entity(id).name });

/** Interactions and chunks of the datastores, oldest first. */
export const FIXTURE_ITEMS: readonly FixtureItem[] = [
  ['2025-01-20T09:10:00Z', 'e-m23', 'e-minova', 'M23 fighters advanced towards Minova, a supply town on Lake Kivu.'],
  ['2025-01-21T14:30:00Z', 'e-monusco', 'e-goma', 'MONUSCO reinforced its positions around Goma.'],
  ['2025-01-23T07:45:00Z', 'e-m23', 'e-minova', 'M23 took control of Minova after heavy fighting.'],
  ['2025-01-24T18:00:00Z', 'e-tshisekedi', 'e-m23', 'Félix Tshisekedi called the M23 offensive a declaration of war.'],
  ['2025-01-25T11:20:00Z', 'e-rwanda', 'e-m23', 'Rwanda denied supplying troops to M23.'],
  ['2025-01-26T16:05:00Z', 'e-m23', 'e-goma', 'M23 rebels entered the outskirts of Goma.'],
  ['2025-01-27T06:30:00Z', 'e-m23', 'e-goma', 'M23 claimed it had captured Goma, the largest city in eastern Congo.'],
  ['2025-01-28T13:15:00Z', 'e-monusco', 'e-goma', 'MONUSCO said peacekeepers remained in their bases in Goma.'],
  ['2025-01-29T10:40:00Z', 'e-m23', 'e-goma', 'M23 named a new governor for North Kivu in Goma.'],
  ['2025-01-30T17:00:00Z', 'e-tshisekedi', 'e-m23', 'Félix Tshisekedi vowed a vigorous response to M23.'],
]
  .map(([at, subject, object, text], i): FixtureItem => ({
    id: `int-${i + 1}`,
    kind: 'interaction',
    text: text!,
    published_at: new Date(at!).toISOString(),
    url: `https://news.example/2025/01/story-${i + 1}`,
    entity_ids: [subject!, object!],
    subject: ref(subject!),
    object: ref(object!),
  }))
  .concat(
    [
      [
        '2025-01-22T08:00:00Z',
        'Fighting between M23 and the army spread along the road from Sake to Goma.',
        ['e-m23', 'e-goma'],
      ],
      [
        '2025-01-27T09:30:00Z',
        'Residents of Goma reported gunfire near the airport as M23 moved in.',
        ['e-goma', 'e-m23'],
      ],
      [
        '2025-01-28T20:00:00Z',
        'Thousands fled Goma towards the Rwandan border town of Gisenyi.',
        ['e-goma', 'e-rwanda'],
      ],
    ].map(([at, text, ids], i): FixtureItem => ({
      id: `chunk-${i + 1}`,
      kind: 'chunk',
      text: text as string,
      published_at: new Date(at as string).toISOString(),
      url: i === 2 ? null : `https://wire.example/2025/01/chunk-${i + 1}`,
      entity_ids: ids as string[],
    })),
  )
  .sort((a, b) => a.published_at.localeCompare(b.published_at));

function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

function entityJson(e: FixtureEntity): FixtureEntity {
  return { ...e };
}

function itemJson(item: FixtureItem, score: number, semantic: number): Record<string, unknown> {
  return {
    ...item,
    score,
    semantic_score: semantic,
    chunk_ids: item.kind === 'chunk' ? [item.id] : [`chunk-of-${item.id}`],
    article_ids: [`art-${item.id}`],
  };
}

/** Counts per call to `/v1/status`, so the strip visibly moves while a test watches. */
function statusDocument(calls: number, hub: SpikeHub, startedAt: string): StatusDocument {
  const replayed = Math.min(1200, 840 + calls * 12);
  const spikes = hub.book.query({ state: 'all', limit: 1000 });
  return {
    mode: 'embedded',
    started_at: startedAt,
    server_time: new Date().toISOString(),
    feed: {
      kind: 'sample',
      name: 'congo-jan-2025',
      articles_total: 1200,
      articles_replayed: replayed,
      articles_rejected: 3,
      position: '2025-01-30T17:00:00.000Z',
      done: replayed >= 1200,
    },
    stages: [
      {
        stage: 'markup',
        group: 'neon.markup',
        lag: 4,
        received: replayed,
        sent: replayed - 4,
        dead_lettered: 0,
        running: true,
      },
      {
        stage: 'chunk',
        group: 'neon.chunk',
        lag: 2,
        received: replayed - 4,
        sent: 3 * replayed,
        dead_lettered: 0,
        running: true,
      },
      {
        stage: 'dedupe',
        group: 'neon.dedupe',
        lag: 11,
        received: 3 * replayed,
        sent: 2 * replayed,
        dead_lettered: 0,
        running: true,
      },
      {
        stage: 'spikes',
        group: 'neon.spikes',
        lag: 0,
        received: 5 * replayed,
        sent: spikes.length,
        dead_lettered: 0,
        running: true,
      },
      { stage: 'extract', group: 'neon.extract', lag: 37, received: 900, sent: 1400, dead_lettered: 2, running: true },
      { stage: 'index', group: 'neon.index', lag: 1, received: 3400, sent: 3400, dead_lettered: 0, running: true },
    ],
    datastores: { location: 'in-process', chunks: 2 * replayed, interactions: 1400 },
    entities: FIXTURE_ENTITIES.length,
    spikes: { open: spikes.filter((e) => e.open).length, total: spikes.length },
    embedder: 'all-MiniLM-L6-v2 (384)',
    llm: null,
    extractor: 'offline',
  };
}

export interface DashboardFixtureOptions {
  /** API keys the service asks for; none: open. */
  apiKeys?: string[];
  /** Alerts known at start. Default: `initialAlerts()`. */
  alerts?: SpikeAlert[];
}

export interface FixtureRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The Authorization header as sent, if any. */
  authorization: string | null;
  /** The Last-Event-ID header of a reconnecting event stream, if any. */
  lastEventId: string | null;
}

export interface DashboardFixture {
  /** e.g. http://127.0.0.1:43121 (no trailing slash). */
  readonly url: string;
  readonly hub: SpikeHub;
  /** API calls received (dashboard files left out), oldest first. */
  readonly requests: FixtureRequest[];
  /** Cuts every open connection (event streams included), as a restart or a proxy timeout would. */
  dropConnections(): void;
  close(): Promise<void>;
}

export async function startDashboardFixture(options: DashboardFixtureOptions = {}): Promise<DashboardFixture> {
  const app: FastifyInstance = Fastify({ logger: false, forceCloseConnections: true });
  const hub = new SpikeHub();
  for (const alert of options.alerts ?? initialAlerts()) hub.apply(alert);
  const tokens = new BearerTokens(options.apiKeys ?? []);
  const requests: DashboardFixture['requests'] = [];
  app.addHook('onRequest', async (request) => {
    const [path = '', search = ''] = request.url.split('?', 2);
    if (path.startsWith('/v1/')) {
      requests.push({
        method: request.method,
        path,
        query: Object.fromEntries(new URLSearchParams(search)),
        authorization: request.headers.authorization ?? null,
        lastEventId: typeof request.headers['last-event-id'] === 'string' ? request.headers['last-event-id'] : null,
      });
    }
  });

  registerDashboardRoutes(app);
  registerSpikeRoutes(app, { feed: hubFeed(hub), tokens });
  let statusCalls = 0;
  const startedAt = new Date().toISOString();
  registerStatusRoutes(app, {
    tokens,
    status: async () => statusDocument(statusCalls++, hub, startedAt),
  });

  void app.register(async (scope) => {
    guardScope(scope, { tokens });

    scope.get('/v1/entities', async (request) => {
      const query = request.query as { q?: string; limit?: string };
      const needle = fold((query.q ?? '').trim());
      const limit = Math.min(200, Math.max(1, Number(query.limit ?? 20) || 20));
      const found = FIXTURE_ENTITIES.filter(
        (e) => needle === '' || fold(e.name).includes(needle) || e.aliases.some((a) => fold(a).includes(needle)),
      )
        .slice()
        .sort((a, b) => b.mentions - a.mentions)
        .slice(0, limit);
      return { entities: found.map(entityJson), known: FIXTURE_ENTITIES.length };
    });

    scope.get('/v1/entities/:id', async (request, reply) => {
      const { id } = request.params as { id: string };
      const found = FIXTURE_ENTITIES.find((e) => e.id === id);
      if (!found) return sendApiError(reply, 404, 'not_found', `no entity ${id}`);
      return entityJson(found);
    });

    scope.get('/v1/entities/:id/mentions', async (request, reply) => {
      const { id } = request.params as { id: string };
      const query = request.query as { from?: string; to?: string; granularity?: string };
      const to = query.to === undefined ? Date.now() : Date.parse(query.to);
      const from = query.from === undefined ? to - 90 * DAY : Date.parse(query.from);
      if (!Number.isFinite(from) || !Number.isFinite(to) || from > to) {
        return sendApiError(reply, 400, 'invalid_request', 'from, to: must be ISO 8601 times, from before to', {
          problems: ['from: invalid', 'to: invalid'],
        });
      }
      const counts = dailyCountsOf(id);
      return {
        entity_id: id,
        name: FIXTURE_ENTITIES.find((e) => e.id === id)?.name ?? null,
        granularity: query.granularity ?? 'day',
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        buckets: counts
          .filter((c) => c.start >= Math.floor(from / DAY) * DAY && c.start <= to)
          .map((c) => ({ start: new Date(c.start).toISOString(), count: c.count })),
      };
    });

    scope.get('/v1/entities/:id/timeline', async (request) => {
      const { id } = request.params as { id: string };
      const limit = Math.min(100, Number((request.query as { limit?: string }).limit ?? 50) || 50);
      const items = FIXTURE_ITEMS.filter((item) => item.kind === 'interaction' && item.entity_ids.includes(id))
        .slice()
        .reverse()
        .slice(0, limit)
        .map((item) => itemJson(item, 1, 1));
      return { entity_id: id, date: new Date().toISOString(), items, timings_ms: { list: 0.4 } };
    });

    scope.get('/v1/ask', async (request, reply) => {
      const parsed = parseSearchRequest(request.query ?? {}, Date.now());
      if (!parsed.ok) {
        return sendApiError(reply, 400, 'invalid_request', parsed.problems.join('; '), { problems: parsed.problems });
      }
      const q = parsed.request;
      if (/outage/i.test(q.q)) {
        return sendApiError(reply, 503, 'datastore_unavailable', 'the datastore did not answer; retry shortly');
      }
      const words = fold(q.q)
        .split(/\W+/)
        .filter((w) => w.length > 1);
      const kinds = q.store === 'both' ? ['interaction', 'chunk'] : q.store === 'chunks' ? ['chunk'] : ['interaction'];
      const ranked = FIXTURE_ITEMS.filter((item) => kinds.includes(item.kind) && Date.parse(item.published_at) <= q.tq)
        .map((item) => {
          const text = fold(item.text);
          const semantic = words.filter((w) => text.includes(w)).length / Math.max(1, words.length);
          const days = (q.tq - Date.parse(item.published_at)) / DAY;
          const score = q.strategy === 'generic' ? semantic : semantic + 1 / (1 + days);
          return { item, semantic, score: Math.round(score * 1000) / 1000 };
        })
        .sort((a, b) => b.score - a.score || b.item.published_at.localeCompare(a.item.published_at))
        .slice(0, q.k);
      const items = ranked.map((r) => itemJson(r.item, r.score, Math.round(r.semantic * 1000) / 1000));
      const answer = extractiveAnswer(
        q.q,
        q.tq,
        ranked.map((r) => r.item),
      );
      return {
        query: {
          q: q.q,
          date: new Date(q.tq).toISOString(),
          k: q.k,
          strategy: q.strategy,
          store: q.store,
          constraint: q.constraint,
          constraint_date: new Date(q.constraintAt).toISOString(),
          window_days: q.windowDays,
          include_future: q.includeFuture,
        },
        reformulated: `${q.q}, ${spellDate(q.tq)}`,
        entities: FIXTURE_ENTITIES.filter((e) => words.includes(fold(e.name))).map((e) => ({
          id: e.id,
          name: e.name,
          surface: e.name,
        })),
        items,
        time: timeReadingOf(q.q, q.tq),
        timings_ms: { reformulate: 0.3, embed: 4.2, retrieve: 11.8, rank: 0.6, answer: 0.2 },
        ...answer,
        model: null,
      };
    });
  });

  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url: address.replace(/\/$/, ''),
    hub,
    requests,
    dropConnections: () => app.server.closeAllConnections(),
    close: () => app.close(),
  };
}

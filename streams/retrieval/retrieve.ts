import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Embedder } from '../../processors/embed/embedder.js';
import { publishedDay } from '../../processors/index/index-documents.js';
import {
  bridgeEntities,
  fillsGap,
  isSufficient,
  subQueries,
  type Evidence,
  type SubQuery,
} from '../../processors/query/decompose-question.js';
import { fuseRankings, type FusionMode, type ListedDocument } from '../../processors/query/fuse-rankings.js';
import type { ChatModel } from '../../processors/extract/chat-model.js';
import { hopPlanRequest, readHopPlan } from '../../processors/query/plan-hops-with-llm.js';
import {
  DAY_MS,
  dayOf,
  capPerArticle,
  rankGeneric,
  rankLatest,
  rankTempralm,
  rankTemporal,
  timeFilter,
  type Ranked,
  type WordedCandidate,
} from '../../processors/query/rank-candidates.js';
import { reformulate, type EntityLinker, type LinkedEntity } from '../../processors/query/reformulate-query.js';
import type { SearchRequest, Store } from '../../processors/query/search-request.js';
import {
  DEFAULT_ANSWER_SENTENCES,
  DEFAULT_FUSION,
  DEFAULT_LEXICAL_WORDS,
  DEFAULT_PASSAGE_MATCH,
  DEFAULT_PER_ARTICLE,
  DEFAULT_RERANK_DEPTH,
  RERANK_DEPTH_PER_RESULT,
} from '../../processors/query/search-request.js';
import { rankItemsByAnswerSentence } from '../../processors/query/choose-answer-sentences.js';
import { mergePassageMatches, type PassageMatch } from '../../processors/query/passage-matches.js';
import {
  applyTimeIntent,
  coverageWindow,
  RECENT_PERIOD_DAYS,
  understandQuestionTime,
  type QuestionTimeIntent,
} from '../../processors/query/understand-question-time.js';
import { datastoreNames, type DatastoreKind } from '../elasticsearch/datastore-templates.js';
import {
  correctedIds,
  reportedUrls,
  revisionQuery,
  revisionsOf,
  supersededIds,
} from '../../processors/query/supersede-revisions.js';
import {
  EmbeddingModelMismatch,
  latestReportWithin,
  timeBounds,
  type Datastore,
  type DocumentFilter,
  type ScoredDocument,
  type StoredDocument,
} from '../datastore/datastore.js';

/** One retrieved document, as every interface returns it. */
export interface RetrievedItem {
  id: string;
  kind: 'interaction' | 'chunk';
  text: string;
  published_at: string;
  url: string | null;
  /** The strategy's final score: relevance, with time where the strategy weighs it. */
  score: number;
  /** Relevance to the question: dense, lexical and (by default) answer-sentence rankings fused. */
  relevance: number;
  /** Dense similarity, (1 + cos) / 2, when the item was among the nearest vectors. */
  semantic_score?: number;
  /** BM25, when the item was among the lexical matches. */
  lexical_score?: number;
  /** Its best answer sentence's score, when one of its sentences shares a word with the question. */
  sentence_score?: number;
  temporal_score?: number;
  day_distance?: number;
  /** Multi-hop only: the entity whose events brought this item in (absent for the question's own hop). */
  via_entity?: string;
  /** Multi-hop only: the hop that brought this item in (2 or later). */
  hop?: number;
  /** Multi-hop only: the sub-query of that hop that found it. */
  via_query?: string;
  entity_ids: string[];
  /** Chunks: the headline of their article. */
  title?: string;
  /** Chunks: the names of their marked entities. */
  entity_names?: string[];
  /**
   * Interactions: the passage the statement was extracted from (its first chunk's text), when that
   * chunk is stored. A statement is one sentence; the fact asked about is often in the next one.
   */
  passage?: string;
  subject?: { id: string; name: string };
  object?: { id: string; name: string } | null;
  chunk_ids: string[];
  article_ids: string[];
}

/** How the question's own time words were read, as every interface returns it (ISO 8601 times). */
export interface TimeReading {
  /** The time words found, as written. */
  expressions: string[];
  constraint: QuestionTimeIntent['constraint'];
  window?: { from?: string; to?: string };
  reference: string;
  recency: boolean;
  /** "before/after <named event>": the event and the date a lookup found for it (null: none found). */
  event?: { relation: 'before' | 'after'; phrase: string; at: string | null };
  /** The question named a recent period up to now ("this week"): weighed as recency, not filtered. */
  as_recency?: boolean;
  /** The question's window held fewer than k items: this many from outside it come last. */
  outside?: number;
  /** One line for people. */
  explanation: string;
  /** False when the request's own time parameters replaced the question's time scope. */
  applied: boolean;
}

export interface RetrievalResult {
  reformulated: string;
  /** The question's time words as read and applied; absent when the request turned the reading off. */
  time?: TimeReading;
  entities: LinkedEntity[];
  items: RetrievedItem[];
  timings_ms: Record<string, number>;
  /**
   * How the later hops were planned, when more than one was asked for: by the configured model
   * (its name), or `offline` (the question's entities and the graph; `decompose-question.ts`). A
   * hop whose plan the model did not give falls back to the offline one and says why.
   */
  decomposition?: { by: string; fallbacks?: string[] };
}

type Source = StoredDocument;

interface Hit extends WordedCandidate {
  source: Source;
  /** An interaction's source passage (see `RetrievedItem.passage`). */
  passage?: string;
  dense?: number;
  lexical?: number;
  sentence?: number;
}

/**
 * The documents ranked by their best answer sentence for the question (`rankItemsByAnswerSentence`),
 * read with their headline and entity names as the extractive answer reads them.
 */
function byAnswerSentence(
  question: string,
  documents: readonly StoredDocument[],
  passages: ReadonlyMap<string, string>,
): ListedDocument[] {
  const ranked = rankItemsByAnswerSentence(
    question,
    documents.map((d) => ({
      kind: d.kind,
      text: d.text,
      passage: passages.get(d.id),
      published_at: new Date(d.published_at).toISOString(),
      title: d.title,
      entities:
        d.kind === 'chunk'
          ? (d.entity_names ?? [])
          : [d.subject_name, d.object_name].filter((n): n is string => typeof n === 'string' && n !== ''),
    })),
  );
  return ranked.map(({ item, score }) => ({ id: documents[item]!.id, score }));
}

/** The query as each retriever reads it. */
interface QueryTexts {
  vector: number[];
  lexical: string;
  /** What the answer-sentence ranking reads: every word of the topic (`Reformulated.asked`). */
  asked: string;
  fusion: FusionMode;
  lexicalWeight?: number;
  /** `rrf`: rank the candidates by their best answer sentence too. */
  answerSentences: boolean;
  sentenceWeight?: number;
  /** Over statements alone: which lists match their passages too (`passage-matches.ts`). */
  passageMatch: PassageMatch;
}

export interface RetrieverOptions {
  datastore: Datastore;
  /** Needed by `search` only: timelines and mention counts read stored documents. */
  embedder?: Embedder;
  linker?: EntityLinker;
  /** Plans the later hops of multi-hop retrieval (`plan-hops-with-llm.ts`); offline without one. */
  planner?: ChatModel;
  /** Per Elasticsearch call. Default 5 s. */
  timeoutMs?: number;
}

/**
 * How many to fetch so that k remain once repeated texts are dropped: the same sentence is often
 * stored more than once (one clause extracted for each of two subjects, a story filed twice in one
 * day), and k copies of one fact answer nothing.
 */
function withRoomForCopies(k: number): number {
  return Math.min(500, k * 2);
}

/**
 * At most this many chunks of later article versions (or of corrections) are read per search to
 * decide what they supersede: a few articles among the candidates have been republished or
 * corrected, each with tens of chunks.
 */
const LATER_REVISIONS_LIMIT = 1_000;

/** Statements read per chunk matched over the interactions store (see `statementsOf`). */
const STATEMENTS_PER_PASSAGE = 8;

function perArticle(request: SearchRequest): number {
  return request.perArticle ?? DEFAULT_PER_ARTICLE;
}

/** A question's window that runs up to the query time and spans at most `RECENT_PERIOD_DAYS`. */
function isRecentPeriod(request: SearchRequest): boolean {
  const window = request.window!;
  return (
    window.from !== undefined &&
    (window.to === undefined || window.to >= request.tq) &&
    request.tq - window.from <= RECENT_PERIOD_DAYS * DAY_MS
  );
}

/**
 * The window the question names widened to when its news is reported (see `coverageWindow`); an
 * "after" constraint moves with the window's start.
 */
function withCoverage(request: SearchRequest, named: QuestionTimeIntent['constraint']): SearchRequest {
  const relation = request.constraint === 'before' || request.constraint === 'after' ? request.constraint : named;
  const window = coverageWindow(request.window!, relation, request.tq);
  const covered: SearchRequest = { ...request, window };
  if (request.constraint === 'after' && window.from !== undefined) covered.constraintAt = window.from;
  return covered;
}

/** The request's k results, at most its per-article cap from any one article. */
function capped(ranked: Ranked<Hit>[], request: SearchRequest): Ranked<Hit>[] {
  return capPerArticle(
    ranked,
    (r) => r.candidate.source.article_ids?.[0] ?? r.candidate.source.chunk_ids?.[0],
    perArticle(request),
    request.k,
  );
}

/**
 * The URL of the article that reported a document at `t`, when that is a later report than its first
 * (a near-duplicate merged into a chunk): the citation then shows the report it is dated by. The
 * first report keeps the document's own link (`urls[0]`, its own article).
 */
function reportUrl(source: Source, t: number): string | undefined {
  if (t === source.published_at) return undefined;
  return source.provenance
    ?.filter((p) => p.published_at === t)
    .sort((a, b) => a.article_id.localeCompare(b.article_id))[0]?.url;
}

/** Entities followed by each later hop: EventRAG follows a few edges of the graph, not all of them. */
const BRIDGE_ENTITIES = 2;
/** Entities a planning model may choose the hop's from. */
const PLANNED_CANDIDATES = 6;

/** Times one step of a retrieval into its timings. */
type Timer = <T>(step: string, run: () => Promise<T> | T) => Promise<T>;

/** Which later hop brought an item in, following which entity, with which sub-query. */
interface HopOrigin {
  entity: string;
  hop: number;
  query: string;
}

/** A ranked candidate as the decomposition reads it (`decompose-question.ts`). */
function evidenceOf(r: Ranked<Hit>): Evidence {
  const s = r.candidate.source;
  const ids = s.entity_ids ?? [];
  const names =
    s.kind === 'interaction'
      ? new Map([
          [s.subject_id ?? '', s.subject_name ?? ''],
          [s.object_id ?? '', s.object_name ?? ''],
        ])
      : new Map(ids.map((id, i) => [id, s.entity_names?.[i] ?? '']));
  return {
    id: r.candidate.id,
    text: r.candidate.words,
    relevance: r.relevance,
    entities: ids.map((id) => ({ id, name: names.get(id) || id })),
  };
}

/**
 * Runs a retrieval request against the datastores: link and reformulate (NEON §2.3), embed q′, fetch
 * candidates with one filtered nearest-neighbour search (two for temporal widening), rank them by
 * the strategy, and give interactions the URL of the article they came from.
 */
export class Retriever {
  private readonly timeoutMs: number;
  private modelChecked: Promise<void> | undefined;

  constructor(private readonly options: RetrieverOptions) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  get datastore(): Datastore {
    return this.options.datastore;
  }

  get linker(): EntityLinker | undefined {
    return this.options.linker;
  }

  /** Once: the datastores must have been built with the query embedder's model (when they exist). */
  private checkModel(embedder: Embedder): Promise<void> {
    this.modelChecked ??= (async () => {
      for (const kind of ['chunks', 'interactions'] as const) {
        const model = await this.options.datastore.embeddingModel(kind);
        if (model !== undefined && model !== embedder.model) {
          throw new EmbeddingModelMismatch(
            `${datastoreNames(kind, this.options.datastore.prefix).alias} was indexed with ${model}, but questions are ` +
              `embedded with ${embedder.model}: set NEON_EMBEDDER / NEON_EMBEDDINGS_MODEL to match`,
          );
        }
      }
    })();
    this.modelChecked.catch(() => {
      this.modelChecked = undefined;
    });
    return this.modelChecked;
  }

  private kinds(store: Store): DatastoreKind[] {
    return store === 'both' ? ['interactions', 'chunks'] : store === 'chunks' ? ['chunks'] : ['interactions'];
  }

  /**
   * Retrieves for a request: the question's time words are read first (META) and become its time
   * scope and recency unless the request set them (see `applyTimeIntent`), then `retrieve`.
   */
  async search(asked: SearchRequest): Promise<RetrievalResult> {
    if (asked.timeWords === false) return this.retrieve(asked);
    const started = performance.now();
    const intent = understandQuestionTime(asked.q, asked.tq);
    const explicit = asked.explicit ?? {};
    const scoped = { ...asked, topic: asked.topic ?? intent.topic };
    let request = applyTimeIntent(scoped, intent, explicit);
    let event: TimeReading['event'];
    if (intent.eventAnchor !== undefined && intent.window === undefined && !explicit.constraint && !explicit.window) {
      const at = await this.dateOfEvent(intent.eventAnchor.phrase, scoped);
      event = { ...intent.eventAnchor, at: at === undefined ? null : new Date(at).toISOString() };
      if (at !== undefined) request = applyTimeIntent(scoped, intent, explicit, at);
    }
    // "recently", "still" place a question in the present, which TempRALM's weight on recency
    // already prefers; the latest-first ranking is for asking the newest of several occurrences.
    const presentOnly =
      request.recency === true &&
      asked.recency === undefined &&
      !explicit.recency &&
      request.strategy === 'tempralm' &&
      !intent.asksLatest;
    if (presentOnly) request = { ...request, recency: false };
    let asRecency = false;
    if (request.window !== undefined && !explicit.constraint && !explicit.window && isRecentPeriod(request)) {
      // "this week", "the past few days": a recent period up to now. Reports of its news keep citing
      // the coverage before it, so it is not a filter; the strategy's own weight on recency (TempRALM's
      // α) prefers what is recent. On 500 RealTime QA questions, filtering such periods cost tempralm
      // over chunks 28 answers in the top 5 and won 3.
      asRecency = true;
      const unfiltered: SearchRequest = { ...request, constraint: asked.constraint, constraintAt: asked.constraintAt };
      delete unfiltered.window;
      request = unfiltered;
    }
    const scopedByQuestion = request.window !== undefined && !explicit.constraint && !explicit.window;
    if (scopedByQuestion) request = withCoverage(request, intent.constraint);
    const understood = Math.round((performance.now() - started) * 100) / 100;
    let result = await this.retrieve(request);
    let outside = 0;
    if (scopedByQuestion && result.items.length < request.k) {
      // Too little was published in the window the question names (background dates such as "in the
      // 1920s", or an archive that starts later): the best matches from outside it follow.
      const unscoped: SearchRequest = { ...request, constraint: asked.constraint, constraintAt: asked.constraintAt };
      delete unscoped.window;
      const filled = await this.retrieve(unscoped);
      const have = new Set(result.items.map((item) => item.id));
      const more = filled.items.filter((item) => !have.has(item.id)).slice(0, request.k - result.items.length);
      outside = more.length;
      const fillMs = Object.values(filled.timings_ms).reduce((a, b) => a + b, 0);
      result = {
        ...result,
        items: [...result.items, ...more],
        timings_ms: { ...result.timings_ms, fill: Math.round(fillMs * 100) / 100 },
      };
    }
    const iso = (t: number | undefined): string | undefined =>
      t === undefined ? undefined : new Date(t).toISOString();
    const window = request.window;
    return {
      ...result,
      time: {
        expressions: intent.expressions.map((e) => e.text),
        constraint: intent.constraint,
        ...(window
          ? {
              window: {
                ...(window.from === undefined ? {} : { from: iso(window.from)! }),
                ...(window.to === undefined ? {} : { to: iso(window.to)! }),
              },
            }
          : {}),
        reference: iso(intent.reference)!,
        recency: request.recency === true,
        ...(event ? { event } : {}),
        explanation: [
          intent.explanation,
          ...(presentOnly ? ["weighed by TempRALM's recency, not ranked latest first"] : []),
          ...(intent.recency && !intent.asksLatest && request.recency === true
            ? ['ranked latest first (the strategy has no weight on time)']
            : []),
          ...(asRecency ? ["a recent period: preferred by the strategy's recency, not filtered"] : []),
          ...(outside > 0 ? [`too few published in it: ${outside} from outside it follow`] : []),
        ].join('; '),
        ...(asRecency ? { as_recency: true } : {}),
        ...(outside > 0 ? { outside } : {}),
        applied: !explicit.constraint && !explicit.window,
      },
      timings_ms: { understand: understood, ...result.timings_ms },
    };
  }

  /**
   * When a named event happened, for "before/after <event>": the publication time of the document
   * that best matches the event's words and the question's other words, as of t_q (undefined when
   * nothing matches).
   */
  private async dateOfEvent(phrase: string, request: SearchRequest): Promise<number | undefined> {
    const probe: SearchRequest = {
      ...request,
      q: `${request.topic ?? request.q} ${phrase}`,
      topic: `${request.topic ?? request.q} ${phrase}`,
      strategy: 'generic',
      constraint: 'none',
      k: 1,
      hops: 1,
      timeWords: false,
    };
    delete probe.window;
    delete probe.recency;
    // When the event happened is when it was first reported, not the latest report of it.
    const { ranked } = await this.rank(probe);
    return ranked[0]?.candidate.source.published_at;
  }

  private async retrieve(request: SearchRequest): Promise<RetrievalResult> {
    return (await this.rank(request)).result;
  }

  /** Retrieval with the ranked candidates it returned items for. */
  private async rank(request: SearchRequest): Promise<{ result: RetrievalResult; ranked: Ranked<Hit>[] }> {
    const embedder = this.options.embedder;
    if (embedder === undefined) throw new Error('this retriever was built without an embedder: it cannot search');
    await this.checkModel(embedder);
    const timings: Record<string, number> = {};
    const time = async <T>(step: string, run: () => Promise<T> | T): Promise<T> => {
      const started = performance.now();
      try {
        return await run();
      } finally {
        timings[step] = Math.round((performance.now() - started) * 100) / 100;
      }
    };
    const { text, embedded, lexical, asked, entities } = await time('reformulate', () =>
      reformulate(request.q, request.tq, this.options.linker, {
        ...(request.dateInText ? { dateInText: true } : {}),
        lexicalWords: request.lexicalWords ?? DEFAULT_LEXICAL_WORDS,
        ...(request.topic === undefined ? {} : { topic: request.topic }),
      }),
    );
    const fusion = request.fusion ?? DEFAULT_FUSION;
    const [vector] = fusion === 'lexical' ? [] : await time('embed', () => embedder.embed([embedded], 'query'));
    const query: QueryTexts = {
      vector: vector === undefined ? [] : Array.from(vector),
      lexical,
      asked,
      fusion,
      ...(request.lexicalWeight === undefined ? {} : { lexicalWeight: request.lexicalWeight }),
      answerSentences: request.answerSentences ?? DEFAULT_ANSWER_SENTENCES,
      ...(request.sentenceWeight === undefined ? {} : { sentenceWeight: request.sentenceWeight }),
      passageMatch: request.passageMatch ?? DEFAULT_PASSAGE_MATCH,
    };
    const bounds = timeFilter(request);
    const range: DocumentFilter = {
      ...(bounds.from === undefined ? {} : { publishedFrom: bounds.from }),
      ...(bounds.to === undefined ? {} : { publishedTo: bounds.to }),
    };
    const kinds = this.kinds(request.store);

    let ranked = await this.rankByStrategy(request, kinds, query, range, time);
    let via = new Map<string, HopOrigin>();
    let decomposition: RetrievalResult['decomposition'];
    if ((request.hops ?? 1) > 1) {
      const first = ranked;
      ({ ranked, via, decomposition } = await this.laterHops(
        request,
        kinds,
        query,
        range,
        first,
        entities,
        embedder,
        time,
      ));
    }
    const urls = await time('cite', () => this.chunkUrls(ranked.map((r) => r.candidate.source)));
    const result: RetrievalResult = {
      reformulated: text,
      entities,
      items: ranked.map((r) => this.item(r, urls, via.get(r.candidate.id))),
      timings_ms: timings,
      ...(decomposition ? { decomposition } : {}),
    };
    return { result, ranked };
  }

  /**
   * The strategy's ranking of the documents that pass `range`, at most k, at most the per-article cap
   * from one article: the same for the question's own hop and for every later hop's sub-query.
   */
  private async rankByStrategy(
    request: SearchRequest,
    kinds: DatastoreKind[],
    query: QueryTexts,
    range: DocumentFilter,
    time: Timer,
  ): Promise<Ranked<Hit>[]> {
    if (request.strategy === 'temporal') {
      const exactDay = publishedDay(request.tq);
      const exact = await time('retrieve', () =>
        this.candidates(kinds, query, withRoomForCopies(request.k), { ...range, day: exactDay }),
      );
      let pool = exact;
      if (exact.length < request.k && request.windowDays > 0) {
        const day = dayOf(request.tq);
        const ring: DocumentFilter['days'] = {
          from: publishedDay((day - request.windowDays) * DAY_MS),
          to: publishedDay((day + request.windowDays) * DAY_MS),
          except: exactDay,
        };
        // Enough candidates that each ring can contribute its most relevant documents.
        const want = Math.min(500, (request.k - exact.length) * (2 * request.windowDays + 1));
        const widened = await time('widen', () => this.candidates(kinds, query, want, { ...range, days: ring }));
        pool = [...exact, ...widened];
      }
      return time('rerank', () => capped(rankTemporal(pool, request.tq, pool.length), request));
    }
    // TempRALM and the recency ranking over-retrieve and rerank; generic takes the top-k as they are.
    // A cap per article over-retrieves too: the places it frees go to the next articles.
    const reranks = request.strategy === 'tempralm' || request.recency === true || perArticle(request) > 0;
    const depth = request.depth ?? Math.max(DEFAULT_RERANK_DEPTH, request.k * RERANK_DEPTH_PER_RESULT);
    const want = reranks ? Math.min(500, Math.max(request.k, depth)) : withRoomForCopies(request.k);
    const pool = await time('retrieve', () => this.candidates(kinds, query, want, range));
    return time('rerank', () =>
      capped(
        request.recency
          ? rankLatest(pool, request.topic ?? request.q, request.tq, pool.length, request.includeFuture)
          : request.strategy === 'tempralm'
            ? rankTempralm(pool, request.tq, pool.length, request.alpha, request.includeFuture)
            : rankGeneric(pool, pool.length),
        request,
      ),
    );
  }

  /**
   * EventRAG-style iterative retrieval (seed 003, §2.3; `decompose-question.ts`): after the question's
   * own hop, while hops remain (`request.hops` is the most) and the items gathered do not yet answer
   * the question, the entities they connect it to (at most two a hop, not those it names) are each
   * asked their own sub-query — the bridge and the question's words still unfound — embedded and
   * matched lexically anew, among the bridge's own documents, under the same time bounds (as of t_q,
   * the constraint) and ranked by the same strategy. Stops early once sufficient, when no bridge is
   * left, or past the retrieval timeout. The first ⌈k/2⌉ places keep the first hop's best, the later
   * hops' new items come next (best first), and the first hop's rest fills what remains.
   */
  private async laterHops(
    request: SearchRequest,
    kinds: DatastoreKind[],
    query: QueryTexts,
    range: DocumentFilter,
    first: Ranked<Hit>[],
    asked: LinkedEntity[],
    embedder: Embedder,
    time: Timer,
  ): Promise<{
    ranked: Ranked<Hit>[];
    via: Map<string, HopOrigin>;
    decomposition: NonNullable<RetrievalResult['decomposition']>;
  }> {
    const started = performance.now();
    const planner = this.options.planner;
    const fallbacks: string[] = [];
    const question = request.topic ?? request.q;
    const followed = new Set(asked.map((e) => e.id));
    const seen = new Set(first.map((r) => r.candidate.id));
    const via = new Map<string, HopOrigin>();
    const found: Ranked<Hit>[] = [];
    const gapFilled = new Set<string>();
    const maxHops = Math.max(1, request.hops ?? 1);
    for (let hop = 2; hop <= maxHops; hop++) {
      const evidence = [...first, ...found].map(evidenceOf);
      if (performance.now() - started > this.timeoutMs) break;
      let queries: SubQuery[] | undefined;
      if (planner) {
        const candidates = bridgeEntities(evidence, followed, PLANNED_CANDIDATES);
        try {
          const reply = await time(`plan_hop${hop}`, () =>
            planner.complete(
              hopPlanRequest(request.q, publishedDay(request.tq), evidence, candidates, BRIDGE_ENTITIES),
            ),
          );
          const plan = readHopPlan(reply.text, candidates, BRIDGE_ENTITIES);
          if (plan.sufficient || plan.follow.length === 0) break;
          queries = plan.follow.map((f) => ({ bridge: f.bridge, text: f.text, asking: f.asking }));
        } catch (error) {
          fallbacks.push(`hop ${hop}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      if (queries === undefined) {
        if (isSufficient(request.q, asked, evidence).sufficient) break;
        const bridges = bridgeEntities(evidence, followed, BRIDGE_ENTITIES);
        if (bridges.length === 0) break;
        queries = subQueries(question, asked, bridges, evidence);
      }
      for (const sub of queries) followed.add(sub.bridge.id);
      const vectors =
        query.fusion === 'lexical'
          ? []
          : await time(`embed_hop${hop}`, () =>
              embedder.embed(
                queries.map((q) => q.text),
                'query',
              ),
            );
      // Room for k new items past those already gathered, which the strategy may well rank first again.
      const hopRequest = (text: string): SearchRequest => ({
        ...request,
        q: text,
        topic: text,
        hops: 1,
        k: Math.min(500, request.k + seen.size),
      });
      // The sub-queries run at once: their steps are timed together, as the hop.
      const untimed: Timer = async (_step, run) => run();
      const results = await time(`hop${hop}`, () =>
        Promise.all(
          queries.map((sub, i) =>
            this.rankByStrategy(
              hopRequest(sub.text),
              kinds,
              {
                ...query,
                vector: vectors[i] === undefined ? [] : Array.from(vectors[i]),
                lexical: sub.text,
                asked: sub.text,
              },
              { ...range, entityId: sub.bridge.id },
              untimed,
            ),
          ),
        ),
      );
      results.forEach((ranked, i) => {
        for (const r of ranked) {
          if (seen.has(r.candidate.id)) continue;
          seen.add(r.candidate.id);
          via.set(r.candidate.id, { entity: queries[i]!.bridge.id, hop, query: queries[i]!.text });
          if (fillsGap(r.candidate.words, queries[i]!)) gapFilled.add(r.candidate.id);
          found.push(r);
        }
      });
    }
    // New evidence that adds what its sub-query asked comes before the bridges' other reports (which
    // only repeat what was found: TempRALM would put a bridge's latest such report first), each by score.
    const fills = (r: Ranked<Hit>): number => (gapFilled.has(r.candidate.id) ? 1 : 0);
    found.sort((a, b) => fills(b) - fills(a) || b.score - a.score || a.candidate.id.localeCompare(b.candidate.id));
    const kept = Math.ceil(request.k / 2);
    return {
      ranked: [...first.slice(0, kept), ...found, ...first.slice(kept)].slice(0, request.k),
      via,
      decomposition: {
        by: planner ? planner.model : 'offline',
        ...(fallbacks.length > 0 ? { fallbacks } : {}),
      },
    };
  }

  /**
   * An entity's interactions (as subject or object) published as of `tq`, newest first — the
   * entity timeline. `before` pages further back.
   */
  async timeline(
    entityId: string,
    tq: number,
    limit: number,
    before?: number,
  ): Promise<{ items: RetrievedItem[]; timings_ms: Record<string, number> }> {
    const started = performance.now();
    const upTo = before === undefined ? tq : Math.min(tq, before - 1);
    const found = await this.options.datastore.list({
      kind: 'interactions',
      filter: { entityId, publishedTo: upTo },
      order: 'newest',
      limit,
      timeoutMs: this.timeoutMs,
    });
    const hits: Hit[] = found.map((source) => ({
      id: source.id,
      score: 1,
      published_at: latestReportWithin(source, { publishedTo: upTo }) ?? source.published_at,
      words: source.text,
      source,
    }));
    const urls = await this.chunkUrls(hits.map((h) => h.source));
    return {
      items: hits.map((candidate) => this.item({ candidate, score: 1, relevance: 1 }, urls)),
      timings_ms: { retrieve: Math.round((performance.now() - started) * 100) / 100 },
    };
  }

  /**
   * How many unique chunks mentioned an entity, per day or hour, between two times: the counts the
   * spike detector works from, read back from the chunks datastore (as of `to`).
   */
  async mentions(
    entityId: string,
    from: number,
    to: number,
    granularity: 'day' | 'hour',
  ): Promise<{ start: number; count: number }[]> {
    return this.options.datastore.histogram({
      kind: 'chunks',
      filter: { entityId, publishedFrom: from, publishedTo: to },
      granularity,
      timeoutMs: this.timeoutMs,
    });
  }

  /**
   * The most relevant documents that pass the filter, best first: the nearest vectors and the best
   * BM25 matches, fetched at once and fused, without repeats of a text already found on the same day.
   * Over statements alone, kNN and BM25 also match their passages (`passage-matches.ts`, by
   * `passageMatch`): the chunks are searched with the rest, then their statements are read under
   * the same filter, one read more.
   * Each hit's time is its latest report time the filter lets through (≤ t_q, inside the window or
   * ring searched): a story first reported before the window and reported again inside it is ranked
   * (TempRALM, recency, temporal rings) and cited as of that later report, not its first.
   */
  private async candidates(
    kinds: DatastoreKind[],
    query: QueryTexts,
    k: number,
    filter: DocumentFilter,
  ): Promise<Hit[]> {
    const ask = { kinds, k, filter, timeoutMs: this.timeoutMs };
    const statementsOnly = kinds.length === 1 && kinds[0] === 'interactions';
    const lexicalPassages = statementsOnly && query.passageMatch !== 'none' && query.fusion !== 'dense';
    const densePassages = statementsOnly && query.passageMatch === 'hybrid' && query.fusion !== 'lexical';
    const chunksToo = { ...ask, kinds: ['chunks' as const] };
    const [ownDense, ownLexical, passageDense, passageLexical] = await Promise.all([
      query.fusion === 'lexical' ? [] : this.options.datastore.nearest({ ...ask, vector: query.vector }),
      query.fusion === 'dense' ? [] : this.options.datastore.lexical({ ...ask, text: query.lexical }),
      densePassages ? this.options.datastore.nearest({ ...chunksToo, vector: query.vector }) : [],
      lexicalPassages ? this.options.datastore.lexical({ ...chunksToo, text: query.lexical }) : [],
    ]);
    const passageHits = new Map([...passageDense, ...passageLexical].map((d) => [d.document.id, d.document]));
    const underPassages = await this.statementsOf([...passageHits.keys()], filter);
    const statements = underPassages.map((d) => ({ id: d.id, chunkIds: d.chunk_ids ?? [] }));
    const listed = (list: readonly ScoredDocument[]): ListedDocument[] =>
      list.map((d) => ({ id: d.document.id, score: d.score }));
    // Cosines of one model are on one scale; BM25 scores of two indices are not. The merged lists are
    // not cut back to k: a matched passage brings all its statements (two or three, up to
    // STATEMENTS_PER_PASSAGE), and a statement's own cosine is higher than its five-sentence
    // passage's, so a cut at k kept the statements' own matches and the first few passages and
    // dropped passages the chunks' own search had found. Every statement read is fused and ranked.
    const dense = densePassages
      ? mergePassageMatches(listed(ownDense), listed(passageDense), statements, 'raw')
      : listed(ownDense);
    const lexical = lexicalPassages
      ? mergePassageMatches(listed(ownLexical), listed(passageLexical), statements, 'relative')
      : listed(ownLexical);
    const documents = new Map(
      [...ownDense, ...ownLexical, ...underPassages.map((document) => ({ document }))].map((d) => [
        d.document.id,
        d.document,
      ]),
    );
    // The answer-sentence ranking is the retriever's own CPU work: it runs while the superseded
    // reads are in Elasticsearch (from the next turn of the event loop, once their requests are
    // out), not after them.
    const [{ passages, bySentence }, superseded] = await Promise.all([
      this.passagesOf([...documents.values()], new Map([...passageHits].map(([id, chunk]) => [id, chunk.text]))).then(
        async (passages) => {
          await nextTurn();
          const ranksSentences = query.fusion === 'rrf' && query.answerSentences;
          return {
            passages,
            bySentence: ranksSentences ? byAnswerSentence(query.asked, [...documents.values()], passages) : [],
          };
        },
      ),
      this.supersededAsOf([...documents.values()], filter),
    ]);
    const fused = fuseRankings(
      dense,
      lexical,
      {
        mode: query.fusion,
        ...(query.lexicalWeight === undefined ? {} : { lexicalWeight: query.lexicalWeight }),
        ...(query.sentenceWeight === undefined ? {} : { sentenceWeight: query.sentenceWeight }),
      },
      bySentence,
    );
    const hits = [...fused.entries()]
      .filter(([id]) => !superseded.has(id))
      .map(([id, f]): Hit => {
        const source = documents.get(id)!;
        const passage = passages.get(id);
        return {
          id,
          score: f.relevance,
          published_at: latestReportWithin(source, filter) ?? source.published_at,
          words: source.title ? `${source.title}.\n${source.text}` : source.text,
          source,
          ...(passage === undefined ? {} : { passage }),
          ...(f.dense === undefined ? {} : { dense: f.dense }),
          ...(f.lexical === undefined ? {} : { lexical: f.lexical }),
          ...(f.sentence === undefined ? {} : { sentence: f.sentence }),
        };
      })
      .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
    const seen = new Set<string>();
    return hits
      .filter((hit) => {
        const key = `${publishedDay(hit.published_at)} ${hit.source.text
          .trim()
          .replace(/[.\s]+$/, '')
          .toLowerCase()}`;
        // Statements of one passage come with that passage: the best of them stands for the others,
        // whose facts it carries, and leaves their places to other passages.
        const passageKey = hit.passage === undefined ? undefined : `passage ${hit.source.chunk_ids![0]!}`;
        if (seen.has(key) || (passageKey !== undefined && seen.has(passageKey))) return false;
        seen.add(key);
        if (passageKey !== undefined) seen.add(passageKey);
        return true;
      })
      .slice(0, k);
  }

  /**
   * The ids among `documents` replaced by the filter's upper time bound (t_q): chunks of an article
   * that has a later version by then, statements extracted from them only, and reports of articles a
   * correction or retraction first reported by then names (see supersede-revisions.ts). Two filtered
   * reads of the chunks datastore, at once; usually both find nothing.
   */
  async supersededAsOf(documents: StoredDocument[], filter: DocumentFilter): Promise<Set<string>> {
    const { to } = timeBounds(filter);
    const asOf: DocumentFilter = Number.isFinite(to) ? { publishedTo: to } : {};
    const read = (where: DocumentFilter): Promise<StoredDocument[]> =>
      this.options.datastore.list({
        kind: 'chunks',
        filter: { ...where, ...asOf },
        order: 'none',
        limit: LATER_REVISIONS_LIMIT,
        timeoutMs: this.timeoutMs,
      });
    const wanted = revisionQuery(documents);
    const urls = [...new Set(documents.flatMap(reportedUrls))];
    const [later, corrections] = await Promise.all([
      wanted === undefined ? [] : read(wanted),
      urls.length === 0 ? [] : read({ correctsUrls: urls }),
    ]);
    return new Set([...supersededIds(documents, later.flatMap(revisionsOf)), ...correctedIds(documents, corrections)]);
  }

  /**
   * Interaction id → the text of the chunk it was extracted from (its first chunk: the one of its own
   * article), for the interactions among `documents`; one read of the chunks datastore by id, of the
   * chunks whose text is not `known` (chunk id → text) already. The chunk is published no later
   * than the statement, so it is within any as-of bound the statement is.
   */
  private async passagesOf(
    documents: readonly StoredDocument[],
    known: ReadonlyMap<string, string> = new Map(),
  ): Promise<Map<string, string>> {
    const sourceOf = new Map(
      documents
        .filter((d) => d.kind === 'interaction' && (d.chunk_ids ?? []).length > 0)
        .map((d) => [d.id, d.chunk_ids![0]!]),
    );
    const passages = new Map<string, string>();
    if (sourceOf.size === 0) return passages;
    const unread = [...new Set(sourceOf.values())].filter((id) => !known.has(id));
    const found = unread.length === 0 ? [] : await this.chunksByIds(unread);
    const texts = new Map([...known, ...found.map((chunk): [string, string] => [chunk.id, chunk.text])]);
    for (const [id, chunkId] of sourceOf) {
      const text = texts.get(chunkId);
      if (text !== undefined) passages.set(id, text);
    }
    return passages;
  }

  /**
   * The statements extracted from any of the chunks `chunkIds` that pass the filter (one read of the
   * interactions datastore; none when no chunk is given). At most `STATEMENTS_PER_PASSAGE` a chunk
   * are read: extraction writes a few whole statements per chunk.
   */
  private statementsOf(chunkIds: readonly string[], filter: DocumentFilter): Promise<StoredDocument[]> {
    if (chunkIds.length === 0) return Promise.resolve([]);
    return this.options.datastore.list({
      kind: 'interactions',
      filter: { ...filter, chunkIds },
      order: 'none',
      limit: chunkIds.length * STATEMENTS_PER_PASSAGE,
      timeoutMs: this.timeoutMs,
    });
  }

  /** The stored chunks among `ids` (one read by id; absent ones are left out). */
  private chunksByIds(ids: string[]): Promise<StoredDocument[]> {
    return this.options.datastore.list({
      kind: 'chunks',
      filter: { ids },
      order: 'none',
      limit: ids.length,
      timeoutMs: this.timeoutMs,
    });
  }

  /**
   * Chunk id → its article's URL, for the interactions among the results that do not carry their
   * article's URL themselves (tuple → chunk → article; those indexed before interactions carried it).
   */
  private async chunkUrls(sources: Source[]): Promise<Map<string, string>> {
    const chunkIds = [
      ...new Set(
        sources
          .filter((s) => s.kind === 'interaction' && (s.urls ?? []).length === 0)
          .flatMap((s) => (s.chunk_ids ?? []).slice(0, 3)),
      ),
    ];
    const urls = new Map<string, string>();
    if (chunkIds.length === 0) return urls;
    for (const chunk of await this.chunksByIds(chunkIds)) {
      const url = chunk.urls?.[0];
      if (url) urls.set(chunk.id, url);
    }
    return urls;
  }

  private item(ranked: Ranked<Hit>, chunkUrls: Map<string, string>, origin?: HopOrigin): RetrievedItem {
    const s = ranked.candidate.source;
    const url =
      reportUrl(s, ranked.candidate.published_at) ??
      s.urls?.[0] ??
      (s.kind === 'chunk'
        ? null
        : ((s.chunk_ids ?? []).map((id) => chunkUrls.get(id)).find((u) => u !== undefined) ?? null));
    return {
      id: s.id,
      kind: s.kind,
      text: s.text,
      published_at: new Date(ranked.candidate.published_at).toISOString(),
      url,
      score: ranked.score,
      relevance: ranked.relevance,
      ...(ranked.candidate.dense === undefined ? {} : { semantic_score: ranked.candidate.dense }),
      ...(ranked.candidate.lexical === undefined ? {} : { lexical_score: ranked.candidate.lexical }),
      ...(ranked.candidate.sentence === undefined ? {} : { sentence_score: ranked.candidate.sentence }),
      ...(ranked.temporal === undefined ? {} : { temporal_score: ranked.temporal }),
      ...(ranked.dayDistance === undefined ? {} : { day_distance: ranked.dayDistance }),
      ...(origin === undefined ? {} : { via_entity: origin.entity, hop: origin.hop, via_query: origin.query }),
      entity_ids: s.entity_ids ?? [],
      ...(s.title ? { title: s.title } : {}),
      ...(s.entity_names ? { entity_names: s.entity_names } : {}),
      ...(ranked.candidate.passage === undefined ? {} : { passage: ranked.candidate.passage }),
      ...(s.kind === 'interaction'
        ? {
            subject: { id: s.subject_id ?? '', name: s.subject_name ?? '' },
            object: s.object_id ? { id: s.object_id, name: s.object_name ?? '' } : null,
          }
        : {}),
      chunk_ids: s.kind === 'chunk' ? [s.id] : (s.chunk_ids ?? []),
      article_ids: s.article_ids ?? [],
    };
  }
}

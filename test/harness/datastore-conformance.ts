import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Embedder } from '../../processors/embed/embedder.js';
import { chunkDocument, interactionDocument } from '../../processors/index/index-documents.js';
import { eventIdOf } from '../../processors/events/event-graph.js';
import { interactionId } from '../../processors/extract/interaction-extractor.js';
import { EventGraphReader } from '../../streams/retrieval/read-events.js';
import { DAY_MS } from '../../processors/query/rank-candidates.js';
import {
  parseSearchRequest,
  type SearchRequest,
  type SearchRequestInput,
} from '../../processors/query/search-request.js';
import { datastoreNames, monthlyIndex } from '../../streams/elasticsearch/datastore-templates.js';
import type { Chunk, Interaction } from '../../schemas/records.generated.js';
import type { Datastore, DocumentFilter } from '../../streams/datastore/datastore.js';
import { DatastoreMismatchError } from '../../streams/elasticsearch/datastores.js';
import { MonthCompactor } from '../../streams/datastore/month-compactor.js';
import { StageError } from '../../streams/runtime/stage-error.js';
import { Retriever, type RetrievedItem } from '../../streams/retrieval/retrieve.js';
import type { PassageMatch } from '../../processors/query/passage-matches.js';
import { EntityLinker } from '../../processors/query/reformulate-query.js';
import { startApiServer, type ApiServer } from '../../service/api-server.js';
import { ChatModelError, type ChatModel } from '../../processors/extract/chat-model.js';
import { llmConfig } from '../../processors/extract/llm-config.js';
import { OpenAiChatModel } from '../../streams/llm/openai-chat-model.js';
import { fakeReplies, startFakeOpenAiServer } from '../../devkit/fake-openai-server.js';

/**
 * The datastore conformance suite: each strategy's semantics, exactly, on a small dated corpus
 * written for the test, the API over it, and the datastore's own promises (strict documents, one
 * model per datastore, retention by months). Similarity is controlled: every document has a chosen
 * cosine to the query vector, so the expected orders follow from the dates and those numbers alone.
 * It runs against Elasticsearch (integration tier) and the embedded datastore (unit tier): a
 * strategy must mean the same on both.
 */
const TQ = Date.UTC(2023, 7, 31, 12);
const HOUR = 3_600_000;
const MODEL = 'fixed-test-vectors';

/** A unit vector at the given cosine to the query vector [1, 0, 0, 0]. */
function at(cos: number): Float32Array {
  return Float32Array.from([cos, Math.sqrt(1 - cos * cos), 0, 0]);
}

/** Queries embed to [1, 0, 0, 0]; documents are indexed with their own vectors below. */
const queryEmbedder: Embedder = {
  model: MODEL,
  dimensions: 4,
  embed: (texts) => Promise.resolve(texts.map(() => Float32Array.from([1, 0, 0, 0]))),
  close: () => Promise.resolve(),
};

const CORPUS: [id: string, t: number, cos: number][] = [
  ['a', TQ - 3 * HOUR, 0.3],
  ['b', TQ - 1 * HOUR, 0.7],
  ['c', TQ - 1 * DAY_MS, 0.8],
  ['d', TQ - 2 * DAY_MS, 0.9],
  ['e', TQ + 1 * DAY_MS, 0.95], // the day after the question: never seen as of t_q
  ['f', TQ - 7 * DAY_MS, 0.6],
  ['g', TQ - 21 * DAY_MS, 0.85],
];

/**
 * For multi-hop: a small interaction graph in March 2024 (a month of its own, long after the corpus
 * above), asked about as of HOP_TQ with the constraint "after HOP_ANCHOR", which leaves the corpus
 * out. Acme's events name Bolt and Crane; Bolt's and Crane's own events are far from the query (low
 * cosine), so only a hop finds them.
 */
const HOP_TQ = Date.UTC(2024, 2, 20, 12);
const HOP_ANCHOR = Date.UTC(2024, 2, 5);
const HOP_CORPUS: [id: string, t: number, cos: number, subject: string, object: string][] = [
  ['h1', Date.UTC(2024, 2, 10), 0.8, 'Acme', 'Bolt'],
  ['h2', Date.UTC(2024, 2, 11), 0.75, 'Acme', 'Bolt'],
  ['h3', Date.UTC(2024, 2, 12), 0.7, 'Acme', 'Crane'],
  ['h4', Date.UTC(2024, 2, 13), 0.2, 'Bolt', 'Delta'],
  ['h5', Date.UTC(2024, 2, 14), 0.25, 'Crane', 'Echo'],
  ['h6', Date.UTC(2024, 2, 15), 0.5, 'Zeta', 'Yank'],
  ['h7', Date.UTC(2024, 2, 25), 0.1, 'Bolt', 'Delta'], // after HOP_TQ: never, not even by a hop
  ['h8', Date.UTC(2024, 2, 3), 0.3, 'Bolt', 'Delta'], // before the anchor: outside the constraint
];

/**
 * For lexical and fused ranking: chunks of June 2024 (a month of their own, after the corpora above
 * and every query time but HYBRID_TQ) whose words and cosines
 * pull apart. Asked "Australian Open women's final": BM25 ranks the final's report first, the
 * first-round one (which shares three of the four words) second, and nothing else matches; dense
 * similarity ranks them the other way round.
 */
const HYBRID_TQ = Date.UTC(2024, 5, 30, 12);
const HYBRID_CORPUS: [id: string, cos: number, title: string, text: string, entities: string[]][] = [
  ['final', 0.5, 'Sabalenka takes the title', 'Sabalenka wins the Australian Open women’s final in Melbourne.', []],
  ['rain', 0.9, 'Weather', 'Rain delays first-round matches in Melbourne.', []],
  ['round', 0.7, 'Tennis', 'Australian Open: two seeds fall in the women’s first round.', []],
  ['budget', 0.6, 'Economy', 'The treasurer presents the budget to parliament.', []],
  ['headline', 0.1, 'Grand final tickets sold out', 'Tickets for the match went in minutes.', []],
  ['named', 0.2, 'Sport', 'A new coach was appointed on Monday.', ['Australian Open']],
];

/**
 * A deduplicated chunk (NEON §2.1): first reported on 29 January 2025 (its own article), then by two
 * near-duplicates merged into it, on 30 January and on 3 February (a month later, within the dedupe
 * window). It is stored in January, by its first report. A chunk indexed before documents carried
 * their report times (no `reported_at`) sits beside it. Both are after every other corpus and every
 * other query time, so the other tests never see them.
 */
const SURVIVOR_FIRST = Date.UTC(2025, 0, 29, 10);
const SURVIVOR_SECOND = Date.UTC(2025, 0, 30, 9);
const SURVIVOR_LATER = Date.UTC(2025, 1, 3, 8);
const LEGACY_T = Date.UTC(2025, 0, 28, 15);

function survivorChunk(): Chunk {
  const own = chunk('survivor', SURVIVOR_FIRST);
  return {
    ...own,
    text: 'Harbour storm closes the ferry port.',
    provenance: [
      ...own.provenance,
      {
        article_id: 'art-syndicated',
        url: 'https://wire.example/second',
        source: 'wire.example',
        published_at: SURVIVOR_SECOND,
      },
      {
        article_id: 'art-followup',
        url: 'https://later.example/third',
        source: 'later.example',
        published_at: SURVIVOR_LATER,
      },
    ],
  };
}

/**
 * A republished article (same id, a higher version, a later time): version 1 on 10 May 2025 has two
 * chunks and a statement extracted from its first; version 2 on 12 May changes the figure and has one
 * chunk. After every other corpus and query time, so the other tests never see them.
 */
const REVISION_V1 = Date.UTC(2025, 4, 10, 9);
const REVISION_V2 = Date.UTC(2025, 4, 12, 9);
const REVISION_CHUNKS: [version: number, index: number, t: number, text: string][] = [
  [1, 0, REVISION_V1, 'The council approved 12 new buses for the harbour line.'],
  [1, 1, REVISION_V1, 'Service on the harbour line starts in June.'],
  [2, 0, REVISION_V2, 'The council approved 14 new buses for the harbour line.'],
];

function revisionChunk(version: number, index: number, t: number, text: string): Chunk {
  return {
    ...chunk('revision', t),
    id: `art-revision:v${version}:${index}`,
    article_id: 'art-revision',
    index,
    text,
    marked_text: text,
    title: 'Council buses',
  };
}

function revisionStatement(): Interaction {
  return {
    ...interaction('revision-statement', REVISION_V1),
    text: 'The council approves 12 new buses',
    chunk_ids: ['art-revision:v1:0'],
    article_ids: ['art-revision'],
  };
}

/**
 * Corrections by a later article (June 2025, after every other corpus and query time): on 2 June a
 * report of fares and a report of a claim; on 4 June the same publisher corrects the first and
 * retracts the second, each naming it by its URL (written differently: `www.`, a trailing slash).
 */
const CORRECTED_T = Date.UTC(2025, 5, 2, 9);
const CORRECTION_T = Date.UTC(2025, 5, 4, 9);
const CORRECTION_CHUNKS: [id: string, t: number, url: string, title: string, text: string][] = [
  [
    'fares',
    CORRECTED_T,
    'https://news.example/2025/06/02/ferry-fares',
    'Ferry fares rise',
    'Ferry fares on the harbour route rise by 20 percent.',
  ],
  [
    'claim',
    CORRECTED_T,
    'https://news.example/2025/06/02/mayor-claim',
    'Mayor and the ferry operator',
    'The mayor received gifts from the ferry operator, the harbour route report says.',
  ],
  [
    'fares-fix',
    CORRECTION_T,
    'https://news.example/2025/06/04/fares-correction',
    'Correction: ferry fares',
    'An earlier version of https://www.news.example/2025/06/02/ferry-fares/ said ferry fares on the harbour route rise by 20 percent; they rise by 12 percent.',
  ],
  [
    'claim-retraction',
    CORRECTION_T,
    'https://news.example/2025/06/04/mayor-retraction',
    'We retract our report on the mayor',
    'Our report https://news.example/2025/06/02/mayor-claim on the ferry operator and the harbour route has been withdrawn.',
  ],
];

function correctionChunk(id: string, t: number, url: string, title: string, text: string): Chunk {
  return {
    ...chunk(id, t),
    id: `art-${id}:v1:0`,
    title,
    text,
    marked_text: text,
    provenance: [{ article_id: `art-${id}`, url, source: 'news.example', published_at: t }],
  };
}

function hybridChunk(id: string, title: string, text: string, names: string[]): Chunk {
  const t = HYBRID_TQ - DAY_MS;
  return {
    ...chunk(id, t),
    id: `hybrid-${id}`,
    article_id: `art-hybrid-${id}`,
    text,
    title,
    marked_text: text,
    entity_ids: names.map((n) => `e-${n.toLowerCase().replace(/\s+/g, '-')}`),
    entities: names.map((n) => ({ id: `e-${n.toLowerCase().replace(/\s+/g, '-')}`, name: n, type: 'EVENT' })),
  };
}

function hopInteraction(id: string, t: number, subject: string, object: string): Interaction {
  const entity = (name: string): string => `e-${name.toLowerCase()}`;
  return {
    ...interaction(id, t),
    subject_id: entity(subject),
    subject_name: subject,
    object_id: entity(object),
    object_name: object,
    text: `${subject} and ${object}, event ${id}`,
  };
}

function interaction(id: string, t: number): Interaction {
  return {
    id,
    t,
    subject_id: 'e-doja-cat',
    subject_name: 'Doja Cat',
    object_id: 'e-p2j',
    object_name: 'P2J',
    text: `Doja Cat interaction ${id}`,
    title: '',
    variant: 'M2',
    chunk_ids: [`chunk-${id}`],
    article_ids: [`art-${id}`],
    urls: [],
    model: 'test',
    extracted_at: TQ,
  };
}

function chunk(id: string, t: number): Chunk {
  return {
    id: `chunk-${id}`,
    article_id: `art-${id}`,
    index: 0,
    text: `The chunk ${id} about Doja Cat.`,
    title: '',
    marked_text: `The chunk ${id} about <e>Doja Cat</e>.`,
    entity_ids: ['e-doja-cat'],
    entities: [{ id: 'e-doja-cat', name: 'Doja Cat', type: 'PERSON' }],
    t,
    provenance: [
      { article_id: `art-${id}`, url: `https://news.example/${id}`, source: 'news.example', published_at: t },
    ],
  };
}

/**
 * For the event graph: statements of September 2025 (a month of its own, after every corpus above).
 * Two sources report Nimbus's purchase of Orbit the same morning, the second naming Orbit first; the
 * same day Nimbus's chief visits Lyon; regulators approve the purchase five days later. Orbit's own
 * story has a lost contract before and a lawsuit after. One statement comes after EVENT_TQ.
 */
const EVENT_TQ = Date.UTC(2025, 8, 20, 12);
const EVENT_CORPUS: [key: string, t: number, subject: string, object: string, text: string][] = [
  ['lost', Date.UTC(2025, 8, 5, 9), 'Orbit', 'Quill', 'Orbit lost its satellite launch contract with Quill.'],
  ['buy', Date.UTC(2025, 8, 10, 8), 'Nimbus', 'Orbit', 'Nimbus agreed to buy Orbit for two billion dollars.'],
  ['buy-again', Date.UTC(2025, 8, 10, 11), 'Orbit', 'Nimbus', 'Orbit accepted a two billion dollar offer to buy it.'],
  ['visit', Date.UTC(2025, 8, 10, 12), 'Nimbus', 'Lyon', "Nimbus's chief executive toured a factory near Lyon."],
  ['sued', Date.UTC(2025, 8, 12, 9), 'Quill', 'Orbit', 'Quill sued Orbit over the cancelled launch.'],
  ['approved', Date.UTC(2025, 8, 15, 9), 'Nimbus', 'Orbit', "Regulators approved Nimbus's purchase of Orbit."],
  ['later', Date.UTC(2025, 8, 25, 9), 'Nimbus', 'Orbit', 'Nimbus completed the purchase of Orbit.'],
];

function eventStatement([key, t, subject, object, text]: (typeof EVENT_CORPUS)[number]): Interaction {
  const entity = (name: string): string => `e-${name.toLowerCase()}`;
  return {
    ...interaction(key, t),
    id: interactionId('M2', entity(subject), entity(object), text, t),
    subject_id: entity(subject),
    subject_name: subject,
    object_id: entity(object),
    object_name: object,
    text,
    urls: [`https://${key}.news.example/story`],
  };
}

const EVENT_STATEMENTS = EVENT_CORPUS.map(eventStatement);

/**
 * One event reported twice on the day of the revised article's first version: once from that
 * version (superseded once the second version is out) and once by another article.
 */
const REVISED_EVENT: [key: string, t: number, chunk: string, article: string, text: string][] = [
  [
    'revised',
    REVISION_V1,
    'art-revision:v1:0',
    'art-revision',
    'The Harbour Council approves 12 new buses for Tram Depot.',
  ],
  [
    'other',
    REVISION_V1 + HOUR,
    'art-other-buses:v1:0',
    'art-other-buses',
    'The Harbour Council approved 12 new buses, Tram Depot said.',
  ],
];
const REVISED_EVENT_STATEMENTS = REVISED_EVENT.map(([key, t, chunkId, article, text]): Interaction => ({
  ...interaction(key, t),
  id: interactionId('M2', 'e-harbour-council', 'e-tram-depot', text, t),
  subject_id: 'e-harbour-council',
  subject_name: 'Harbour Council',
  object_id: 'e-tram-depot',
  object_name: 'Tram Depot',
  text,
  chunk_ids: [chunkId],
  article_ids: [article],
  urls: [`https://news.example/${key}`],
}));
const statementId = (key: string): string => EVENT_STATEMENTS[EVENT_CORPUS.findIndex(([k]) => k === key)]!.id;

export interface DatastoreUnderTest {
  datastore: Datastore;
  /** Removes what the test created. */
  cleanup(): Promise<void>;
}

export function describeDatastoreConformance(label: string, open: () => Promise<DatastoreUnderTest>): void {
  let retriever: Retriever;
  let datastore: Datastore;
  let under: DatastoreUnderTest;

  beforeAll(async () => {
    under = await open();
    datastore = under.datastore;
    await datastore.prepare({ model: MODEL, dimensions: 4 });
    const writer = datastore.writer({ stage: 'conformance', lingerMs: 1, refresh: 'wait_for' });
    const interactions = datastoreNames('interactions', datastore.prefix);
    const chunks = datastoreNames('chunks', datastore.prefix);
    await Promise.all(
      CORPUS.flatMap(([id, t, cos]) => [
        writer.write({
          index: monthlyIndex(interactions, t),
          id,
          document: interactionDocument(interaction(id, t), at(cos), MODEL, TQ),
        }),
        writer.write({
          index: monthlyIndex(chunks, t),
          id: `chunk-${id}`,
          document: chunkDocument(chunk(id, t), at(cos - 0.1), MODEL, TQ),
        }),
      ]),
    );
    await Promise.all(
      HYBRID_CORPUS.map(([id, cos, title, text, names]) =>
        writer.write({
          index: monthlyIndex(chunks, HYBRID_TQ - DAY_MS),
          id: `hybrid-${id}`,
          document: chunkDocument(hybridChunk(id, title, text, names), at(cos), MODEL, TQ),
        }),
      ),
    );
    await Promise.all(
      HOP_CORPUS.map(([id, t, cos, subject, object]) =>
        writer.write({
          index: monthlyIndex(interactions, t),
          id,
          document: interactionDocument(hopInteraction(id, t, subject, object), at(cos), MODEL, TQ),
        }),
      ),
    );
    await Promise.all(
      [...EVENT_STATEMENTS, ...REVISED_EVENT_STATEMENTS].map((statement) =>
        writer.write({
          index: monthlyIndex(interactions, statement.t),
          id: statement.id,
          document: interactionDocument(statement, at(0.1), MODEL, TQ),
        }),
      ),
    );
    await writer.write({
      index: monthlyIndex(chunks, SURVIVOR_FIRST),
      id: 'chunk-survivor',
      document: chunkDocument(survivorChunk(), at(0.9), MODEL, TQ),
    });
    await Promise.all(
      REVISION_CHUNKS.map(([version, index, t, text]) =>
        writer.write({
          index: monthlyIndex(chunks, t),
          id: `art-revision:v${version}:${index}`,
          document: chunkDocument(revisionChunk(version, index, t, text), at(0.97), MODEL, TQ),
        }),
      ),
    );
    await writer.write({
      index: monthlyIndex(interactions, REVISION_V1),
      id: 'revision-statement',
      // Less similar than the corpus's nearest statements, which other tests ask for without a time bound.
      document: interactionDocument(revisionStatement(), at(0.8), MODEL, TQ),
    });
    await Promise.all(
      CORRECTION_CHUNKS.map(([id, t, url, title, text]) =>
        writer.write({
          index: monthlyIndex(chunks, t),
          id: `art-${id}:v1:0`,
          document: chunkDocument(correctionChunk(id, t, url, title, text), at(0.96), MODEL, TQ),
        }),
      ),
    );
    // As an earlier version wrote it: no report times.
    const legacy = chunkDocument(chunk('legacy', LEGACY_T), at(0.85), MODEL, TQ);
    delete legacy['reported_at'];
    await writer.write({ index: monthlyIndex(chunks, LEGACY_T), id: 'chunk-legacy', document: legacy });
    await writer.close();
    retriever = new Retriever({ datastore, embedder: queryEmbedder });
  });

  afterAll(async () => {
    await under.cleanup();
  });

  /**
   * The strategies' semantics are checked on dense relevance alone, whose scores the corpus fixes
   * exactly; lexical and fused relevance have their own tests below.
   */
  async function ids(input: Partial<SearchRequestInput>): Promise<string[]> {
    const parsed = parseSearchRequest(
      { q: 'doja cat news', date: new Date(TQ).toISOString(), fusion: 'dense', store: 'interactions', ...input },
      0,
    );
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    return (await retriever.search(parsed.request)).items.map((item) => item.id);
  }

  describe(`query API on ${label}`, () => {
    let api: ApiServer | undefined;
    afterAll(async () => api?.close());

    async function serve(options: { keys?: string[]; ratePerMinute?: number; chat?: ChatModel } = {}): Promise<string> {
      await api?.close();
      api = await startApiServer({
        port: 0,
        retriever,
        ...(options.keys ? { apiKeys: options.keys } : {}),
        ...(options.ratePerMinute ? { ratePerMinute: options.ratePerMinute } : {}),
        ...(options.chat ? { chat: options.chat } : {}),
      });
      return api.url;
    }

    const date = new Date(TQ).toISOString();

    it('answers extractively without an LLM: the best sentence first, then the others dated, citations to items with URLs', async () => {
      const base = await serve();
      const response = await fetch(
        `${base}/v1/ask?q=doja+cat+news&date=${date}&k=3&strategy=temporal&fusion=dense&store=interactions`,
      );
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        answer: string;
        citations: { n: number; id: string; url: string }[];
        items: { id: string }[];
        model: string | null;
        reformulated: string;
        timings_ms: Record<string, number>;
      };
      expect(body.model).toBeNull();
      expect(body.reformulated).toBe('doja cat news, August 31, 2023');
      expect(body.items.map((i) => i.id)).toEqual(['b', 'a', 'c']);
      expect(body.answer).toBe(
        [
          // The statement's passage reads as a whole sentence, the statement as a fragment.
          'The chunk b about Doja Cat [1] (August 31, 2023).',
          'Also, as of August 31, 2023:',
          'August 31, 2023: Doja Cat interaction b [1].',
          'August 31, 2023: Doja Cat interaction a [2].',
          'August 30, 2023: Doja Cat interaction c [3].',
        ].join('\n'),
      );
      expect(body.citations.map((c) => [c.n, c.id, c.url])).toEqual([
        [1, 'b', 'https://news.example/b'],
        [2, 'a', 'https://news.example/a'],
        [3, 'c', 'https://news.example/c'],
      ]);
      expect(Object.keys(body.timings_ms)).toEqual(expect.arrayContaining(['embed', 'retrieve', 'rerank', 'answer']));
    });

    it('answers with an LLM grounded in the items, keeping only citations that name an item', async () => {
      const prompts: string[] = [];
      const chat: ChatModel = {
        model: 'test-llm',
        complete: (request) => {
          prompts.push(request.messages.map((m) => m.content).join('\n'));
          return Promise.resolve({
            text: 'Doja Cat did b [1] after c [3]; see also [9].',
            model: 'test-llm',
            promptTokens: 1,
            completionTokens: 1,
            cached: false,
          });
        },
        close: () => Promise.resolve(),
      };
      const base = await serve({ chat });
      const body = (await (
        await fetch(`${base}/v1/ask?q=doja&date=${date}&k=3&strategy=temporal&fusion=dense&store=interactions`)
      ).json()) as {
        answer: string;
        citations: { n: number; id: string }[];
        model: string;
      };
      expect(body.model).toBe('test-llm');
      expect(body.answer).toBe('Doja Cat did b [1] after c [3]; see also .');
      expect(body.citations.map((c) => [c.n, c.id])).toEqual([
        [1, 'b'],
        [3, 'c'],
      ]);
      expect(prompts[0]).toContain('[1] (August 31, 2023) Doja Cat interaction b');
      expect(prompts[0]).not.toContain('interaction e');

      // The LLM failing (budget spent) still gets an answer: the extractive one, saying why.
      const failing: ChatModel = {
        ...chat,
        complete: () => Promise.reject(new ChatModelError('llm_budget_exhausted', 'budget spent', true)),
      };
      const fallback = (await (
        await fetch(
          `${await serve({ chat: failing })}/v1/ask?q=doja&date=${date}&k=2&strategy=temporal&fusion=dense&store=interactions`,
        )
      ).json()) as {
        model: null;
        fallback: string;
        citations: unknown[];
      };
      expect(fallback).toMatchObject({ model: null, fallback: 'llm_budget_exhausted' });
      expect(fallback.citations).toHaveLength(2);
    });

    it('serves retrieval, timelines and its OpenAPI description', async () => {
      const base = await serve();
      const search = (await (
        await fetch(`${base}/v1/search`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ q: 'doja', date, k: 2, strategy: 'generic', store: 'chunks', fusion: 'dense' }),
        })
      ).json()) as { items: { id: string; kind: string }[] };
      expect(search.items.map((i) => [i.id, i.kind])).toEqual([
        ['chunk-d', 'chunk'],
        ['chunk-g', 'chunk'],
      ]);
      const timeline = (await (await fetch(`${base}/v1/entities/e-p2j/timeline?date=${date}&limit=3`)).json()) as {
        items: { id: string }[];
      };
      expect(timeline.items.map((i) => i.id)).toEqual(['b', 'a', 'c']);
      const older = (await (
        await fetch(
          `${base}/v1/entities/e-p2j/timeline?date=${date}&limit=10&before=${new Date(TQ - DAY_MS).toISOString()}`,
        )
      ).json()) as { items: { id: string }[] };
      expect(older.items.map((i) => i.id)).toEqual(['d', 'f', 'g']);
      const spec = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(spec.paths)).toEqual(
        expect.arrayContaining(['/v1/search', '/v1/ask', '/v1/entities/{id}/timeline', '/v1/spikes']),
      );
    });

    it('answers through the real OpenAI client over HTTP, and falls back when the endpoint is down', async () => {
      const fake = await startFakeOpenAiServer({ chat: () => 'Doja Cat did b [1]; older news in [3].' });
      const chat = new OpenAiChatModel(
        llmConfig({
          baseUrl: fake.url,
          model: 'fake-model',
          timeoutMs: 2_000,
          retry: { attempts: 2, baseMs: 1, capMs: 5 },
        }),
      );
      try {
        const base = await serve({ chat });
        const body = (await (
          await fetch(`${base}/v1/ask?q=doja&date=${date}&k=3&strategy=temporal&fusion=dense&store=interactions`)
        ).json()) as {
          answer: string;
          model: string;
          citations: { n: number; id: string; url: string }[];
        };
        expect(body).toMatchObject({ answer: 'Doja Cat did b [1]; older news in [3].', model: 'fake-model' });
        expect(body.citations.map((c) => [c.n, c.id, c.url])).toEqual([
          [1, 'b', 'https://news.example/b'],
          [3, 'c', 'https://news.example/c'],
        ]);
        const [request] = fake.chatRequests();
        expect(request!.messages[1]!.content).toContain('Today is August 31, 2023.');
        expect(request!.temperature).toBe(0);
        // A second identical question costs nothing: the client's cache answers.
        await fetch(`${base}/v1/ask?q=doja&date=${date}&k=3&strategy=temporal&fusion=dense&store=interactions`);
        expect(fake.totals.chatCalls).toBe(1);
        fake.enqueue(fakeReplies.serverError(), fakeReplies.serverError());
        const down = (await (
          await fetch(`${base}/v1/ask?q=doja+again&date=${date}&k=3&strategy=temporal&fusion=dense&store=interactions`)
        ).json()) as {
          model: null;
          fallback: string;
        };
        expect(down).toMatchObject({ model: null, fallback: 'llm_unavailable' });
      } finally {
        await chat.close();
        await fake.close();
      }
    });

    it('refuses bad requests with every problem, wants a key when keys are set, and rate-limits per key', async () => {
      let base = await serve();
      const bad = await fetch(`${base}/v1/search?q=&k=1000&strategy=psychic&date=yesterday`);
      expect(bad.status).toBe(400);
      const problems = ((await bad.json()) as { problems: string[] }).problems.map((p) => p.split(':')[0]);
      expect(problems).toEqual(expect.arrayContaining(['q', 'k', 'strategy', 'date']));
      expect((await fetch(`${base}/v1/search?q=${'x'.repeat(600)}`)).status).toBe(400);
      expect((await fetch(`${base}/v1/entities/e-p2j/timeline?limit=0`)).status).toBe(400);

      base = await serve({ keys: ['key-one', 'key-two'], ratePerMinute: 6 });
      expect((await fetch(`${base}/v1/search?q=doja`)).status).toBe(401);
      const asKey = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
      expect((await fetch(`${base}/v1/search?q=doja`, asKey('key-three'))).status).toBe(401);
      // A burst of 1 (6 a minute): the second call of one key is limited, another key is not.
      expect((await fetch(`${base}/v1/search?q=doja&date=${date}`, asKey('key-one'))).status).toBe(200);
      const limited = await fetch(`${base}/v1/search?q=doja&date=${date}`, asKey('key-one'));
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await fetch(`${base}/v1/search?q=doja&date=${date}`, asKey('key-two'))).status).toBe(200);
    });
  });

  describe(`the event graph on ${label}`, () => {
    const event = (key: string): string => eventIdOf(statementId(key));
    let server: ApiServer | undefined;
    afterAll(async () => server?.close());

    it("one event from many sources, an entity's story in time order, nothing from after the date", async () => {
      const reader = new EventGraphReader(retriever);
      const story = await reader.story('e-nimbus', EVENT_TQ, { limit: 10 });
      expect(story.complete).toBe(true);
      expect(story.events.map((e) => e.id)).toEqual([event('buy'), event('visit'), event('approved')]);
      const [purchase, visit, approval] = story.events;
      expect(purchase!.reports.map((r) => r.interaction_id)).toEqual([statementId('buy'), statementId('buy-again')]);
      expect(purchase!.sources).toEqual(['https://buy.news.example/story', 'https://buy-again.news.example/story']);
      expect(purchase!.who.map((p) => p.id)).toEqual(['e-nimbus', 'e-orbit']);
      expect([purchase!.before, purchase!.after, visit!.before, approval!.after]).toEqual([
        null,
        event('visit'),
        event('buy'),
        null,
      ]);
      // As of the first report's hour: one source so far, and nothing after.
      const early = await reader.story('e-nimbus', Date.UTC(2025, 8, 10, 9), { limit: 10 });
      expect(early.events.map((e) => [e.id, e.reports.length])).toEqual([[event('buy'), 1]]);
      // The latest events when limited; the older are said to be missing.
      const latest = await reader.story('e-nimbus', EVENT_TQ, { limit: 2 });
      expect([latest.events.map((e) => e.id), latest.complete]).toEqual([[event('visit'), event('approved')], false]);
    });

    it('an event with its neighbours through each participant, over the API', async () => {
      server = await startApiServer({ port: 0, retriever });
      const base = server.url;
      const response = await fetch(`${base}/v1/events/${event('buy')}?date=2025-09-20`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        event: { id: string; who: { id: string }[]; reports: unknown[] };
        before: { event_id: string; via: { id: string } }[];
        after: { event_id: string; via: { id: string } }[];
      };
      expect(body.event.id).toBe(event('buy'));
      expect(body.event.reports).toHaveLength(2);
      expect(body.before.map((l) => [l.via.id, l.event_id])).toEqual([['e-orbit', event('lost')]]);
      expect(body.after.map((l) => [l.via.id, l.event_id])).toEqual([
        ['e-nimbus', event('visit')],
        ['e-orbit', event('sued')],
      ]);
      // Named after a later report, the event is found by the report, under its own id; an event not
      // reported by the date is not there.
      const byLaterReport = await fetch(`${base}/v1/events/${eventIdOf(statementId('buy-again'))}?date=2025-09-20`);
      expect(((await byLaterReport.json()) as { event: { id: string } }).event.id).toBe(event('buy'));
      expect((await fetch(`${base}/v1/events/${event('later')}?date=2025-09-20`)).status).toBe(404);
      expect((await fetch(`${base}/v1/events/${event('buy')}?date=2025-09-09`)).status).toBe(404);
      const story = (await (await fetch(`${base}/v1/entities/e-orbit/events?date=2025-09-20`)).json()) as {
        events: { id: string; before: string | null }[];
      };
      expect(story.events.map((e) => e.id)).toEqual([event('lost'), event('buy'), event('sued'), event('approved')]);
      expect(story.events[1]!.before).toBe(event('lost'));
      expect((await fetch(`${base}/v1/entities/e-orbit/events?limit=0`)).status).toBe(400);
    });

    it('leaves a superseded report out, the event standing on its other reports', async () => {
      const reader = new EventGraphReader(retriever);
      const [revised, other] = REVISED_EVENT_STATEMENTS.map((s) => s.id);
      const firstId = eventIdOf(revised!);
      const before = await reader.event(firstId, REVISION_V1 + 2 * HOUR);
      expect(before?.event.reports.map((r) => r.interaction_id)).toEqual([revised, other]);
      // Once the article's second version is out, its first version's statement is no report.
      const after = await reader.event(firstId, REVISION_V2 + HOUR);
      expect(after?.event.id).toBe(eventIdOf(other!));
      expect(after?.event.reports.map((r) => r.interaction_id)).toEqual([other]);
      const story = await reader.story('e-tram-depot', REVISION_V2 + HOUR, { limit: 10 });
      expect(story.events.map((e) => e.id)).toEqual([eventIdOf(other!)]);
    });
  });

  describe(`retrieval strategies on ${label}`, () => {
    it('temporal: the exact day first, widened ring by ring to ±r days until k are found', async () => {
      expect(await ids({ strategy: 'temporal', k: 2 })).toEqual(['b', 'a']);
      expect(await ids({ strategy: 'temporal', k: 4 })).toEqual(['b', 'a', 'c', 'd']);
      expect(await ids({ strategy: 'temporal', k: 6, window_days: 7 })).toEqual(['b', 'a', 'c', 'd', 'f']);
      // r = 1: only the day before can fill in; the day after is the future.
      expect(await ids({ strategy: 'temporal', k: 4, window_days: 1 })).toEqual(['b', 'a', 'c']);
      expect(await ids({ strategy: 'temporal', k: 4, window_days: 0 })).toEqual(['b', 'a']);
    });

    it('generic: by similarity of q′ alone, still as of t_q', async () => {
      expect(await ids({ strategy: 'generic', k: 3 })).toEqual(['d', 'g', 'c']);
    });

    it('tempralm: recent and similar first, nothing from after t_q', async () => {
      // At α = 1 recency weighs as much as relevance: b, an hour old, leads; at α = 0 relevance alone.
      const result = await ids({ strategy: 'tempralm', k: 7, alpha: 1 });
      expect(result[0]).toBe('b');
      expect(result).toHaveLength(6);
      expect(result).not.toContain('e');
      expect(await ids({ strategy: 'tempralm', k: 3, alpha: 0 })).toEqual(await ids({ strategy: 'generic', k: 3 }));
    });

    it('never leaks the future unless asked, for every strategy and store', async () => {
      for (const strategy of ['temporal', 'generic', 'tempralm'] as const) {
        for (const store of ['interactions', 'chunks', 'both'] as const) {
          const found = await ids({ strategy, store, k: 20, window_days: 30 });
          expect(found, `${strategy}/${store}`).not.toContain('e');
          expect(found, `${strategy}/${store}`).not.toContain('chunk-e');
        }
      }
      expect(await ids({ strategy: 'generic', k: 2, include_future: true })).toEqual(['e', 'd']);
    });

    it('META constraints: before, after and around an anchor', async () => {
      const anchor = new Date(TQ - 1.5 * DAY_MS).toISOString();
      expect(await ids({ strategy: 'generic', k: 10, constraint: 'before', constraint_date: anchor })).toEqual([
        'd',
        'g',
        'f',
      ]);
      expect(await ids({ strategy: 'generic', k: 10, constraint: 'after', constraint_date: anchor })).toEqual([
        'c',
        'b',
        'a',
      ]);
      const weekBefore = new Date(TQ - 7 * DAY_MS).toISOString();
      expect(
        await ids({ strategy: 'generic', k: 10, constraint: 'around', constraint_date: weekBefore, window_days: 1 }),
      ).toEqual(['f']);
    });

    it('multi-hop: the events of the entities the first results lead to, under the same time bounds', async () => {
      const linker = new EntityLinker([{ id: 'e-acme', name: 'Acme', aliases: [], mentions: 3 }]);
      const linked = new Retriever({ datastore, embedder: queryEmbedder, linker });
      const ask = async (hops: number, using = linked): Promise<[string, string | null][]> => {
        const parsed = parseSearchRequest(
          {
            // Nothing found says who Acme partnered with ("partner" is in no text): the hop goes on.
            q: 'Who did Acme partner with?',
            date: new Date(HOP_TQ).toISOString(),
            k: 4,
            strategy: 'generic',
            constraint: 'after',
            constraint_date: new Date(HOP_ANCHOR).toISOString(),
            hops,
            fusion: 'dense',
            store: 'interactions',
          },
          0,
        );
        if (!parsed.ok) throw new Error(parsed.problems.join('; '));
        return (await using.search(parsed.request)).items.map((item) => [item.id, item.via_entity ?? null]);
      };
      expect(await ask(1)).toEqual([
        ['h1', null],
        ['h2', null],
        ['h3', null],
        ['h6', null],
      ]);
      // Bridges: Bolt (h1, h2) and Crane (h3), not Acme, which the question names. Half the places
      // keep the first hop's best; the bridges' events follow, most similar first.
      expect(await ask(2)).toEqual([
        ['h1', null],
        ['h2', null],
        ['h5', 'e-crane'],
        ['h4', 'e-bolt'],
      ]);
      // Unlinked, the question's own entity is the first bridge; it brings nothing new.
      expect(await ask(2, retriever)).toEqual([
        ['h1', null],
        ['h2', null],
        ['h4', 'e-bolt'],
        ['h3', null],
      ]);
    });

    it("reads the question's own time words as its scope, unless the request sets one", async () => {
      // As of Thursday 31 August 2023: c is of the day before, d of the 29th, g of 10 August, f of the
      // 24th. The window searched opens 3 days before the day named (its news is reported from then)
      // and runs a week past it; what it holds comes first, by relevance.
      expect(await ids({ q: 'doja cat news yesterday', strategy: 'generic', k: 4 })).toEqual(['d', 'c', 'b', 'a']);
      expect(await ids({ q: 'doja cat news on August 10', strategy: 'generic', k: 1 })).toEqual(['g']);
      // With fewer than k published in it, the best matches from outside it follow.
      expect(await ids({ q: 'doja cat news yesterday', strategy: 'generic', k: 10 })).toEqual([
        'd',
        'c',
        'b',
        'a',
        'g',
        'f',
      ]);
      expect(await ids({ q: 'doja cat news on August 10', strategy: 'generic', k: 10 })).toEqual([
        'g',
        'd',
        'c',
        'b',
        'f',
        'a',
      ]);
      expect(await ids({ q: 'doja cat news yesterday', strategy: 'generic', k: 3, time_words: false })).toEqual([
        'd',
        'g',
        'c',
      ]);
      // A recent period up to now is weighed as recency by the strategy, not filtered: g (three weeks
      // old) stays among the generic strategy's results.
      expect(await ids({ q: 'doja cat news this week', strategy: 'generic', k: 3 })).toEqual(['d', 'g', 'c']);
      const thisWeek = parseSearchRequest({ q: 'doja cat news this week', date: new Date(TQ).toISOString() }, 0);
      if (!thisWeek.ok) throw new Error(thisWeek.problems.join('; '));
      expect((await retriever.search(thisWeek.request)).time).toMatchObject({
        expressions: ['this week'],
        as_recency: true,
      });
      // "recently" places a question in the present: TempRALM weighs recency itself and does not rank
      // latest first; the generic strategy, which has no weight on time, does.
      for (const [strategy, latestFirst] of [
        ['tempralm', false],
        ['generic', true],
      ] as const) {
        const recently = parseSearchRequest(
          { q: 'what did doja cat do recently', date: new Date(TQ).toISOString(), strategy },
          0,
        );
        if (!recently.ok) throw new Error(recently.problems.join('; '));
        const reading = (await retriever.search(recently.request)).time!;
        expect(reading, strategy).toMatchObject({ expressions: ['recently'], recency: latestFirst });
        expect(reading.explanation, strategy).toMatch(
          latestFirst
            ? /about the present.*; ranked latest first \(the strategy has no weight on time\)/
            : /about the present.*; weighed by TempRALM's recency, not ranked latest first/,
        );
      }
      // The caller's own constraint replaces the question's time scope as a whole.
      const anchor = new Date(TQ - 5 * DAY_MS).toISOString();
      expect(
        await ids({
          q: 'doja cat news yesterday',
          strategy: 'generic',
          k: 10,
          constraint: 'before',
          constraint_date: anchor,
        }),
      ).toEqual(['g', 'f']);
      const parsed = parseSearchRequest(
        { q: 'doja cat news yesterday', date: new Date(TQ).toISOString(), fusion: 'dense' },
        0,
      );
      if (!parsed.ok) throw new Error(parsed.problems.join('; '));
      const { time, reformulated } = await retriever.search(parsed.request);
      expect(time).toMatchObject({
        expressions: ['yesterday'],
        window: { from: '2023-08-27T00:00:00.000Z', to: new Date(TQ).toISOString() },
        recency: false,
        outside: 2,
        applied: true,
      });
      expect(time!.explanation).toMatch(/2023-08-30/);
      expect(reformulated).toBe('doja cat news yesterday, August 31, 2023');
    });

    describe('lexical, dense and fused relevance', () => {
      const june = { publishedFrom: Date.UTC(2024, 5, 1), publishedTo: HYBRID_TQ };
      const asked = 'Australian Open women’s final';
      const short = (id: string): string => id.replace(/^hybrid-/, '');

      it('lexical: BM25 over the text, the headline and the entity names, under the filter', async () => {
        const found = await datastore.lexical({
          kinds: ['chunks'],
          text: asked,
          k: 10,
          filter: june,
          timeoutMs: 5_000,
        });
        const order = found.map((f) => short(f.document.id));
        // The final's report has all four words; the first-round one three; the others one each, from
        // their entity names (named: "Australian Open") or headline (headline: "final").
        expect(order.slice(0, 2)).toEqual(['final', 'round']);
        expect(new Set(order.slice(2))).toEqual(new Set(['named', 'headline']));
        expect(found.every((f) => f.score > 0)).toBe(true);
        expect(found[0]!.document).toMatchObject({ title: 'Sabalenka takes the title', kind: 'chunk' });
        expect(found[0]!.score).toBeGreaterThan(found[1]!.score);
        // The filter applies: nothing of June as of the day before the corpus.
        const before = await datastore.lexical({
          kinds: ['chunks'],
          text: asked,
          k: 10,
          filter: { ...june, publishedTo: HYBRID_TQ - 3 * DAY_MS },
          timeoutMs: 5_000,
        });
        expect(before).toEqual([]);
        expect(
          await datastore.lexical({ kinds: ['chunks'], text: ' ;: ', k: 3, filter: june, timeoutMs: 5_000 }),
        ).toEqual([]);
      });

      async function hybridIds(input: Partial<SearchRequestInput>): Promise<string[]> {
        const parsed = parseSearchRequest(
          {
            q: asked,
            date: new Date(HYBRID_TQ).toISOString(),
            store: 'chunks',
            strategy: 'generic',
            constraint: 'after',
            constraint_date: '2024-06-01T00:00:00Z',
            k: 6,
            // A final named without a year asks for the latest one; here only relevance is under test.
            time_words: false,
            ...input,
          },
          0,
        );
        if (!parsed.ok) throw new Error(parsed.problems.join('; '));
        return (await retriever.search(parsed.request)).items.map((item) => short(item.id));
      }

      it('dense: by cosine alone', async () => {
        expect(await hybridIds({ fusion: 'dense' })).toEqual(['rain', 'round', 'budget', 'final', 'named', 'headline']);
      });

      it('fused: reciprocal ranks, and a weighted sum of normalised scores', async () => {
        // RRF of the two lists favours what both hold: round (2/62), final (1/61 + 1/64), then named and
        // headline, low in both lists but in both (1/63 + 1/65, 1/64 + 1/66), before rain, first in the
        // dense list alone (1/61), and budget (1/63).
        // (named and headline each match one field weakly; the two stores' BM25 may order them either way.)
        const rrf = await hybridIds({ fusion: 'rrf', answer_sentences: false });
        expect(rrf.slice(0, 2)).toEqual(['round', 'final']);
        expect(new Set(rrf.slice(2, 4))).toEqual(new Set(['named', 'headline']));
        expect(rrf.slice(4)).toEqual(['rain', 'budget']);
        // With the answer-sentence ranking (the default), the final's one sentence holding all four
        // words ranks it first there, and first overall (2/61 + 1/64 against round's 3/62); the
        // documents with no sentence sharing a word with the question are not in that list.
        const withSentences = await hybridIds({ fusion: 'rrf' });
        expect(withSentences.slice(0, 2)).toEqual(['final', 'round']);
        expect(withSentences.slice(4)).toEqual(['rain', 'budget']);
        const scored = (
          await retriever.search({
            ...(
              parseSearchRequest(
                {
                  q: asked,
                  date: new Date(HYBRID_TQ).toISOString(),
                  store: 'chunks',
                  strategy: 'generic',
                  time_words: false,
                  k: 6,
                },
                0,
              ) as { ok: true; request: SearchRequest }
            ).request,
            window: { from: Date.UTC(2024, 5, 1) },
          })
        ).items;
        const sentence = new Map(scored.map((i) => [short(i.id), i.sentence_score]));
        expect(sentence.get('final')).toBeGreaterThan(sentence.get('round')!);
        expect(sentence.get('rain')).toBeUndefined();
        expect(sentence.get('budget')).toBeUndefined();
        expect(await hybridIds({ fusion: 'lexical', k: 2 })).toEqual(['final', 'round']);
        const items = (
          await retriever.search({
            ...(
              parseSearchRequest({ q: asked, date: new Date(HYBRID_TQ).toISOString(), store: 'chunks' }, 0) as {
                ok: true;
                request: SearchRequest;
              }
            ).request,
            publishedFrom: undefined,
            strategy: 'generic',
            window: { from: Date.UTC(2024, 5, 1) },
            timeWords: false,
            fusion: 'weighted',
            lexicalWeight: 1,
            k: 2,
          } as SearchRequest)
        ).items;
        expect(items.map((i) => short(i.id))).toEqual(['final', 'round']);
        expect(items[0]).toMatchObject({ relevance: 1, title: 'Sabalenka takes the title' });
        expect(items[0]!.lexical_score).toBeGreaterThan(items[1]!.lexical_score!);
        // Elasticsearch's int8-quantised vectors score within a percent or so of the exact cosine.
        expect(items[0]!.semantic_score).toBeCloseTo(0.75, 1);
      });
    });

    describe('a deduplicated chunk reported on several days', () => {
      const late = ['chunk-survivor', 'chunk-legacy'];
      /** Which of the two late chunks `list`, `nearest` and `lexical` find under the filter (sorted). */
      async function found(filter: DocumentFilter): Promise<string[][]> {
        const ask = { kinds: ['chunks'] as const, k: 20, filter, timeoutMs: 5_000 };
        const results = await Promise.all([
          datastore.list({ kind: 'chunks', filter, order: 'newest', limit: 50, timeoutMs: 5_000 }),
          datastore.nearest({ ...ask, vector: [1, 0, 0, 0] }).then((hits) => hits.map((h) => h.document)),
          datastore
            .lexical({ ...ask, text: 'harbour storm ferry chunk legacy doja' })
            .then((hits) => hits.map((h) => h.document)),
        ]);
        return results.map((documents) =>
          documents
            .map((d) => d.id)
            .filter((id) => late.includes(id))
            .sort(),
        );
      }
      const everywhere = (ids: string[]): string[][] => [ids, ids, ids];

      it('is found by a day or window filter on a later report, in the month after the one it is stored in', async () => {
        expect(await found({ day: '2025-02-03' })).toEqual(everywhere(['chunk-survivor']));
        expect(await found({ day: '2025-01-30' })).toEqual(everywhere(['chunk-survivor']));
        expect(await found({ publishedFrom: Date.UTC(2025, 1, 1), publishedTo: Date.UTC(2025, 1, 10) })).toEqual(
          everywhere(['chunk-survivor']),
        );
        expect(await found({ days: { from: '2025-02-02', to: '2025-02-05' } })).toEqual(everywhere(['chunk-survivor']));
      });

      it('is not found before its first report, nor on a day nobody reported it', async () => {
        expect(await found({ day: '2025-01-28' })).toEqual(everywhere(['chunk-legacy']));
        expect(await found({ day: '2025-02-01' })).toEqual(everywhere([]));
        expect(await found({ publishedTo: SURVIVOR_FIRST - 1, publishedFrom: Date.UTC(2025, 0, 1) })).toEqual(
          everywhere(['chunk-legacy']),
        );
        expect(await found({ publishedFrom: SURVIVOR_LATER + 1 })).toEqual(everywhere([]));
      });

      it('needs one report time to pass every time condition at once', async () => {
        // Reported on 3 February, but only after 07:00: not as of 07:00 that day.
        expect(await found({ day: '2025-02-03', publishedTo: SURVIVOR_LATER - HOUR })).toEqual(everywhere([]));
        // Its report in the ring is on the day left out (the exact day, searched on its own).
        expect(await found({ days: { from: '2025-02-02', to: '2025-02-05', except: '2025-02-03' } })).toEqual(
          everywhere([]),
        );
        expect(await found({ days: { from: '2025-01-30', to: '2025-02-05', except: '2025-02-03' } })).toEqual(
          everywhere(['chunk-survivor']),
        );
      });

      it('finds documents indexed without report times by their one time', async () => {
        expect(await found({ days: { from: '2025-01-27', to: '2025-01-28' } })).toEqual(everywhere(['chunk-legacy']));
        expect(await found({ publishedFrom: LEGACY_T, publishedTo: LEGACY_T })).toEqual(everywhere(['chunk-legacy']));
        expect(await found({ day: '2025-01-29' })).toEqual(everywhere(['chunk-survivor']));
      });

      it('reads back every report time, and counts the chunk once, at its first report, in histograms', async () => {
        const [survivor] = await datastore.list({
          kind: 'chunks',
          filter: { ids: ['chunk-survivor'] },
          order: 'none',
          limit: 1,
          timeoutMs: 5_000,
        });
        expect(survivor).toMatchObject({
          published_at: SURVIVOR_FIRST,
          reported_at: [SURVIVOR_FIRST, SURVIVOR_SECOND, SURVIVOR_LATER],
        });
        const byDay = await datastore.histogram({
          kind: 'chunks',
          filter: { entityId: 'e-doja-cat', publishedFrom: Date.UTC(2025, 0, 29), publishedTo: Date.UTC(2025, 1, 10) },
          granularity: 'day',
          timeoutMs: 5_000,
        });
        expect(byDay).toEqual([{ start: Date.UTC(2025, 0, 29), count: 1 }]);
      });

      it('is ranked and cited as of its latest report within the request’s bounds', async () => {
        const ask = async (input: Partial<SearchRequestInput>) => {
          const parsed = parseSearchRequest(
            { q: 'harbour storm', fusion: 'dense', store: 'chunks', time_words: false, k: 5, ...input },
            0,
          );
          if (!parsed.ok) throw new Error(parsed.problems.join('; '));
          const items = (await retriever.search(parsed.request)).items;
          return items.find((item) => item.id === 'chunk-survivor');
        };
        // As of 5 February, after 1 February: found by its report of the 3rd, dated and cited by it.
        expect(
          await ask({ date: '2025-02-05', strategy: 'tempralm', constraint: 'after', constraint_date: '2025-02-01' }),
        ).toMatchObject({ published_at: new Date(SURVIVOR_LATER).toISOString(), url: 'https://later.example/third' });
        // As of 31 January: its second report is the latest there was.
        expect(await ask({ date: '2025-01-31', strategy: 'generic' })).toMatchObject({
          published_at: new Date(SURVIVOR_SECOND).toISOString(),
          url: 'https://wire.example/second',
        });
        // As of the day of its first report: its own article.
        expect(await ask({ date: '2025-01-29', strategy: 'temporal' })).toMatchObject({
          published_at: new Date(SURVIVOR_FIRST).toISOString(),
          url: 'https://news.example/survivor',
          day_distance: 0,
        });
        // The exact day of a later report: the temporal strategy finds it there, at distance 0.
        expect(await ask({ date: '2025-02-03T12:00:00Z', strategy: 'temporal', window_days: 0 })).toMatchObject({
          published_at: new Date(SURVIVOR_LATER).toISOString(),
          day_distance: 0,
        });
      });
    });

    describe('an article republished with changed text', () => {
      const revision = ['art-revision:v1:0', 'art-revision:v1:1', 'art-revision:v2:0', 'revision-statement'];
      /** The revision's documents each strategy returns as of `date` (sorted). */
      async function seen(date: string): Promise<string[][]> {
        return Promise.all(
          (['generic', 'tempralm', 'temporal'] as const).map(async (strategy) => {
            const parsed = parseSearchRequest(
              { q: 'council buses', date, strategy, fusion: 'rrf', store: 'both', time_words: false, k: 10 },
              0,
            );
            if (!parsed.ok) throw new Error(parsed.problems.join('; '));
            const items = (await retriever.search(parsed.request)).items;
            return items
              .map((item) => item.id)
              .filter((id) => revision.includes(id))
              .sort();
          }),
        );
      }

      it('answers as of an earlier date from the old version, never the newer text', async () => {
        const before = ['art-revision:v1:0', 'art-revision:v1:1', 'revision-statement'];
        expect(await seen('2025-05-11T12:00:00Z')).toEqual([before, before, before]);
      });

      it('answers as of its time or later from the new version only, old chunks and their statements left out', async () => {
        expect(await seen('2025-05-12T09:00:00Z')).toEqual([
          ['art-revision:v2:0'],
          ['art-revision:v2:0'],
          ['art-revision:v2:0'],
        ]);
        expect(await seen('2025-05-13T18:00:00Z')).toEqual([
          ['art-revision:v2:0'],
          ['art-revision:v2:0'],
          ['art-revision:v2:0'],
        ]);
      });

      it('finds the later versions of given articles, as of a time', async () => {
        const later = async (publishedTo: number): Promise<string[]> =>
          (
            await datastore.list({
              kind: 'chunks',
              filter: { articleIds: ['art-revision', 'art-a'], minVersion: 2, publishedTo },
              order: 'none',
              limit: 10,
              timeoutMs: 5_000,
            })
          ).map((d) => `${d.id} ${d.article_id} v${d.article_version}`);
        expect(await later(REVISION_V2 - 1)).toEqual([]);
        expect(await later(REVISION_V2)).toEqual(['art-revision:v2:0 art-revision v2']);
      });
    });

    describe('a later article that corrects or retracts an earlier one', () => {
      const all = CORRECTION_CHUNKS.map(([id]) => `art-${id}:v1:0`);
      async function seen(date: string): Promise<string[][]> {
        return Promise.all(
          (['generic', 'tempralm', 'temporal'] as const).map(async (strategy) => {
            const parsed = parseSearchRequest(
              {
                q: 'ferry fares harbour route',
                date,
                strategy,
                fusion: 'rrf',
                store: 'chunks',
                time_words: false,
                k: 10,
              },
              0,
            );
            if (!parsed.ok) throw new Error(parsed.problems.join('; '));
            const items = (await retriever.search(parsed.request)).items;
            return items
              .map((item) => item.id)
              .filter((id) => all.includes(id))
              .sort();
          }),
        );
      }

      it('leaves the earlier answers as they were', async () => {
        const before = ['art-claim:v1:0', 'art-fares:v1:0'];
        expect(await seen('2025-06-03T12:00:00Z')).toEqual([before, before, before]);
      });

      it('answers from the correction from its time on, and no longer cites the corrected or the withdrawn report', async () => {
        const after = ['art-claim-retraction:v1:0', 'art-fares-fix:v1:0'];
        expect(await seen('2025-06-04T12:00:00Z')).toEqual([after, after, after]);
      });

      it('records what a correction names, and finds the corrections of given URLs', async () => {
        const found = await datastore.list({
          kind: 'chunks',
          filter: { correctsUrls: ['news.example/2025/06/02/mayor-claim'], publishedTo: CORRECTION_T },
          order: 'none',
          limit: 10,
          timeoutMs: 5_000,
        });
        expect(found.map((d) => [d.id, d.correction, d.corrects_urls])).toEqual([
          ['art-claim-retraction:v1:0', 'retraction', ['news.example/2025/06/02/mayor-claim']],
        ]);
        const earlier = await datastore.list({
          kind: 'chunks',
          filter: { correctsUrls: ['news.example/2025/06/02/mayor-claim'], publishedTo: CORRECTION_T - 1 },
          order: 'none',
          limit: 10,
          timeoutMs: 5_000,
        });
        expect(earlier).toEqual([]);
      });
    });

    it('chunks and both stores, with interactions cited by their chunk’s article URL and carrying its passage', async () => {
      expect(await ids({ strategy: 'generic', store: 'chunks', k: 2 })).toEqual(['chunk-d', 'chunk-g']);
      expect(await ids({ strategy: 'generic', store: 'both', k: 2 })).toEqual(['d', 'g']);
      const parsed = parseSearchRequest(
        {
          q: 'doja',
          date: new Date(TQ).toISOString(),
          k: 1,
          strategy: 'temporal',
          fusion: 'dense',
          store: 'interactions',
        },
        0,
      );
      const [top] = (await retriever.search(parsed.ok ? parsed.request : (undefined as never))).items;
      expect(top).toMatchObject({
        id: 'b',
        kind: 'interaction',
        url: 'https://news.example/b',
        published_at: new Date(TQ - HOUR).toISOString(),
        subject: { id: 'e-doja-cat', name: 'Doja Cat' },
        object: { id: 'e-p2j', name: 'P2J' },
        day_distance: 0,
        // The statement comes with the passage it was extracted from, read from the chunks store.
        passage: 'The chunk b about Doja Cat.',
      });
    });

    it('finds statements by the words of their passages, read through the chunks they came from', async () => {
      // "chunk" is in every passage ("The chunk b about Doja Cat.") and in no statement ("Doja Cat
      // interaction b"): only the passages can match it, and e is after t_q.
      const asOf = ['a', 'b', 'c', 'd', 'f', 'g'];
      const ask = async (passageMatch: PassageMatch): Promise<RetrievedItem[]> => {
        const parsed = parseSearchRequest(
          { q: 'chunk', date: new Date(TQ).toISOString(), fusion: 'lexical', store: 'interactions', k: 10 },
          0,
        );
        if (!parsed.ok) throw new Error(parsed.problems.join('; '));
        return (await retriever.search({ ...parsed.request, strategy: 'generic', passageMatch })).items;
      };
      const found = await ask('lexical');
      expect(found.map((item) => item.id).sort()).toEqual(asOf);
      expect(found.every((item) => item.lexical_score! > 0 && item.lexical_score! <= 1)).toBe(true);
      expect(found.find((item) => item.id === 'b')).toMatchObject({ passage: 'The chunk b about Doja Cat.' });
      expect(await ask('hybrid')).toEqual(found);
      expect(await ask('none')).toEqual([]);
      // The read under it: statements by the chunks they were extracted from, under the filter.
      const listed = await datastore.list({
        kind: 'interactions',
        filter: { chunkIds: ['chunk-b', 'chunk-e', 'chunk-none'], publishedTo: TQ },
        order: 'newest',
        limit: 10,
        timeoutMs: 5_000,
      });
      expect(listed.map((d) => d.id)).toEqual(['b']);
    });

    it('timelines, mention histograms and counts read the same documents', async () => {
      const listed = async (order: 'newest' | 'oldest'): Promise<string[]> =>
        (
          await datastore.list({
            kind: 'interactions',
            filter: { entityId: 'e-p2j', publishedTo: TQ },
            order,
            limit: 3,
            timeoutMs: 5_000,
          })
        ).map((d) => d.id);
      expect(await listed('newest')).toEqual(['b', 'a', 'c']);
      expect(await listed('oldest')).toEqual(['g', 'f', 'd']);
      const byDay = await datastore.histogram({
        kind: 'chunks',
        filter: { entityId: 'e-doja-cat', publishedFrom: TQ - 30 * DAY_MS, publishedTo: TQ },
        granularity: 'day',
        timeoutMs: 5_000,
      });
      const day = (t: number): number => Math.floor(t / DAY_MS) * DAY_MS;
      expect(byDay).toEqual([
        { start: day(TQ - 21 * DAY_MS), count: 1 },
        { start: day(TQ - 7 * DAY_MS), count: 1 },
        { start: day(TQ - 2 * DAY_MS), count: 1 },
        { start: day(TQ - DAY_MS), count: 1 },
        { start: day(TQ), count: 2 },
      ]);
      const byHour = await datastore.histogram({
        kind: 'chunks',
        filter: { entityId: 'e-doja-cat', publishedFrom: TQ - 6 * HOUR, publishedTo: TQ },
        granularity: 'hour',
        timeoutMs: 5_000,
      });
      expect(byHour).toEqual([
        { start: TQ - 3 * HOUR, count: 1 },
        { start: TQ - HOUR, count: 1 },
      ]);
      expect(await datastore.count('interactions')).toBe(
        CORPUS.length + HOP_CORPUS.length + EVENT_CORPUS.length + REVISED_EVENT.length + 1,
      );
      expect(await datastore.count('chunks')).toBe(
        CORPUS.length + HYBRID_CORPUS.length + 2 + REVISION_CHUNKS.length + CORRECTION_CHUNKS.length,
      );
      expect(await datastore.embeddingModel('chunks')).toBe(MODEL);
    });

    it('refuses a document its mapping does not declare, as a dead letter, and overwrites by id', async () => {
      const writer = datastore.writer({ stage: 'conformance', lingerMs: 1, refresh: 'wait_for' });
      const names = datastoreNames('interactions', datastore.prefix);
      const document = interactionDocument(interaction('z', TQ - 4 * HOUR), at(0.1), MODEL, TQ);
      const refused = await writer
        .write({ index: monthlyIndex(names, TQ), id: 'z', document: { ...document, surprise: 'field' } })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(StageError);
      expect((refused as StageError).code).toBe('es_document_rejected');
      // The same id written twice is one document, holding the second version.
      await writer.write({ index: monthlyIndex(names, TQ), id: 'z', document });
      await writer.write({ index: monthlyIndex(names, TQ), id: 'z', document: { ...document, text: 'rewritten' } });
      await writer.close();
      const found = await datastore.list({
        kind: 'interactions',
        filter: { ids: ['z'] },
        order: 'none',
        limit: 10,
        timeoutMs: 5_000,
      });
      expect(found.map((d) => [d.id, d.text])).toEqual([['z', 'rewritten']]);
    });

    it('keeps one embedding model per datastore, and drops whole old months for retention', async () => {
      await expect(datastore.prepare({ model: 'another-model', dimensions: 8 })).rejects.toThrow(
        DatastoreMismatchError,
      );
      // Months before August 2023 go: the 2023.08, 2023.09, 2024.03, 2025.05 and 2025.09 indices stay.
      const dropped = await datastore.dropMonthsBefore('interactions', Date.UTC(2023, 7, 1));
      expect(dropped).toEqual([]);
      const gone = await datastore.dropMonthsBefore('interactions', Date.UTC(2023, 8, 1));
      const prefix = datastore.prefix;
      expect(gone).toEqual([`${prefix}-interactions-2023.08`]);
      expect(await datastore.months('interactions')).toEqual([
        `${prefix}-interactions-2023.09`,
        `${prefix}-interactions-2024.03`,
        `${prefix}-interactions-2025.05`,
        `${prefix}-interactions-2025.09`,
      ]);
    });

    it('merges a finished month that nothing writes to into one segment, and leaves the others', async () => {
      const names = datastoreNames('interactions', datastore.prefix);
      const october = Date.UTC(2023, 9, 10);
      const index = monthlyIndex(names, october);
      // Two writes, each made visible on its own: two segments on Elasticsearch.
      for (const id of ['m1', 'm2']) {
        const writer = datastore.writer({ stage: 'conformance', lingerMs: 1, refresh: 'wait_for' });
        await writer.write({ index, id, document: interactionDocument(interaction(id, october), at(0.5), MODEL, TQ) });
        await writer.close();
      }
      const before = (await datastore.monthStats('interactions')).find((month) => month.index === index);
      expect(before).toMatchObject({ index, month: Date.UTC(2023, 9, 1), docs: 2 });
      const segmented = before!.segments > 1;
      expect(segmented).toBe(datastore.kind === 'elasticsearch');

      const compactor = new MonthCompactor(datastore, ['interactions']);
      // In October the month is not over; the first pass only takes note of what each month holds.
      expect((await compactor.pass(Date.UTC(2023, 9, 20))).merging).toEqual([]);
      expect((await compactor.pass(Date.UTC(2023, 9, 21))).merging).toEqual([]);
      // Over, and nothing written since the last pass: merged, where there is anything to merge.
      expect((await compactor.pass(Date.UTC(2023, 10, 2))).merging).toEqual(segmented ? [index] : []);
      let segments = before!.segments;
      for (let attempt = 0; attempt < 100 && segments > 1; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        segments = (await datastore.monthStats('interactions')).find((month) => month.index === index)!.segments;
      }
      expect(segments).toBe(1);
      // Nothing more to do; the documents are all there and found.
      expect((await compactor.pass(Date.UTC(2023, 10, 3))).merging).toEqual([]);
      const found = await datastore.list({
        kind: 'interactions',
        filter: { ids: ['m1', 'm2'] },
        order: 'newest',
        limit: 10,
        timeoutMs: 5_000,
      });
      expect(found.map((d) => d.id).sort()).toEqual(['m1', 'm2']);
    });
  });
}

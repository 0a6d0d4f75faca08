/**
 * `npm run eval -- question-time [--k 10]`: how well the time words of questions are read, and what
 * reading them does to retrieval (META, seed 001).
 *
 * (a) Parse accuracy on the questions of `eval/question-times.json` (written for this test,
 *     each with its query time and expected reading): exact window match (both bounds to the
 *     millisecond, or both absent), constraint match, recency match, event-anchor match, and all four.
 *     The held-out set was written after the rules were settled: its accuracy is the one to expect on
 *     new questions; the others were written alongside the rules.
 * (b) META's Reference Time Precision: a retrieved reference is precise in time when its publication
 *     time falls within the period the question designates; RTP = precise references ÷ references.
 *     The fixture's `retrieval` questions (about January–March 2025) are asked of the bundled
 *     Wikipedia Current Events 2025 Q1 sample, put through the product's intake, markup, chunking,
 *     dedupe and offline extraction, embedded with the configured embedder (all-MiniLM-L6-v2 by
 *     default) into the embedded datastores, and retrieved by the product's `Retriever` as of each
 *     question's tq, in the variants listed at `VARIANTS`. Questions whose period is anchored to a
 *     named event are reported apart: the module leaves their date to a lookup, which only the
 *     service does. With the intent, RTP is 1 by construction for
 *     every question read right (the window is the designated period): what the figure shows is how
 *     far from it retrieval without the intent is, and `short_questions` what the filter costs (fewer
 *     than k references when the period holds fewer).
 *
 * Writes `eval/results/question-time.json` and prints a table.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { configuredEmbedder } from '../bin/commands/cluster-services.js';
import type { Embedder } from '../processors/embed/embedder.js';
import { extractFromChunks } from '../processors/extract/extraction-plan.js';
import { ALL_ENTITIES } from '../processors/extract/extraction-targets.js';
import { OfflineInteractionExtractor } from '../processors/extract/interaction-extractor.js';
import { chunkDocument, interactionDocument, interactionEmbeddingText } from '../processors/index/index-documents.js';
import { IntakeRejection } from '../processors/intake/article-input.js';
import { normalizeArticle, SUMMARY_MIN_TEXT_CHARS } from '../processors/intake/normalize-article.js';
import { parseArticleLine } from '../processors/intake/article-line.js';
import { EntityLinker } from '../processors/query/reformulate-query.js';
import type { SearchRequest, Store, Strategy } from '../processors/query/search-request.js';
import {
  applyTimeIntent,
  understandQuestionTime,
  type QuestionTimeIntent,
} from '../processors/query/understand-question-time.js';
import { datastoreNames, monthlyIndex, type DatastoreKind } from '../streams/elasticsearch/datastore-templates.js';
import type { Article } from '../schemas/records.generated.js';
import { Retriever } from '../streams/retrieval/retrieve.js';
import { EmbeddedDatastore } from '../streams/embedded/embedded-datastore.js';
import { markChunkDedupe } from '../devkit/process-articles.js';

const { values: args } = parseArgs({ options: { k: { type: 'string', default: '10' } } });
const K = Number(args.k);

const FIXTURE = new URL('./question-times.json', import.meta.url);
const SAMPLE = new URL('../samples/wikipedia-current-events-2025q1/articles.jsonl', import.meta.url);
const RESULTS = new URL('./results/', import.meta.url);

interface WrittenWindow {
  from?: string;
  to?: string;
}

interface WrittenQuestion {
  q: string;
  tq: string;
  constraint: QuestionTimeIntent['constraint'];
  window: WrittenWindow | null;
  recency: boolean;
  anchor?: 'before' | 'after';
  note?: string;
  /** Retrieval questions: the period the question designates (RTP's "precise in time"). */
  period?: WrittenWindow | null;
}

interface Fixture {
  parse: WrittenQuestion[];
  retrieval: WrittenQuestion[];
  /** Written after the rules were settled, and not used to change them. */
  held_out: WrittenQuestion[];
}

/** `YYYY-MM-DD` is the start of that UTC day as a lower bound and its last millisecond as an upper one. */
function bound(value: string | undefined, side: 'from' | 'to', tq: number): number | undefined {
  if (value === undefined) return undefined;
  if (value === 'tq') return tq;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    return Date.parse(side === 'from' ? `${value}T00:00:00.000Z` : `${value}T23:59:59.999Z`);
  }
  return Date.parse(value);
}

function resolveWindow(window: WrittenWindow | null | undefined, tq: number): { from?: number; to?: number } | null {
  if (window === null || window === undefined) return null;
  const from = bound(window.from, 'from', tq);
  const to = bound(window.to, 'to', tq);
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}

const iso = (t: number | undefined): string => (t === undefined ? '…' : new Date(t).toISOString());

interface ParseScore {
  questions: number;
  window: number;
  constraint: number;
  recency: number;
  anchor: number;
  all: number;
  misses: { q: string; tq: string; expected: string; got: string }[];
}

function scoreParsing(questions: readonly WrittenQuestion[]): ParseScore {
  const score: ParseScore = { questions: 0, window: 0, constraint: 0, recency: 0, anchor: 0, all: 0, misses: [] };
  for (const question of questions) {
    const tq = Date.parse(question.tq);
    const intent = understandQuestionTime(question.q, tq);
    const expected = resolveWindow(question.window, tq);
    const windowOk =
      expected === null
        ? intent.window === undefined
        : intent.window !== undefined && intent.window.from === expected.from && intent.window.to === expected.to;
    const constraintOk = intent.constraint === question.constraint;
    const recencyOk = intent.recency === question.recency;
    const anchorOk = intent.eventAnchor?.relation === question.anchor;
    score.questions += 1;
    score.window += Number(windowOk);
    score.constraint += Number(constraintOk);
    score.recency += Number(recencyOk);
    score.anchor += Number(anchorOk);
    if (windowOk && constraintOk && recencyOk && anchorOk) {
      score.all += 1;
      continue;
    }
    const describe = (
      constraint: string,
      w: { from?: number; to?: number } | null | undefined,
      r: boolean,
      a?: string,
    ) =>
      `${constraint} [${iso(w?.from)} .. ${iso(w?.to)}]${w ? '' : ' (no window)'} recency=${r}${a ? ` anchor=${a}` : ''}`;
    score.misses.push({
      q: question.q,
      tq: question.tq,
      expected: describe(question.constraint, expected, question.recency, question.anchor),
      got: describe(intent.constraint, intent.window, intent.recency, intent.eventAnchor?.relation),
    });
  }
  return score;
}

const ratio = (a: number, b: number): number => (b === 0 ? 0 : Math.round((a / b) * 1000) / 1000);

/** The sample as intake would take it (the bundled sample's 30-character floor, as `neon start` replays it). */
function sampleArticles(): { articles: Article[]; refused: number } {
  const now = Date.now();
  const articles: Article[] = [];
  let refused = 0;
  for (const line of readFileSync(SAMPLE, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      articles.push(
        normalizeArticle(parseArticleLine(JSON.parse(line)), now, { minTextChars: SUMMARY_MIN_TEXT_CHARS }),
      );
    } catch (error) {
      if (!(error instanceof IntakeRejection)) throw error;
      refused += 1;
    }
  }
  articles.sort((a, b) => a.published_at - b.published_at);
  return { articles, refused };
}

async function indexInto(
  datastore: EmbeddedDatastore,
  embedder: Embedder,
  kind: DatastoreKind,
  items: { id: string; t: number; text: string; doc: (v: Float32Array) => Record<string, unknown> }[],
): Promise<void> {
  const names = datastoreNames(kind, datastore.prefix);
  for (let i = 0; i < items.length; i += 64) {
    const batch = items.slice(i, i + 64);
    const vectors = await embedder.embed(batch.map((item) => item.text));
    batch.forEach((item, j) => {
      datastore.store({ index: monthlyIndex(names, item.t), id: item.id, document: item.doc(vectors[j]!) }, 'eval');
    });
  }
}

/**
 * - without intent: the question as written, no time words read (`timeWords: false`);
 * - with intent: `applyTimeIntent` on the request, the question as written still the query text;
 * - with intent and topic: the same, searching for the question without its time words;
 * - service: what `Retriever.search` does by itself (it applies the intent and dates event anchors
 *   with a lookup of its own).
 */
type Variant = 'without intent' | 'with intent' | 'with intent and topic' | 'service';
const VARIANTS: Variant[] = ['without intent', 'with intent', 'with intent and topic', 'service'];
const STRATEGIES: Strategy[] = ['tempralm', 'generic'];
const STORES: Store[] = ['chunks', 'interactions'];

interface RtpCell {
  references: number;
  precise: number;
  rtp: number;
  /** Questions that got fewer than k references (a narrow window over a small sample). */
  short_questions: number;
}

async function main(): Promise<void> {
  const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Fixture;
  const parseWritten = scoreParsing(fixture.parse);
  const parseRetrieval = scoreParsing(fixture.retrieval);
  const parseHeldOut = scoreParsing(fixture.held_out);
  const misses = [...parseWritten.misses, ...parseRetrieval.misses, ...parseHeldOut.misses];
  const parseSummary = (s: ParseScore) => ({
    questions: s.questions,
    window_exact: s.window,
    constraint: s.constraint,
    recency: s.recency,
    event_anchor: s.anchor,
    all_four: s.all,
    window_accuracy: ratio(s.window, s.questions),
    constraint_accuracy: ratio(s.constraint, s.questions),
    recency_accuracy: ratio(s.recency, s.questions),
    all_accuracy: ratio(s.all, s.questions),
  });

  const started = performance.now();
  const { articles, refused } = sampleArticles();
  const { registry, chunks } = markChunkDedupe(articles);
  const extraction = await extractFromChunks(chunks, {
    extractor: new OfflineInteractionExtractor(),
    targets: ALL_ENTITIES,
    variants: ['M1', 'M2'],
  });
  const interactions = extraction.interactions;
  const embedder = await configuredEmbedder();
  const rtp: Record<string, Record<Variant, RtpCell>> = {};
  const anchored: Record<string, Record<Variant, RtpCell>> = {};
  let prepareSeconds = 0;
  try {
    const datastore = new EmbeddedDatastore('eval-question-time');
    await datastore.prepare({ model: embedder.model, dimensions: embedder.dimensions });
    const now = Date.now();
    await indexInto(
      datastore,
      embedder,
      'chunks',
      chunks.map((c) => ({ id: c.id, t: c.t, text: c.text, doc: (v) => chunkDocument(c, v, embedder.model, now) })),
    );
    await indexInto(
      datastore,
      embedder,
      'interactions',
      interactions.map((i) => ({
        id: i.id,
        t: i.t,
        text: interactionEmbeddingText(i),
        doc: (v) => interactionDocument(i, v, embedder.model, now),
      })),
    );
    prepareSeconds = (performance.now() - started) / 1000;
    console.error(
      `${articles.length} sample articles (${refused} refused), ${chunks.length} unique chunks, ` +
        `${interactions.length} interactions indexed in ${prepareSeconds.toFixed(0)} s`,
    );
    const linker = new EntityLinker(
      [...registry.entities()].map((e) => ({ id: e.id, name: e.name, aliases: e.aliases, mentions: e.mentions })),
    );
    const retriever = new Retriever({ datastore, embedder, linker });

    const precision = async (
      question: WrittenQuestion,
      strategy: Strategy,
      store: Store,
      variant: Variant,
    ): Promise<{ references: number; precise: number }> => {
      const tq = Date.parse(question.tq);
      const period = resolveWindow(question.period, tq)!;
      const intent = understandQuestionTime(question.q, tq);
      const base: SearchRequest = {
        q: question.q,
        tq,
        k: K,
        strategy,
        store,
        constraint: 'none',
        constraintAt: tq,
        windowDays: 7,
        alpha: 1,
        includeFuture: false,
        hops: 1,
      };
      const request: SearchRequest =
        variant === 'service'
          ? base
          : variant === 'without intent'
            ? { ...base, timeWords: false }
            : {
                ...applyTimeIntent(base, intent, {}),
                ...(variant === 'with intent and topic' && intent.topic !== '' ? { topic: intent.topic } : {}),
                timeWords: false,
              };
      const items = (await retriever.search(request)).items;
      const precise = items.filter((item) => {
        const t = Date.parse(item.published_at);
        return (period.from === undefined || t >= period.from) && (period.to === undefined || t <= period.to);
      }).length;
      return { references: items.length, precise };
    };

    const add = (cell: RtpCell, got: { references: number; precise: number }): void => {
      cell.references += got.references;
      cell.precise += got.precise;
      if (got.references < K) cell.short_questions += 1;
      cell.rtp = ratio(cell.precise, cell.references);
    };
    const empty = (): RtpCell => ({ references: 0, precise: 0, rtp: 0, short_questions: 0 });
    const dated = fixture.retrieval.filter((q) => q.anchor === undefined);
    const eventAnchored = fixture.retrieval.filter((q) => q.anchor !== undefined);
    for (const strategy of STRATEGIES) {
      for (const store of STORES) {
        const key = `${strategy}/${store}`;
        rtp[key] = {
          'without intent': empty(),
          'with intent': empty(),
          'with intent and topic': empty(),
          service: empty(),
        };
        anchored[key] = {
          'without intent': empty(),
          'with intent': empty(),
          'with intent and topic': empty(),
          service: empty(),
        };
        for (const variant of VARIANTS) {
          for (const question of dated) add(rtp[key][variant], await precision(question, strategy, store, variant));
          for (const question of eventAnchored) {
            add(anchored[key][variant], await precision(question, strategy, store, variant));
          }
        }
      }
    }

    const output = {
      fixture: 'eval/question-times.json',
      parse: {
        written_set: parseSummary(parseWritten),
        retrieval_set: parseSummary(parseRetrieval),
        held_out_set: parseSummary(parseHeldOut),
      },
      parse_misses: misses,
      rtp: {
        data: `samples/wikipedia-current-events-2025q1 (${articles.length} articles, ${chunks.length} unique chunks, ${interactions.length} interactions)`,
        embedder: embedder.model,
        k: K,
        questions: dated.length,
        by_strategy_and_store: rtp,
        event_anchored: {
          questions: eventAnchored.length,
          note: 'the module leaves the anchor to a lookup: only the service (which looks it up) narrows these',
          by_strategy_and_store: anchored,
        },
      },
      seconds: { prepare: Math.round(prepareSeconds), total: Math.round((performance.now() - started) / 1000) },
    };
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(new URL('question-time.json', RESULTS), `${JSON.stringify(output, null, 2)}\n`);

    const line = (label: string, s: ParseScore): string =>
      `${label.padEnd(16)} ${String(s.questions).padStart(9)}  ` +
      [s.window, s.constraint, s.recency, s.anchor, s.all]
        .map((n) => `${n} (${ratio(n, s.questions).toFixed(3)})`.padStart(13))
        .join(' ');
    console.log('parse accuracy        questions       window   constraint      recency       anchor     all four');
    console.log(line('written set', parseWritten));
    console.log(line('retrieval set', parseRetrieval));
    console.log(line('held-out set', parseHeldOut));
    console.log('');
    console.log(`reference time precision, top ${K}, ${dated.length} questions with dated periods`);
    console.log(`strategy/store          ${VARIANTS.map((v) => v.padStart(24)).join('')}`);
    for (const [key, cells] of Object.entries(rtp)) {
      console.log(
        `${key.padEnd(24)}${VARIANTS.map((v) => `${cells[v].rtp.toFixed(3)} (${cells[v].precise}/${cells[v].references})`.padStart(24)).join('')}`,
      );
    }
    console.log('');
    console.log(`event-anchored questions (${eventAnchored.length}; only the service dates the event, by a lookup):`);
    for (const [key, cells] of Object.entries(anchored)) {
      console.log(
        `${key.padEnd(24)}${VARIANTS.map((v) => `${cells[v].rtp.toFixed(3)} (${cells[v].precise}/${cells[v].references})`.padStart(24)).join('')}`,
      );
    }
    if (misses.length > 0) {
      console.log('');
      console.log('parse misses:');
      for (const miss of misses) {
        console.log(`  ${miss.q} (tq ${miss.tq})\n    expected ${miss.expected}\n    got      ${miss.got}`);
      }
    }
  } finally {
    await embedder.close();
  }
}

await main();

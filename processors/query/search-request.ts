import { z } from 'zod';
import { FUSION_MODES, type FusionMode } from './fuse-rankings.js';
import type { PassageMatch } from './passage-matches.js';

/** Which time parameters the caller gave, so the question's own time words do not override them. */
export interface ExplicitTimeParameters {
  /** The caller gave `constraint` (and its date). */
  constraint?: boolean;
  /** The caller gave a publication window. */
  window?: boolean;
  /** The caller said whether to prefer recency. */
  recency?: boolean;
}

/**
 * A retrieval request, as the HTTP API, the CLI and the Kafka request topic all take it, with the
 * bounds a public endpoint needs: bounded k, question length and windows, and dates that exist.
 */
export const STRATEGIES = ['temporal', 'generic', 'tempralm'] as const;
export const CONSTRAINTS = ['none', 'before', 'after', 'around'] as const;
export const STORES = ['interactions', 'chunks', 'both'] as const;

export type Strategy = (typeof STRATEGIES)[number];
export type TimeConstraint = (typeof CONSTRAINTS)[number];
export type Store = (typeof STORES)[number];

export const MAX_K = 100;
export const MAX_QUERY_CHARS = 512;
export const MAX_WINDOW_DAYS = 366;
/** Rounds of retrieval along the entity graph (EventRAG's multi-hop): 1 is the question alone. */
export const MAX_HOPS = 2;
/**
 * The defaults every interface (API, CLI, dashboard, Kafka requests) shares, chosen on the RealTime QA
 * evaluation (`npm run eval -- realtimeqa`; the figures are in the README).
 */
export const DEFAULT_STRATEGY: Strategy = 'tempralm';
export const DEFAULT_STORE: Store = 'chunks';
export const DEFAULT_FUSION: FusionMode = 'rrf';
/** What lexical search looks for: every word of the question, or its content words alone. */
export type LexicalWords = 'all' | 'content';
/**
 * What lexical search looks for (see `ReformulateOptions.lexicalWords`): the question's content
 * words and acronyms (`searchWords`). On RealTime QA (500 questions, 246 answerable, over chunks,
 * three runs) they put the answer in the top 5 within noise of every word (tempralm 0.789 against
 * 0.801, p = 0.25; generic 0.752 against 0.740) and in the composed answer a little more often
 * (0.634 against 0.622); at 1M synthetic chunks the BM25 search took 0.58 × the time at p50 and
 * `tempralm` 0.83 × at p95 (`bench/README.md`, run 8). The answer-sentence ranking reads every word
 * either way (`Reformulated.asked`).
 */
export const DEFAULT_LEXICAL_WORDS: LexicalWords = 'content';
/**
 * Whether reciprocal-rank fusion also ranks the candidates by their best answer sentence (see
 * `fuseRankings`). On RealTime QA (500 questions, 246 answerable, over chunks, one run) it put the
 * answer in the top 5 for 0.793 against 0.772 without it under TempRALM, and 0.752 against 0.715
 * under generic; first for 0.557 against 0.524, and 0.492 against 0.480 (README).
 */
export const DEFAULT_ANSWER_SENTENCES = true;
/**
 * Which searches over the interactions store also match each statement's passage, the chunk it
 * was extracted from (`passage-matches.ts`).
 */
export const DEFAULT_PASSAGE_MATCH: PassageMatch = 'hybrid';
/**
 * TempRALM's α: the weight of recency against relevance. On the RealTime QA evaluation 0.25, 0.5 and
 * 1 are within noise of each other (2 is worse); 1 alone also ranks every recurring-events question's
 * report first on both datastores.
 */
export const DEFAULT_ALPHA = 1;
/** Results of one article among the top k (0: no cap); see `capPerArticle`. */
export const DEFAULT_PER_ARTICLE = 0;
/**
 * Candidates each list (dense, lexical) gives the strategies that rerank (TempRALM, recency, a
 * per-article cap): `DEFAULT_RERANK_DEPTH`, or `RERANK_DEPTH_PER_RESULT` per result asked for when
 * that is more. On RealTime QA (500 questions, over chunks, one index) 20, 30, 40 and 50 put the
 * answer in the top 5 within noise of each other (0.785, 0.801, 0.780, 0.785) and 100 fewer (0.768
 * against 0.789): 30 reads a third fewer candidates than 50 for no measured loss (README).
 */
export const DEFAULT_RERANK_DEPTH = 30;
export const RERANK_DEPTH_PER_RESULT = 3;
export const MAX_PER_ARTICLE = 100;

const instant = z.union([
  z.iso.datetime({ offset: true }).transform((s) => Date.parse(s)),
  z.iso.date().transform((s) => Date.parse(`${s}T23:59:59.999Z`)),
]);

export const searchRequestSchema = z
  .object({
    q: z.string().trim().min(1, 'must not be empty').max(MAX_QUERY_CHARS, `at most ${MAX_QUERY_CHARS} characters`),
    /** Query time; a bare date means the end of that day (UTC). Default: now. */
    date: instant
      .optional()
      .describe('Query time t_q (ISO 8601; a bare date means the end of that day, UTC). Default: now.'),
    k: z.coerce.number().int().min(1).max(MAX_K).default(10),
    /**
     * tempralm over chunks by default: on 500 RealTime QA questions (246 answerable) it found the
     * answer in the top 5 more often than generic relevance alone and far more often than the
     * paper's exact-day `temporal`, which fills k with whatever the query day holds (the README has
     * the table).
     */
    strategy: z.enum(STRATEGIES).default(DEFAULT_STRATEGY),
    store: z.enum(STORES).default(DEFAULT_STORE),
    constraint: z.enum(CONSTRAINTS).default('none'),
    /** Anchor of the constraint; default the query time. */
    constraint_date: instant.optional().describe('Anchor of the constraint; default t_q.'),
    /** r of the temporal widening and the half-width of `around`. */
    window_days: z.coerce
      .number()
      .int()
      .min(0)
      .max(MAX_WINDOW_DAYS)
      .default(7)
      .describe('r of the temporal widening and half-width of "around".'),
    /** TempRALM's α (scale of the temporal score before normalisation). */
    alpha: z.coerce
      .number()
      .min(0)
      .max(1000)
      .default(DEFAULT_ALPHA)
      .describe("TempRALM's α: the weight of recency against relevance (0: relevance alone)."),
    /**
     * 2: also retrieve the events of the entities the first results connect the question to
     * (EventRAG-style multi-hop over the interaction graph), under the same time bounds.
     */
    hops: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_HOPS)
      .default(1)
      .describe(
        'Rounds of retrieval along the entity graph: 2 also brings the events of the entities the first results connect the question to (multi-hop).',
      ),
    /**
     * How lexical (BM25) and dense relevance are fused: reciprocal-rank fusion, a calibrated weighted
     * sum, or one of them alone.
     */
    fusion: z
      .enum(FUSION_MODES)
      .default(DEFAULT_FUSION)
      .describe(
        'How lexical (BM25 over text, headline and entity names) and dense relevance are fused: reciprocal-rank fusion, a weighted sum of normalised scores, or one alone.',
      ),
    /** `rrf` fusion: also rank the candidates by the best answer sentence each holds (default). */
    answer_sentences: z
      .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
      .default(DEFAULT_ANSWER_SENTENCES)
      .describe(
        'With rrf fusion, also rank the candidates by the best sentence each holds for answering the question (its words in one sentence, the verb asked about, an answer of the kind asked for); false fuses the dense and lexical rankings alone, some tens of milliseconds faster over chunks.',
      ),
    /**
     * At most this many results from one article among the k (0: no cap): the other reports of the
     * news get the places that overlapping windows and statements of one article would take.
     */
    per_article: z.coerce
      .number()
      .int()
      .min(0)
      .max(MAX_PER_ARTICLE)
      .default(DEFAULT_PER_ARTICLE)
      .describe(
        'At most this many items from one article among the k (0: no cap), so that one report does not fill the results.',
      ),
    /**
     * Read the question's own time words ("last week", "in March 2023", "the latest") as its time
     * scope and recency (default). An explicit `constraint` or `constraint_date` replaces the scope.
     */
    time_words: z
      .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
      .default(true)
      .describe(
        'Read the question\'s own time words ("last week", "in March 2023", "the latest") as its time scope and recency; an explicit constraint replaces them.',
      ),
    /** Explicitly allow documents published after the query time (never the default). */
    include_future: z
      .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
      .default(false)
      .describe('Also return documents published after t_q (never the default).'),
  })
  .strict();

export type SearchRequestInput = z.input<typeof searchRequestSchema>;

export interface SearchRequest {
  q: string;
  tq: number;
  k: number;
  strategy: Strategy;
  store: Store;
  constraint: TimeConstraint;
  constraintAt: number;
  windowDays: number;
  alpha: number;
  includeFuture: boolean;
  /** Rounds of retrieval along the entity graph; absent means 1 (the question alone). */
  hops?: number;
  /**
   * Publication window the question itself names ("in March 2023", "last week", "since January"):
   * inclusive bounds in ms, intersected with the constraint and the as-of rule. Absent: no window.
   */
  window?: { from?: number; to?: number };
  /** How lexical and dense relevance are fused; absent means the default. */
  fusion?: FusionMode;
  /** `weighted` fusion: the lexical share (absent: the default weight). */
  lexicalWeight?: number;
  /** What lexical search looks for: all the question's words or its content words (absent: the default). */
  lexicalWords?: LexicalWords;
  /** `rrf` fusion: rank the candidates by their best answer sentence too (absent: the default). */
  answerSentences?: boolean;
  /**
   * `rrf` fusion: the weight of the answer-sentence ranking, the dense and lexical ones weighing 1
   * (absent: `DEFAULT_SENTENCE_WEIGHT`).
   */
  sentenceWeight?: number;
  /**
   * Candidates read per list by the strategies that rerank (absent: `DEFAULT_RERANK_DEPTH`, or
   * `RERANK_DEPTH_PER_RESULT` per result when that is more; at least k, at most 500).
   */
  depth?: number;
  /**
   * The extractive answer leads a name question with the name most of the best sentences' sources
   * give when its sentence nearly ties the best (`corroboratedLead`); false: the best sentence
   * always leads (absent: yes).
   */
  corroborate?: boolean;
  /** Over the interactions store, which lists match the statements' passages too (absent: the default). */
  passageMatch?: PassageMatch;
  /** At most this many results of one article among the k; 0 or absent: the default. */
  perArticle?: number;
  /** Write the query date into the embedded query text (NEON's q′); absent means no. */
  dateInText?: boolean;
  /** The question without its time words, when they were understood: what is searched for. */
  topic?: string;
  /**
   * Read the question's time words (see `understand-question-time.ts`) when retrieving; absent means
   * yes. The time parameters the caller gave itself are listed in `explicit` and win.
   */
  timeWords?: boolean;
  explicit?: ExplicitTimeParameters;
  /**
   * The question asks for the latest state of things ("the latest", "current", a recurring event
   * with no year): among relevant documents, the most recent before the query time is preferred.
   */
  recency?: boolean;
}

export type ParsedSearchRequest = { ok: true; request: SearchRequest } | { ok: false; problems: string[] };

/** Validates a request (every problem listed), filling defaults; `now` is the default query time. */
export function parseSearchRequest(input: unknown, now: number): ParsedSearchRequest {
  const parsed = searchRequestSchema.safeParse(input);
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((i) => `${i.path.join('.') || 'request'}: ${i.message}`) };
  }
  const p = parsed.data;
  const tq = p.date ?? now;
  return {
    ok: true,
    request: {
      q: p.q,
      tq,
      k: p.k,
      strategy: p.strategy,
      store: p.store,
      constraint: p.constraint,
      constraintAt: p.constraint_date ?? tq,
      windowDays: p.window_days,
      alpha: p.alpha,
      includeFuture: p.include_future,
      hops: p.hops,
      fusion: p.fusion,
      answerSentences: p.answer_sentences,
      perArticle: p.per_article,
      timeWords: p.time_words,
      // `constraint=none` is every form's default, not a choice: only a constraint or its date is.
      explicit: { constraint: p.constraint !== 'none' || p.constraint_date !== undefined },
    },
  };
}

/**
 * The retrieval configurations the RealTime QA evaluation (and the judge) compare, by name: each
 * is what it changes in the search request the product would make for the question, as of the
 * question's date. Adding a configuration is one line here; `--configs a,b` picks some, `--stores`
 * the stores they run on. A configuration that names a store runs on that store only.
 */
import {
  DEFAULT_ALPHA,
  DEFAULT_STORE,
  DEFAULT_STRATEGY,
  type SearchRequest,
  type Store,
} from '../processors/query/search-request.js';

/**
 * What a configuration may set: anything of a request except the question, its time and k — the
 * strategy, store, constraint, hops, alpha, fusion, time words…
 */
export type RequestOverride = Partial<Omit<SearchRequest, 'q' | 'tq' | 'k'>>;

/** The question as asked: some configurations derive their settings from it (time words, say). */
export interface AskedQuestion {
  q: string;
  tq: number;
}

export type Configuration = RequestOverride | ((asked: AskedQuestion) => RequestOverride);

/**
 * NEON's temporal and generic retrieval, TempRALM (the product's default), META's `around`
 * constraint (the question's week: RealTime QA asks about the news of the week before its date),
 * EventRAG-style multi-hop along the entity graph on top of generic similarity.
 */
export const CONFIGURATIONS: Record<string, Configuration> = {
  // The product's defaults as the API fills them (strategy, store, α, fusion, per-article cap).
  default: { store: DEFAULT_STORE },
  temporal: { strategy: 'temporal' },
  generic: { strategy: 'generic' },
  tempralm: { strategy: 'tempralm' },
  'generic+around': { strategy: 'generic', constraint: 'around' },
  'generic+multihop': { strategy: 'generic', hops: 2 },
  // How lexical and dense relevance are fused (the default is rrf), and what lexical search looks for.
  'generic/dense': { strategy: 'generic', fusion: 'dense' },
  'generic/lexical': { strategy: 'generic', fusion: 'lexical' },
  'generic/weighted-0.3': { strategy: 'generic', fusion: 'weighted', lexicalWeight: 0.3 },
  'generic/weighted-0.5': { strategy: 'generic', fusion: 'weighted', lexicalWeight: 0.5 },
  'generic/weighted-0.7': { strategy: 'generic', fusion: 'weighted', lexicalWeight: 0.7 },
  'generic/content-words': { strategy: 'generic', lexicalWords: 'content' },
  'generic/all-words': { strategy: 'generic', lexicalWords: 'all' },
  'tempralm/content-words': { strategy: 'tempralm', lexicalWords: 'content' },
  'tempralm/all-words': { strategy: 'tempralm', lexicalWords: 'all' },
  // Reciprocal-rank fusion of the dense and lexical rankings alone, without the answer-sentence one.
  'generic/no-sentences': { strategy: 'generic', answerSentences: false },
  'tempralm/no-sentences': { strategy: 'tempralm', answerSentences: false },
  // The answer-sentence ranking's weight in the fusion (the default 1: as much as each of the other two).
  'tempralm/sentence-weight-1.5': { strategy: 'tempralm', sentenceWeight: 1.5 },
  'tempralm/sentence-weight-2': { strategy: 'tempralm', sentenceWeight: 2 },
  'tempralm/sentence-weight-3': { strategy: 'tempralm', sentenceWeight: 3 },
  // How many candidates each list gives TempRALM to rerank (the default 30 at k = 5 or 10).
  'tempralm/depth-20': { strategy: 'tempralm', depth: 20 },
  'tempralm/depth-30': { strategy: 'tempralm', depth: 30 },
  'tempralm/depth-40': { strategy: 'tempralm', depth: 40 },
  'tempralm/depth-50': { strategy: 'tempralm', depth: 50 },
  'tempralm/depth-100': { strategy: 'tempralm', depth: 100 },
  'tempralm/uncorroborated': { strategy: 'tempralm', corroborate: false },
  // Over interactions: which lists match the statements' passages too (the default: dense and lexical).
  'tempralm/passages-none': { strategy: 'tempralm', passageMatch: 'none' },
  'tempralm/passages-lexical': { strategy: 'tempralm', passageMatch: 'lexical' },
  'tempralm/passages-hybrid': { strategy: 'tempralm', passageMatch: 'hybrid' },
  'generic/passages-none': { strategy: 'generic', passageMatch: 'none' },
  // At most n results of one article among the k (the default is no cap).
  'generic/per-article-1': { strategy: 'generic', perArticle: 1 },
  'generic/per-article-2': { strategy: 'generic', perArticle: 2 },
  'generic/per-article-3': { strategy: 'generic', perArticle: 3 },
  'tempralm/per-article-1': { strategy: 'tempralm', perArticle: 1 },
  'tempralm/per-article-2': { strategy: 'tempralm', perArticle: 2 },
  'generic/per-article-2@both': { strategy: 'generic', perArticle: 2, store: 'both' },
  // The question's own time words (read by default) left unread.
  'generic/no-time-words': { strategy: 'generic', timeWords: false },
  'tempralm/no-time-words': { strategy: 'tempralm', timeWords: false },
  'tempralm/dense': { strategy: 'tempralm', fusion: 'dense' },
  // TempRALM's α: the weight of recency against relevance.
  'tempralm/alpha-0.1': { strategy: 'tempralm', alpha: 0.1 },
  'tempralm/alpha-0.25': { strategy: 'tempralm', alpha: 0.25 },
  'tempralm/alpha-0.5': { strategy: 'tempralm', alpha: 0.5 },
  'tempralm/alpha-1': { strategy: 'tempralm', alpha: 1 },
  'tempralm/alpha-2': { strategy: 'tempralm', alpha: 2 },
  // NEON's q′: the date written into the embedded question (run with --interaction-text dated to
  // write it into the interactions' embedded texts too).
  'generic/dated-query': { strategy: 'generic', dateInText: true },
  'tempralm/dated-query': { strategy: 'tempralm', dateInText: true },
  // The strategies over both stores at once, without running every variant on both.
  'temporal@both': { strategy: 'temporal', store: 'both' },
  'generic@both': { strategy: 'generic', store: 'both' },
  'tempralm@both': { strategy: 'tempralm', store: 'both' },
};

/**
 * The request for one question under one configuration: the product's defaults (as the API fills
 * them), then the override. A constraint or window the configuration sets is the caller's own, as
 * for an API request that names one: the question's time words then do not replace it.
 */
export function requestFor(configuration: Configuration, asked: AskedQuestion, k: number, store: Store): SearchRequest {
  const override = typeof configuration === 'function' ? configuration(asked) : configuration;
  const request: SearchRequest = {
    q: asked.q,
    tq: asked.tq,
    k,
    strategy: DEFAULT_STRATEGY,
    store,
    constraint: 'none',
    constraintAt: asked.tq,
    windowDays: 7,
    alpha: DEFAULT_ALPHA,
    includeFuture: false,
    hops: 1,
    ...override,
  };
  request.explicit ??= {
    constraint: request.constraint !== 'none',
    ...(override.window === undefined ? {} : { window: true }),
    ...(override.recency === undefined ? {} : { recency: true }),
  };
  return request;
}

/** The store a configuration is fixed to, if it names one (one given as a function should not). */
export function fixedStore(configuration: Configuration): Store | undefined {
  return typeof configuration === 'function' ? undefined : configuration.store;
}

/**
 * The configurations named in a comma-separated list (all of them when absent), or the names that
 * are not known.
 */
export function selectConfigurations(
  list: string | undefined,
  known: Record<string, Configuration> = CONFIGURATIONS,
): { ok: true; selected: [string, Configuration][] } | { ok: false; unknown: string[] } {
  if (list === undefined) return { ok: true, selected: Object.entries(known) };
  const names = list
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const unknown = names.filter((n) => !(n in known));
  if (unknown.length > 0 || names.length === 0) return { ok: false, unknown };
  return { ok: true, selected: [...new Set(names)].map((n) => [n, known[n]!]) };
}

/**
 * The retrieval strategies of the seed papers, as pure functions over candidates that carry a fused
 * relevance (dense similarity and BM25, see `fuse-rankings.ts`; the search that fetches them is in
 * `streams/retrieval/retrieve.ts`):
 *
 * - **temporal** (NEON §2.2): the top-k whose day equals t_q's day; when fewer than k, widened ring
 *   by ring to ±r days (closest day first, then relevance);
 * - **generic** (NEON §2.2): the top-k by relevance alone;
 * - **tempralm** (TempRALM eq. 2–5): relevance plus α times the temporal score τ = 1 / (t_q − t_d),
 *   τ standardised over the candidates and put on the relevance scores' scale, so α is the weight of
 *   time against relevance (0: relevance alone; 1: as much spread as relevance has); documents after
 *   t_q score −∞ (dropped);
 * - **latest** (the question's recency intent, META): the most recent of the candidates that cover
 *   the question's content words about as well as the best-covering candidate does, then the rest by
 *   relevance — "who won the final?" gets the last final before t_q, not a later first-round report
 *   nor an older final.
 *
 * META's time constraints (before / after / around / none), the question's own window and the as-of
 * rule are filters, applied before any strategy (see `timeFilter`).
 */
import { allTerms, contentTerms } from './question-terms.js';
import type { SearchRequest } from './search-request.js';

export const DAY_MS = 86_400_000;
/** TempRALM divides by t_q − t_d: a document from the query's own hour is not infinitely close. */
const MIN_GAP_DAYS = 1 / 24;

export interface Candidate {
  id: string;
  /** Relevance to the question: the fused dense and lexical score (larger is better). */
  score: number;
  /**
   * The candidate's time for every temporal ranking here: for a story reported more than once (a
   * deduplicated chunk), its latest report that the request's time bounds allow (as of t_q, inside
   * the window), so one reported again yesterday is as recent as yesterday (see `retrieve.ts`).
   */
  published_at: number;
}

export interface Ranked<C extends Candidate> {
  candidate: C;
  /** The strategy's final score (what the ranking sorts on, after ring order for temporal). */
  score: number;
  /** The candidate's relevance, before time entered the score. */
  relevance: number;
  /** TempRALM's normalised temporal score. */
  temporal?: number;
  /** |day(t_d) − day(t_q)| for temporal. */
  dayDistance?: number;
}

export function dayOf(t: number): number {
  return Math.floor(t / DAY_MS);
}

/**
 * Inclusive [from, to] bounds on the publication time implied by the constraint and the as-of rule.
 * A document passes them when any one of its report times does.
 */
export function timeFilter(request: SearchRequest): { from?: number; to?: number } {
  let from: number | undefined;
  let to: number | undefined = request.includeFuture ? undefined : request.tq;
  const anchor = request.constraintAt;
  const tighten = (f?: number, t?: number): void => {
    if (f !== undefined) from = from === undefined ? f : Math.max(from, f);
    if (t !== undefined) to = to === undefined ? t : Math.min(to, t);
  };
  switch (request.constraint) {
    case 'before':
      tighten(undefined, anchor);
      break;
    case 'after':
      tighten(anchor, undefined);
      break;
    case 'around':
      tighten(anchor - request.windowDays * DAY_MS, anchor + request.windowDays * DAY_MS);
      break;
    case 'none':
      break;
  }
  tighten(request.window?.from, request.window?.to);
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}

export function rankGeneric<C extends Candidate>(candidates: readonly C[], k: number): Ranked<C>[] {
  return [...candidates]
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
    .slice(0, k)
    .map((candidate) => ({ candidate, score: candidate.score, relevance: candidate.score }));
}

/**
 * The first k of a ranking with at most `perArticle` results of any one article (0: no cap), order
 * kept. One article's overlapping chunks, or the many statements drawn from it, otherwise fill the
 * top k with one report; the cap gives the places to other reports. When too few articles compete,
 * the held-back results fill the remaining places in their order, so a cap never shortens the list.
 * A result with no article counts as its own.
 */
export function capPerArticle<R>(
  ranked: readonly R[],
  articleOf: (result: R) => string | undefined,
  perArticle: number,
  k: number,
): R[] {
  if (perArticle <= 0) return ranked.slice(0, k);
  const kept: R[] = [];
  const heldBack: R[] = [];
  const taken = new Map<string, number>();
  for (const result of ranked) {
    if (kept.length === k) break;
    const article = articleOf(result);
    const count = article === undefined ? 0 : (taken.get(article) ?? 0);
    if (count >= perArticle) {
      heldBack.push(result);
      continue;
    }
    if (article !== undefined) taken.set(article, count + 1);
    kept.push(result);
  }
  if (kept.length < k) {
    // Keep the ranking's own order among everything returned.
    const chosen = new Set<R>([...kept, ...heldBack.slice(0, k - kept.length)]);
    return ranked.filter((r) => chosen.has(r));
  }
  return kept;
}

/** Ring order (closest day first), similarity within a ring. */
export function rankTemporal<C extends Candidate>(candidates: readonly C[], tq: number, k: number): Ranked<C>[] {
  const day = dayOf(tq);
  return [...candidates]
    .map((candidate) => ({ candidate, distance: Math.abs(dayOf(candidate.published_at) - day) }))
    .sort(
      (a, b) =>
        a.distance - b.distance ||
        b.candidate.score - a.candidate.score ||
        a.candidate.id.localeCompare(b.candidate.id),
    )
    .slice(0, k)
    .map(({ candidate, distance }) => ({
      candidate,
      score: candidate.score,
      relevance: candidate.score,
      dayDistance: distance,
    }));
}

function meanStd(values: readonly number[]): { mean: number; std: number } {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length;
  return { mean, std: Math.sqrt(variance) };
}

export function rankTempralm<C extends Candidate>(
  candidates: readonly C[],
  tq: number,
  k: number,
  alpha: number,
  includeFuture = false,
): Ranked<C>[] {
  // Eq. 5: a document from after the query time can not be retrieved.
  const eligible = includeFuture ? [...candidates] : candidates.filter((c) => c.published_at <= tq);
  if (eligible.length === 0) return [];
  const tau = eligible.map((c) => 1 / Math.max(Math.abs(tq - c.published_at) / DAY_MS, MIN_GAP_DAYS));
  const relevance = meanStd(eligible.map((c) => c.score));
  const temporal = meanStd(tau);
  return eligible
    .map((candidate, i) => {
      // Eq. 3–4: τ standardised over the candidates and put on the relevance scores' scale. α weighs
      // it: written as the paper does (α inside τ before standardising) it would cancel out.
      const standardised = temporal.std > 0 ? ((tau[i]! - temporal.mean) / temporal.std) * relevance.std : 0;
      const weighted = alpha * standardised;
      return { candidate, score: candidate.score + weighted, relevance: candidate.score, temporal: weighted };
    })
    .sort((a, b) => b.score - a.score || a.candidate.id.localeCompare(b.candidate.id))
    .slice(0, k);
}

/** What `rankLatest` reads of a candidate besides its relevance and time: the words it can be matched on. */
export interface WordedCandidate extends Candidate {
  /** Headline and text (an interaction: its statement). */
  words: string;
}

/** Sentence ends, for judging coverage (a rough cut is enough: it only bounds where words may match). */
const SENTENCE_END = /(?<=[.!?]["”’)]?)\s+(?=["“‘(]?[\p{Lu}\p{N}])|\n+/u;

/**
 * The stems of each span of two consecutive sentences of a text: the words a question's words must be
 * found together in. A report that says "X won the women's final … the men's final is on Sunday"
 * covers "who won the men's final?" only across sentences; the men's final's own report covers it in
 * one.
 */
function spansOf(text: string): Set<string>[] {
  const sentences = text.split(SENTENCE_END).filter((s) => s.trim() !== '');
  if (sentences.length <= 2) return [allTerms(text)];
  return sentences.slice(0, -1).map((sentence, i) => allTerms(`${sentence} ${sentences[i + 1]!}`));
}

/** How far below the best coverage a candidate may fall and still count as matching the question. */
export const LATEST_COVERAGE_SLACK = 0.1;
/**
 * Reports of one occurrence of an event come within days of each other (a final and the next day's
 * coverage of it); matching reports further apart belong to different occurrences.
 */
export const OCCURRENCE_DAYS = 3;

/**
 * The latest occurrence of what the question asks about first. A candidate's coverage is the share
 * of the question's content words (stemmed) that two consecutive sentences of it contain together,
 * each word weighted by its rarity among the candidates (IDF), so the word that tells this event from its neighbours ("final" among reports of
 * one tournament) counts most. The candidates whose coverage is within `LATEST_COVERAGE_SLACK` of the
 * best are the matching ones; they are grouped into occurrences (newest first; a report more than
 * `OCCURRENCE_DAYS` older than its group's newest starts an older group), and within an occurrence
 * ordered by relevance — the report of the asked-for event, not of the one the next day that
 * mentions it. The others follow by relevance. Nothing after t_q.
 */
export function rankLatest<C extends WordedCandidate>(
  candidates: readonly C[],
  question: string,
  tq: number,
  k: number,
  includeFuture = false,
): Ranked<C>[] {
  const eligible = includeFuture ? [...candidates] : candidates.filter((c) => c.published_at <= tq);
  if (eligible.length === 0) return [];
  const asked = [...new Set(contentTerms(question))];
  const spans = eligible.map((c) => spansOf(c.words));
  // Rarity among the candidates, counting a candidate once whichever of its spans has the word.
  const weight = new Map(
    asked.map((w) => {
      const n = spans.filter((of) => of.some((words) => words.has(w))).length;
      return [w, Math.log(1 + (eligible.length - n + 0.5) / (n + 0.5))];
    }),
  );
  const total = [...weight.values()].reduce((a, b) => a + b, 0);
  const covered = (words: Set<string>): number =>
    total === 0 ? 1 : asked.reduce((sum, w) => sum + (words.has(w) ? weight.get(w)! : 0), 0) / total;
  const coverage = spans.map((of) => Math.max(...of.map(covered)));
  const best = Math.max(...coverage);
  const matching = eligible
    .filter((_, i) => coverage[i]! >= best - LATEST_COVERAGE_SLACK)
    .sort((a, b) => b.published_at - a.published_at || b.score - a.score || a.id.localeCompare(b.id));
  const occurrences: C[][] = [];
  for (const candidate of matching) {
    const current = occurrences.at(-1);
    if (current && current[0]!.published_at - candidate.published_at <= OCCURRENCE_DAYS * DAY_MS)
      current.push(candidate);
    else occurrences.push([candidate]);
  }
  const byRelevance = (a: C, b: C): number => b.score - a.score || a.id.localeCompare(b.id);
  const chosen = new Set<C>(matching);
  const ordered = [
    ...occurrences.flatMap((group) => group.sort(byRelevance)),
    ...eligible.filter((c) => !chosen.has(c)).sort(byRelevance),
  ];
  return ordered.slice(0, k).map((candidate) => ({ candidate, score: candidate.score, relevance: candidate.score }));
}

/**
 * The retrieval strategies of the seed papers, as pure functions over candidates (the search that
 * fetches them is in `service/retrieve.ts`):
 *
 * - **temporal** (NEON §2.2): the top-k whose day equals t_q's day; when fewer than k, widened ring
 *   by ring to ±r days (closest day first, then similarity);
 * - **generic** (NEON §2.2): the top-k by similarity of q′ alone;
 * - **tempralm** (TempRALM eq. 2–5): semantic score plus τ = α / (t_q − t_d), τ normalised to the
 *   candidates' semantic-score mean and std; documents after t_q score −∞ (dropped).
 *
 * META's time constraints (before / after / around / none) and the as-of rule are filters, applied
 * before any strategy (see `timeFilter`).
 */
import type { SearchRequest } from './search-request.js';

export const DAY_MS = 86_400_000;
/** TempRALM divides by t_q − t_d: a document from the query's own hour is not infinitely close. */
const MIN_GAP_DAYS = 1 / 24;

export interface Candidate {
  id: string;
  /** The engine's similarity score for q′ (cosine, mapped to [0, 1] by Elasticsearch). */
  score: number;
  published_at: number;
}

export interface Ranked<C extends Candidate> {
  candidate: C;
  /** The strategy's final score (what the ranking sorts on, after ring order for temporal). */
  score: number;
  semantic: number;
  /** TempRALM's normalised temporal score. */
  temporal?: number;
  /** |day(t_d) − day(t_q)| for temporal. */
  dayDistance?: number;
}

export function dayOf(t: number): number {
  return Math.floor(t / DAY_MS);
}

/** Inclusive [from, to] bounds on the publication time implied by the constraint and the as-of rule. */
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
    .map((candidate) => ({ candidate, score: candidate.score, semantic: candidate.score }));
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
      semantic: candidate.score,
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
  const tau = eligible.map((c) => alpha / Math.max(Math.abs(tq - c.published_at) / DAY_MS, MIN_GAP_DAYS));
  const semantic = meanStd(eligible.map((c) => c.score));
  const temporal = meanStd(tau);
  return eligible
    .map((candidate, i) => {
      // Eq. 3–4: τ standardised over the candidates, then put on the semantic scores' scale.
      const normalised =
        temporal.std > 0 ? ((tau[i]! - temporal.mean) / temporal.std) * semantic.std + semantic.mean : semantic.mean;
      return { candidate, score: candidate.score + normalised, semantic: candidate.score, temporal: normalised };
    })
    .sort((a, b) => b.score - a.score || a.candidate.id.localeCompare(b.candidate.id))
    .slice(0, k);
}

/**
 * Answer reranking over retrieved items (the strategies compared in "Evaluating Answer Reranking
 * Strategies in Time-sensitive Question Answering", seed 004): given candidate answers (a
 * multiple-choice question's choices) and the items a retrieval returned, pick one candidate from
 * where and when the items mention it.
 *
 * - `most_common`: the candidate mentioned most often in the items;
 * - `retrieval`: the candidate mentioned by the best-ranked item that mentions any;
 * - `hybrid`: (1 − μ) · retrieval + μ · reader, where retrieval is the best min–max-normalised score
 *   of an item mentioning the candidate and, with no reader model here, the reader's confidence is
 *   the candidate's share of all mentions (lexical support);
 * - `most_recent`: the candidate mentioned by the most recently published item;
 * - `temporal_grouping_<week|month>`: mentions binned by the item's publication week or month, the
 *   bin with the most mentions chosen, and within it the best `hybrid` candidate (the paper's
 *   temporal grouping, at the granularities of a news week rather than a 20-year archive's years).
 *
 * An exact tie between the best candidates gives no answer: choosing the first listed would reward
 * the order of the choices, not the evidence. Pure functions; no I/O.
 */
import { DAY_MS } from '../processors/query/rank-candidates.js';

export const ANSWER_RERANKERS = [
  'most_common',
  'retrieval',
  'hybrid',
  'most_recent',
  'temporal_grouping_week',
  'temporal_grouping_month',
] as const;
export type AnswerReranker = (typeof ANSWER_RERANKERS)[number];

/** What a reranker reads of a retrieved item. */
export interface AnswerEvidence {
  text: string;
  score: number;
  /** Publication time, ms since the epoch. */
  publishedAt: number;
}

/** One mention of a candidate answer in one retrieved item. */
export interface AnswerMention {
  candidate: number;
  /** The item's position in the retrieval's ranking (0 = best). */
  rank: number;
  /** The item's score, min–max normalised over the items (1 when all are equal). */
  score: number;
  publishedAt: number;
}

/**
 * Every mention of every candidate in the items: `normalise` is applied to both sides, and each
 * occurrence of a candidate's text counts once (an item naming it twice supports it twice).
 */
export function findAnswerMentions(
  candidates: readonly string[],
  items: readonly AnswerEvidence[],
  normalise: (text: string) => string,
): AnswerMention[] {
  const scores = items.map((item) => item.score);
  const low = Math.min(...scores);
  const spread = Math.max(...scores) - low;
  const needles = candidates.map(normalise);
  const mentions: AnswerMention[] = [];
  items.forEach((item, rank) => {
    const text = normalise(item.text);
    const score = spread > 0 ? (item.score - low) / spread : 1;
    needles.forEach((needle, candidate) => {
      if (needle === '') return;
      const times = text.split(needle).length - 1;
      for (let i = 0; i < times; i++) mentions.push({ candidate, rank, score, publishedAt: item.publishedAt });
    });
  });
  return mentions;
}

/** The index of the single best value, or undefined when there is none or two share the best. */
function argmaxUnique(values: readonly number[]): number | undefined {
  let best: number | undefined;
  let tied = false;
  for (const [i, value] of values.entries()) {
    if (!(value > 0)) continue;
    if (best === undefined || value > values[best]!) {
      best = i;
      tied = false;
    } else if (value === values[best]) {
      tied = true;
    }
  }
  return tied ? undefined : best;
}

function hybridScores(candidateCount: number, mentions: readonly AnswerMention[], mu: number): number[] {
  const retrieval = new Array<number>(candidateCount).fill(0);
  const support = new Array<number>(candidateCount).fill(0);
  for (const m of mentions) {
    // A candidate mentioned only by the lowest-scored item still outranks one never mentioned.
    retrieval[m.candidate] = Math.max(retrieval[m.candidate]!, m.score, Number.EPSILON);
    support[m.candidate]! += 1 / mentions.length;
  }
  return retrieval.map((r, i) => (support[i]! > 0 ? (1 - mu) * r + mu * support[i]! : 0));
}

function bucketOf(t: number, granularity: 'week' | 'month'): number {
  if (granularity === 'week') return Math.floor(t / (7 * DAY_MS));
  const d = new Date(t);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
}

/**
 * The chosen candidate's index by the given reranker, or undefined when no candidate is mentioned
 * or the best are tied. `mu` weighs the reader side of `hybrid` (the paper's best: 0.5).
 */
export function rerankAnswers(
  reranker: AnswerReranker,
  candidateCount: number,
  mentions: readonly AnswerMention[],
  mu = 0.5,
): number | undefined {
  if (mentions.length === 0) return undefined;
  switch (reranker) {
    case 'most_common': {
      const counts = new Array<number>(candidateCount).fill(0);
      for (const m of mentions) counts[m.candidate]! += 1;
      return argmaxUnique(counts);
    }
    case 'retrieval': {
      const best = Math.min(...mentions.map((m) => m.rank));
      const atBest = new Set(mentions.filter((m) => m.rank === best).map((m) => m.candidate));
      return atBest.size === 1 ? [...atBest][0] : undefined;
    }
    case 'hybrid':
      return argmaxUnique(hybridScores(candidateCount, mentions, mu));
    case 'most_recent': {
      const newest = Math.max(...mentions.map((m) => m.publishedAt));
      const atNewest = new Set(mentions.filter((m) => m.publishedAt === newest).map((m) => m.candidate));
      return atNewest.size === 1 ? [...atNewest][0] : undefined;
    }
    case 'temporal_grouping_week':
    case 'temporal_grouping_month': {
      const granularity = reranker === 'temporal_grouping_week' ? 'week' : 'month';
      const bins = new Map<number, AnswerMention[]>();
      for (const m of mentions) {
        const key = bucketOf(m.publishedAt, granularity);
        bins.set(key, [...(bins.get(key) ?? []), m]);
      }
      const sizes = [...bins.values()].map((b) => b.length);
      const largest = Math.max(...sizes);
      const densest = [...bins.values()].filter((b) => b.length === largest);
      if (densest.length > 1) return undefined;
      return argmaxUnique(hybridScores(candidateCount, densest[0]!, mu));
    }
  }
}

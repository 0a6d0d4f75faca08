/**
 * Hybrid relevance: one ranking from a dense (kNN) list and a lexical (BM25) list of the same
 * search, under the same filter. Dense similarity finds paraphrases; BM25 finds the exact words a
 * question turns on ("final" vs "first round", a name, a number), which dense similarity of short
 * news texts blurs. Two ways of fusing them, compared on the evaluation:
 *
 * - `rrf` — reciprocal-rank fusion (Cormack et al. 2009): Σ 1 / (K + rank) over the lists a
 *   document is in. Needs no calibration of the two scores' scales.
 * - `weighted` — a calibrated weighted sum: (1 − w) · dense + w · lexical, where the dense score
 *   (cosine, as (1 + cos) / 2) is min–max normalised over the dense list and BM25 is divided by
 *   the best BM25 of the lexical list; a document missing from a list gets 0 for it.
 *
 * `rrf` also fuses a third list when one is given: the candidates ranked by the best sentence each
 * holds for answering the question (`rankItemsByAnswerSentence`), a reader's opinion of where the
 * answer is. Dense similarity and BM25 score a five-sentence chunk as a whole; the answer is one
 * sentence of it, so a chunk whose one sentence states the fact asked about ranks above one that
 * spreads the question's words over its scene.
 *
 * `dense` and `lexical` take one list alone (for comparison). Pure; no I/O.
 */
export const FUSION_MODES = ['rrf', 'weighted', 'dense', 'lexical'] as const;
export type FusionMode = (typeof FUSION_MODES)[number];

/**
 * RRF's rank constant: 60 in the original paper and in Elasticsearch's and OpenSearch's defaults.
 * A smaller K puts the answer first more often on RealTime QA (500 questions, 246 answerable, over
 * chunks: K = 10 put it first for 8 more questions and 1 fewer under tempralm, the top 5 within
 * noise), but at K ≤ 30 a 2020 semifinal's report outranks the final's in the recurring-events
 * test over interactions, so 60 stays.
 */
export const RRF_RANK_CONSTANT = 60;
/**
 * RRF weight of the answer-sentence ranking (the dense and lexical ones weigh 1). On RealTime QA
 * (500 questions, over chunks) 1.5 and 3 (one run) and 2 (three runs) put the answer in the top 5
 * no more often than 1 (1.5: ±0; 2: +0.004, −0.004, +0.004; 3: −0.016); 2 puts it first a little
 * more often (+0.016, +0.012, +0.008); and at 2 the men's final report, which names the women's
 * champion too, outranks the women's final's in the recurring-events test over both stores: the
 * reader's opinion counts as much as each of the other two.
 */
export const DEFAULT_SENTENCE_WEIGHT = 1;
/** Share of the lexical score in the weighted sum (chosen on the evaluation). */
export const DEFAULT_LEXICAL_WEIGHT = 0.5;

export interface ListedDocument {
  id: string;
  score: number;
}

export interface FusedScore {
  /** What the strategies rank on: the fused relevance (larger is better; scale depends on the mode). */
  relevance: number;
  /** The dense score, (1 + cos) / 2, when the document was in the dense list. */
  dense?: number;
  /** The BM25 score, when the document was in the lexical list. */
  lexical?: number;
  /** The best answer sentence's score, when the document was in the answer-sentence list. */
  sentence?: number;
}

export interface FusionOptions {
  mode: FusionMode;
  /** `weighted` only: the lexical share w in [0, 1]. */
  lexicalWeight?: number;
  /** `rrf` only: the rank constant K. */
  rankConstant?: number;
  /** `rrf` only: the weight of the answer-sentence list (the other two weigh 1). Default `DEFAULT_SENTENCE_WEIGHT`. */
  sentenceWeight?: number;
}

/**
 * Fuses two best-first lists into relevance per document id. Lists may overlap; a document that is
 * in neither is absent. The order of each list is its rank (ties keep the list's order). `answerSentences`
 * (`rrf` only) ranks documents of the two lists again, by their best answer sentence: it adds to
 * their relevance and brings in no document of its own.
 */
export function fuseRankings(
  dense: readonly ListedDocument[],
  lexical: readonly ListedDocument[],
  options: FusionOptions,
  answerSentences: readonly ListedDocument[] = [],
): Map<string, FusedScore> {
  const fused = new Map<string, FusedScore>();
  const entry = (id: string): FusedScore => {
    let known = fused.get(id);
    if (!known) {
      known = { relevance: 0 };
      fused.set(id, known);
    }
    return known;
  };
  const useDense = options.mode !== 'lexical';
  const useLexical = options.mode !== 'dense';
  if (useDense) for (const d of dense) entry(d.id).dense ??= d.score;
  if (useLexical) for (const d of lexical) entry(d.id).lexical ??= d.score;

  switch (options.mode) {
    case 'dense':
      for (const f of fused.values()) f.relevance = f.dense ?? 0;
      break;
    case 'lexical':
      for (const f of fused.values()) f.relevance = f.lexical ?? 0;
      break;
    case 'rrf': {
      const k = options.rankConstant ?? RRF_RANK_CONSTANT;
      const add = (list: readonly ListedDocument[], weight = 1): void => {
        const seen = new Set<string>();
        let rank = 0;
        for (const d of list) {
          if (seen.has(d.id)) continue;
          seen.add(d.id);
          rank += 1;
          entry(d.id).relevance += weight / (k + rank);
        }
      };
      add(dense);
      add(lexical);
      const listed = answerSentences.filter((d) => fused.has(d.id));
      for (const d of listed) fused.get(d.id)!.sentence ??= d.score;
      add(listed, options.sentenceWeight ?? DEFAULT_SENTENCE_WEIGHT);
      break;
    }
    case 'weighted': {
      const w = options.lexicalWeight ?? DEFAULT_LEXICAL_WEIGHT;
      if (!(w >= 0 && w <= 1)) throw new RangeError(`lexicalWeight must be in [0, 1], got ${w}`);
      const denseScores = dense.map((d) => d.score);
      const low = Math.min(...denseScores);
      const high = Math.max(...denseScores);
      const bestLexical = Math.max(0, ...lexical.map((d) => d.score));
      for (const f of fused.values()) {
        // One dense score alone (or all equal) carries no spread to normalise: it counts fully.
        const d = f.dense === undefined ? 0 : high > low ? (f.dense - low) / (high - low) : 1;
        const l = f.lexical === undefined || bestLexical === 0 ? 0 : f.lexical / bestLexical;
        f.relevance = (1 - w) * d + w * l;
      }
      break;
    }
  }
  return fused;
}

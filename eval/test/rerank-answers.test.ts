import { describe, expect, it } from 'vitest';
import { ANSWER_RERANKERS, findAnswerMentions, rerankAnswers, type AnswerEvidence } from '../rerank-answers.js';

const CHOICES = ['Serena Williams', 'Naomi Osaka', 'Coco Gauff', 'Iga Swiatek'];
const [OSAKA, GAUFF, SWIATEK] = [1, 2, 3];
const lower = (text: string): string => text.toLowerCase();

// Best first, as a retrieval returns them. Aug 3–5 share a 7-day bin (day 19572 of the epoch is a
// multiple of 7); Aug 30 and Aug 31 fall in two later ones.
const ITEMS: AnswerEvidence[] = [
  {
    text: 'Coco Gauff beat the champion; Coco Gauff will play the final.',
    score: 0.9,
    publishedAt: Date.UTC(2023, 7, 30, 12),
  },
  { text: 'Iga Swiatek won in Warsaw.', score: 0.8, publishedAt: Date.UTC(2023, 7, 3) },
  { text: 'Iga Swiatek and Naomi Osaka trained together.', score: 0.7, publishedAt: Date.UTC(2023, 7, 4) },
  { text: 'IGA SWIATEK leads the rankings.', score: 0.5, publishedAt: Date.UTC(2023, 7, 5) },
  { text: 'Naomi Osaka returns next year.', score: 0.4, publishedAt: Date.UTC(2023, 7, 31, 10) },
];

describe('answer reranking (seed 004)', () => {
  const mentions = findAnswerMentions(CHOICES, ITEMS, lower);

  it('finds every mention with its rank, normalised score and time', () => {
    expect(mentions.map((m) => [m.candidate, m.rank, Math.round(m.score * 100) / 100])).toEqual([
      [GAUFF, 0, 1],
      [GAUFF, 0, 1],
      [SWIATEK, 1, 0.8],
      [OSAKA, 2, 0.6],
      [SWIATEK, 2, 0.6],
      [SWIATEK, 3, 0.2],
      [OSAKA, 4, 0],
    ]);
  });

  it('each reranker reads the evidence its own way', () => {
    const chosen = Object.fromEntries(ANSWER_RERANKERS.map((r) => [r, rerankAnswers(r, CHOICES.length, mentions)]));
    expect(chosen).toEqual({
      most_common: SWIATEK, // three mentions
      retrieval: GAUFF, // the best-ranked item
      hybrid: GAUFF, // 0.5 · 1 + 0.5 · 2/7 beats 0.5 · 0.8 + 0.5 · 3/7
      most_recent: OSAKA, // Aug 31
      temporal_grouping_week: SWIATEK, // the week of Aug 3 holds 4 of the 7 mentions
      temporal_grouping_month: GAUFF, // one month: the hybrid choice
    });
  });

  it('weighs the reader side by μ', () => {
    expect(rerankAnswers('hybrid', CHOICES.length, mentions, 0)).toBe(GAUFF);
    expect(rerankAnswers('hybrid', CHOICES.length, mentions, 1)).toBe(SWIATEK);
  });

  it('gives no answer without evidence or on an exact tie, whatever the order of the choices', () => {
    for (const reranker of ANSWER_RERANKERS) expect(rerankAnswers(reranker, 4, [])).toBeUndefined();
    const tie = findAnswerMentions(
      CHOICES,
      [{ text: 'Naomi Osaka against Coco Gauff', score: 0.5, publishedAt: Date.UTC(2023, 7, 1) }],
      lower,
    );
    for (const reranker of ANSWER_RERANKERS) expect(rerankAnswers(reranker, 4, tie), reranker).toBeUndefined();
    // Two bins of equal size: no densest week.
    const split = findAnswerMentions(
      CHOICES,
      [
        { text: 'Naomi Osaka', score: 0.9, publishedAt: Date.UTC(2023, 0, 5) },
        { text: 'Coco Gauff', score: 0.1, publishedAt: Date.UTC(2023, 5, 5) },
      ],
      lower,
    );
    expect(rerankAnswers('temporal_grouping_week', 4, split)).toBeUndefined();
    expect(rerankAnswers('retrieval', 4, split)).toBe(OSAKA);
  });

  it('ignores empty choices and treats equal scores as equally good', () => {
    const found = findAnswerMentions(
      ['', 'Osaka'],
      [
        { text: 'Osaka', score: 0.3, publishedAt: 0 },
        { text: 'osaka again', score: 0.3, publishedAt: 0 },
      ],
      lower,
    );
    expect(found.map((m) => [m.candidate, m.score])).toEqual([
      [1, 1],
      [1, 1],
    ]);
  });
});

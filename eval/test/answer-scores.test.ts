import { describe, expect, it } from 'vitest';
import { figureValues, scoreQuestion, summarise, type ScoredItem } from '../answer-scores.js';
import type { Question } from '../realtimeqa-data.js';

const TQ = Date.parse('2022-06-10T23:59:59.999Z');
const question: Question = {
  question_id: 'q1',
  question_date: '2022/06/10',
  question_sentence: 'Which city hosted the summit?',
  choices: ['Madrid', 'Paris', 'Rome', 'Berlin'],
  answer: ['0'],
};
const item = (text: string, day = '2022-06-09', urls: string[] = []): ScoredItem => ({
  text,
  published_at: `${day}T12:00:00.000Z`,
  score: 1,
  urls,
});

describe('scoreQuestion', () => {
  it('finds the rank of the first item holding the correct choice, accents and case folded', () => {
    const items = [item('Leaders met in Paris.'), item('The summit opened in MADRID.'), item('madrid again')];
    const score = scoreQuestion({ question, tq: TQ, items, answer: 'Nothing here', k: 5, answerable: true });
    expect(score.answerRank).toBe(2);
    expect(score.answerInAnswer).toBe(false);
    expect(score.goldRank).toBeUndefined();
  });

  it('scores the answer text, gold articles by URL, and counts leaked items', () => {
    const items = [
      item('a', '2022-06-08', ['https://x.example/1']),
      item('b', '2022-06-11', ['https://gold.example/a']),
    ];
    const score = scoreQuestion({
      question,
      tq: TQ,
      items,
      answer: 'As of June 10, 2022: the summit was in Madrid [2].',
      k: 5,
      gold: new Set(['https://gold.example/a']),
      answerable: true,
    });
    expect(score).toMatchObject({
      goldRank: 2,
      answerRank: 0,
      answerInAnswer: true,
      answerInFirstLine: true,
      retrieved: 2,
      leaked: 1,
    });
    // Only the first line counts for answer_in_first_line.
    const later = scoreQuestion({
      question,
      tq: TQ,
      items,
      answer: 'The summit opened [1] (June 8, 2022).\nAlso, as of June 10, 2022:\nJune 9, 2022: in Madrid [2].',
      k: 5,
      answerable: true,
    });
    expect(later).toMatchObject({ answerInAnswer: true, answerInFirstLine: false });
  });

  it("counts the answer in an interaction's passage as retrieved, and apart in its statement alone", () => {
    const items = [{ ...item('The leaders met.'), passage: 'The summit opened in Madrid.' }, item('Madrid hosted it.')];
    const score = scoreQuestion({ question, tq: TQ, items, answer: '', k: 5, answerable: true });
    expect(score).toMatchObject({ answerRank: 1, textRank: 2 });
    const values = figureValues([score], 1);
    expect(values['answer_recall@1']).toEqual([1]);
    expect(values['statement_recall@1']).toEqual([0]);
  });

  it('does not count, in answer_recall_not_quiz, an item that asks the question itself', () => {
    const quiz = item('News quiz. 3. Which city hosted the summit? Madrid Paris Rome Berlin');
    const asLongQuestion = {
      ...question,
      question_sentence: `${'Leaders of forty countries met this week. '.repeat(2)}Which city hosted the summit?`,
    };
    const longQuiz = item('forty countries met this week. Which city hosted the summit? Madrid Paris Rome Berlin');
    const report = item('The summit opened in Madrid on Tuesday.');
    const score = scoreQuestion({ question, tq: TQ, items: [quiz, report], answer: '', k: 5, answerable: true });
    expect(score).toMatchObject({ answerRank: 1, notQuizRank: 2 });
    const long = scoreQuestion({
      question: asLongQuestion,
      tq: TQ,
      items: [longQuiz],
      answer: '',
      k: 5,
      answerable: true,
    });
    expect(long).toMatchObject({ answerRank: 1, notQuizRank: 0 });
    expect(figureValues([score, long], 1)['answer_recall@1_not_quiz']).toEqual([0, 0]);
    expect(figureValues([score, long], 5)['answer_recall@5_not_quiz']).toEqual([1, 0]);
  });

  it('leaves the answer figures out for a question that is not answerable', () => {
    const score = scoreQuestion({
      question,
      tq: TQ,
      items: [item('Madrid')],
      answer: 'Madrid',
      k: 5,
      answerable: false,
    });
    expect(score.answerRank).toBeUndefined();
    expect(score.answerInAnswer).toBeUndefined();
  });

  it('picks the multiple choice from the top k only', () => {
    const items = [item('Paris Paris'), item('Madrid'), item('Madrid'), item('Madrid')];
    expect(scoreQuestion({ question, tq: TQ, items, answer: '', k: 1, answerable: true }).mcCorrect.most_common).toBe(
      false,
    );
    expect(scoreQuestion({ question, tq: TQ, items, answer: '', k: 4, answerable: true }).mcCorrect.most_common).toBe(
      true,
    );
  });
});

describe('figures', () => {
  const ranks = [1, 3, 0, 7, 12];
  const scores = ranks.map((answerRank, i) => ({
    answerRank,
    answerInAnswer: i % 2 === 0,
    retrieved: 10,
    leaked: 0,
    ...(i < 2 ? { goldRank: i === 0 ? 4 : 6 } : {}),
    mcCorrect: {
      most_common: i === 0,
      retrieval: false,
      hybrid: false,
      most_recent: false,
      temporal_grouping_week: false,
      temporal_grouping_month: false,
    },
  }));

  it('reads recall@1, recall@k and MRR@10 off the ranks of one deep retrieval', () => {
    const values = figureValues(scores, 5);
    expect(values['recall@1']).toEqual([1, 0, 0, 0, 0]);
    expect(values['answer_recall@5']).toEqual([1, 1, 0, 0, 0]);
    // Rank 12 is beyond the depth of the reciprocal rank: 0, like no answer at all.
    expect(values['mrr@10']).toEqual([1, 1 / 3, 0, 1 / 7, 0]);
    expect(values['gold_recall@5']).toEqual([1, 0, undefined, undefined, undefined]);
    expect(values.answer_in_answer).toEqual([1, 0, 1, 0, 1]);
  });

  it('gives each figure its n and a 95% interval, and leakage over the items', () => {
    const figures = summarise(scores, 5);
    expect(figures['answer_recall@5']).toMatchObject({ value: 0.4, n: 5 });
    expect(figures['answer_recall@5']!.ci95.low).toBeCloseTo(0.1176, 3);
    expect(figures['answer_recall@5']!.ci95.high).toBeCloseTo(0.7693, 3);
    expect(figures['gold_recall@5']).toMatchObject({ value: 0.5, n: 2 });
    expect(figures['mrr@10']!.value).toBeCloseTo((1 + 1 / 3 + 1 / 7) / 5, 10);
    expect(figures['mrr@10']!.ci95.low).toBeLessThan(figures['mrr@10']!.value);
    expect(figures.mc_accuracy).toMatchObject({ value: 0.2, n: 5 });
    expect(figures.leakage).toMatchObject({ value: 0, n: 50 });
  });
});

describe('failed questions', () => {
  it('keep their place for pairing but count in no figure', () => {
    const ok = scoreQuestion({ question, tq: TQ, items: [item('Madrid')], answer: 'Madrid', k: 5, answerable: true });
    const failed = { ...ok, failed: true as const, retrieved: 0, leaked: 0 };
    const values = figureValues([ok, failed], 5);
    expect(values['answer_recall@5']).toEqual([1, undefined]);
    expect(values.mc_accuracy).toEqual([1, undefined]);
    expect(summarise([ok, failed], 5)['answer_recall@5']).toMatchObject({ value: 1, n: 1 });
  });
});

/**
 * Per-question scores of one retrieval (and the answer composed from it) on RealTime QA, and the
 * figures summed from them with their 95% intervals. Every @k figure is read off one retrieval of
 * the deepest k needed (10, or --k if deeper), by prefix. For the single-hop strategies the prefix
 * is what a shallower request returns (they rank, then cut); a two-hop retrieval is not, as it keeps
 * the first hop's best ⌈k/2⌉ before the hop's own results, so its @5 is that of a top-10 list.
 */
import { ANSWER_RERANKERS, findAnswerMentions, rerankAnswers, type AnswerReranker } from './rerank-answers.js';
import { bootstrapMeanInterval, wilsonInterval, type Interval } from '../devkit/interval-statistics.js';
import { correctChoice, normaliseText, type Question } from './realtimeqa-data.js';

/** What the scores need of a retrieved item. */
export interface ScoredItem {
  text: string;
  /** An interaction's source passage, returned with it: the answer read there counts as retrieved. */
  passage?: string | undefined;
  published_at: string;
  score: number;
  /** Canonical URLs of the articles the item came from. */
  urls: readonly string[];
}

/** Depth of the reciprocal rank. */
export const MRR_DEPTH = 10;

export interface QuestionScore {
  /** The retrieval failed even after retries (a timeout on a loaded machine): left out of every figure. */
  failed?: true;
  /** 1-based rank of the first item from a gold article; 0 when none; undefined without gold articles. */
  goldRank?: number;
  /**
   * 1-based rank of the first item containing the correct choice (in its text or its passage); 0 when
   * none; undefined when not answerable.
   */
  answerRank?: number;
  /** The same, in the item's own text only (an interaction's statement without its passage). */
  textRank?: number;
  /**
   * The same, not counting items that ask the question themselves: the weekly news quiz the question
   * comes from is in the corpus, dated before the question, and lists every choice with it.
   */
  notQuizRank?: number;
  /** The composed answer contains the correct choice; undefined when not answerable. */
  answerInAnswer?: boolean;
  /** Its first line does (the extractive answer's lead, what a reader sees first); undefined when not answerable. */
  answerInFirstLine?: boolean;
  /** The answer's lead came with the sentence it opens on (`compose-answer.ts`). */
  leadContext?: boolean;
  /** Items returned, and those published after the question time. */
  retrieved: number;
  leaked: number;
  /** Each answer reranker picked the correct choice from the top k. */
  mcCorrect: Record<AnswerReranker, boolean>;
}

/** An asking sentence shorter than this is too common a phrase to mark a quiz page ("Who won?"). */
const QUIZ_SENTENCE_MIN = 25;

/**
 * What marks an item that asks the question itself (the quiz page, not evidence): the question's
 * asking sentence (its last), or the whole question when that sentence is short; a chunk may begin
 * in the middle of a question's scene-setting.
 */
function quizMarker(question: Question): string {
  const asked = normaliseText(question.question_sentence);
  const last = asked.split(/(?<=[.?!])\s+/).at(-1) ?? asked;
  return last.length >= QUIZ_SENTENCE_MIN ? last : asked;
}

function firstRank(items: readonly ScoredItem[], matches: (item: ScoredItem) => boolean): number {
  const index = items.findIndex(matches);
  return index < 0 ? 0 : index + 1;
}

/**
 * The scores of one question: `items` as retrieved (deepest k), `answer` the composed answer's
 * text, `k` the depth of the multiple-choice pick, `gold` the question's gold URLs, `answerable`
 * whether its answer occurs in some document published by its date.
 */
export function scoreQuestion(input: {
  question: Question;
  tq: number;
  items: readonly ScoredItem[];
  answer: string;
  /** The lead quoted the sentence before it as its context. */
  leadContext?: boolean;
  k: number;
  gold?: ReadonlySet<string> | undefined;
  answerable: boolean;
}): QuestionScore {
  const { question, tq, items, k } = input;
  const choice = correctChoice(question);
  const wanted = choice === undefined ? '' : normaliseText(choice);
  const contains = (text: string) => wanted !== '' && normaliseText(text).includes(wanted);
  const top = items.slice(0, k);
  const mentions = findAnswerMentions(
    question.choices,
    top.map((item) => ({ text: item.text, score: item.score, publishedAt: Date.parse(item.published_at) })),
    normaliseText,
  );
  const correct = Number(question.answer[0]);
  const score: QuestionScore = {
    retrieved: items.length,
    leaked: items.filter((item) => Date.parse(item.published_at) > tq).length,
    mcCorrect: Object.fromEntries(
      ANSWER_RERANKERS.map((r) => [r, rerankAnswers(r, question.choices.length, mentions) === correct]),
    ) as Record<AnswerReranker, boolean>,
  };
  if (input.leadContext) score.leadContext = true;
  const gold = input.gold;
  if (gold !== undefined) score.goldRank = firstRank(items, (item) => item.urls.some((url) => gold.has(url)));
  if (input.answerable) {
    score.answerRank = firstRank(items, (item) => contains(item.text) || contains(item.passage ?? ''));
    score.textRank = firstRank(items, (item) => contains(item.text));
    const marker = quizMarker(question);
    const asksTheQuestion = (item: ScoredItem) =>
      marker !== '' && normaliseText(`${item.text}\n${item.passage ?? ''}`).includes(marker);
    score.notQuizRank = firstRank(
      items,
      (item) => (contains(item.text) || contains(item.passage ?? '')) && !asksTheQuestion(item),
    );
    score.answerInAnswer = contains(input.answer);
    score.answerInFirstLine = contains(input.answer.split('\n')[0] ?? '');
  }
  return score;
}

export interface Figure {
  value: number;
  n: number;
  ci95: Interval;
}

function proportion(hits: number, n: number): Figure {
  return { value: n === 0 ? 0 : hits / n, n, ci95: wilsonInterval(hits, n) };
}

/**
 * Per-question values of each figure over the questions it applies to (binary 0/1 except the
 * reciprocal rank), in question order, so that two configurations can be compared pairwise.
 */
export function figureValues(all: readonly QuestionScore[], k: number): Record<string, (number | undefined)[]> {
  // A failed question keeps its place (pairs stay aligned) but has no value in any figure.
  const scores = all.map((s) =>
    s.failed
      ? {
          ...s,
          goldRank: undefined,
          answerRank: undefined,
          textRank: undefined,
          notQuizRank: undefined,
          answerInAnswer: undefined,
          answerInFirstLine: undefined,
        }
      : s,
  );
  const counted = (i: number, value: number) => (all[i]!.failed ? undefined : value);
  const hit = (rank: number | undefined, depth: number) =>
    rank === undefined ? undefined : rank >= 1 && rank <= depth ? 1 : 0;
  const values: Record<string, (number | undefined)[]> = {
    [`gold_recall@${k}`]: scores.map((s) => hit(s.goldRank, k)),
    'recall@1': scores.map((s) => hit(s.answerRank, 1)),
    [`answer_recall@${k}`]: scores.map((s) => hit(s.answerRank, k)),
    // Differs from answer_recall only for interactions: their statements alone, passages unread.
    [`statement_recall@${k}`]: scores.map((s) => hit(s.textRank, k)),
    // What answer_recall would be without the quiz pages that ask the question with its choices.
    [`answer_recall@${k}_not_quiz`]: scores.map((s) => hit(s.notQuizRank, k)),
    [`mrr@${MRR_DEPTH}`]: scores.map((s) =>
      s.answerRank === undefined ? undefined : s.answerRank >= 1 && s.answerRank <= MRR_DEPTH ? 1 / s.answerRank : 0,
    ),
    answer_in_answer: scores.map((s) => (s.answerInAnswer === undefined ? undefined : s.answerInAnswer ? 1 : 0)),
    answer_in_first_line: scores.map((s) =>
      s.answerInFirstLine === undefined ? undefined : s.answerInFirstLine ? 1 : 0,
    ),
    mc_accuracy: scores.map((s, i) => counted(i, s.mcCorrect.most_common ? 1 : 0)),
  };
  for (const r of ANSWER_RERANKERS) {
    if (r !== 'most_common') values[`mc_accuracy_${r}`] = scores.map((s, i) => counted(i, s.mcCorrect[r] ? 1 : 0));
  }
  return values;
}

/** Each figure with its n and 95% interval (Wilson for proportions, bootstrap for the reciprocal rank), and leakage. */
export function summarise(scores: readonly QuestionScore[], k: number): Record<string, Figure> {
  const figures: Record<string, Figure> = {};
  for (const [name, values] of Object.entries(figureValues(scores, k))) {
    const applicable = values.filter((v): v is number => v !== undefined);
    if (name.startsWith('mrr@')) {
      const mean = applicable.length === 0 ? 0 : applicable.reduce((a, b) => a + b, 0) / applicable.length;
      figures[name] = { value: mean, n: applicable.length, ci95: bootstrapMeanInterval(applicable) };
    } else {
      figures[name] = proportion(applicable.filter((v) => v === 1).length, applicable.length);
    }
  }
  const retrieved = scores.reduce((sum, s) => sum + s.retrieved, 0);
  figures.leakage = proportion(
    scores.reduce((sum, s) => sum + s.leaked, 0),
    retrieved,
  );
  return figures;
}

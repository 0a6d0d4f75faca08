/**
 * NEON's LLM judge (seed 000, "Evaluation" and Table A4): an answer to a date-stamped news question
 * is rated for helpfulness, relevance and faithfulness, each in a separate call (so one rating does
 * not colour another), on a 3-point Likert scale 0–2, the model replying `{"rating", "reason"}`.
 * The prompts are the paper's zero-shot templates (its few-shot examples were never published), with
 * the relevance template's garbled output format written as the other two have it.
 *
 * Models sometimes answer outside the scale (the paper saw 3, 5 and 9) or not in JSON: such replies
 * are refused, not clamped, and counted, so that a mean is never moved by a rating the scale does
 * not have. A rating given as a JSON string ("2") or with the object wrapped in prose or a code
 * fence is read; anything else is malformed.
 */
import { ChatModelError, type ChatModel } from '../processors/extract/chat-model.js';
import { spellDate } from '../processors/query/reformulate-query.js';
import { bootstrapMeanInterval, type Interval } from '../devkit/interval-statistics.js';

export const ATTRIBUTES = ['helpfulness', 'relevance', 'faithfulness'] as const;
export type Attribute = (typeof ATTRIBUTES)[number];
export const RATINGS = [0, 1, 2] as const;

const TASK =
  "You are presented with a user query and an AI assistant's response. The query is focused on a specific " +
  'entity, pertains to the news domain, and is date-stamped.';
const OUTPUT = (what: string) =>
  '## Output format\nThe output should be the following JSON format: {"rating": <numerical_rating>, ' +
  `"reason": <short_reasoning>}, mentioning the numerical rating, as well as a short and concise reasoning for the ${what} rating.`;

const CRITERIA: Record<Attribute, { intro: string; criterion: string }> = {
  helpfulness: {
    intro: "evaluate the AI assistant's response for its usefulness",
    criterion:
      '## Helpfulness Criterion\n' +
      'Rating 2: The response is very helpful and provides the information expected for the user query. It ' +
      'includes mentions of additional named entities (such as people, locations, events, etc.) beyond the ' +
      "primary entity in the query and aligns completely with user's intent.\n" +
      "Rating 1: The response is somewhat helpful but fails to fully provide the information expected for the user's " +
      'query. It can nevertheless serve to continue the conversation with the user or provides pointers to where ' +
      'the information can be found.\n' +
      'Rating 0: The response is not helpful and provides no information for the query.',
  },
  relevance: {
    intro: "evaluate the AI assistant's response for its relevance",
    criterion:
      '## Relevance Criterion\n' +
      'Rating 2: The response is completely relevant with accurate details and provides the information for the ' +
      'query date.\n' +
      "Rating 1: The response contains some relevant information up to the specified date, and is more or less aligned with the user's intent.\n" +
      'Rating 0: The response is incorrect and provides no information for the query date.',
  },
  faithfulness: {
    intro: "evaluate the AI assistant's response for its reliability",
    criterion:
      '## Faithfulness Criterion\n' +
      'Rating 2: The response is perfectly reliable and grounded based on the supporting passages given below. ' +
      'All the information from the supporting passages is used in the response to answer the user query.\n' +
      'Rating 1: The response partially uses the supporting passages given below but has additional information ' +
      'which may be incorrect or unreliable.\n' +
      'Rating 0: The response is completely unreliable and does not depend on the supporting passages.',
  },
};

/** What is judged: the question as asked on its date, the answer, and the passages it was given. */
export interface JudgedAnswer {
  question: string;
  /** The question's time (ms); the query is stamped with its date. */
  tq: number;
  response: string;
  /** The retrieved items the answer was composed from (faithfulness only), with their dates. */
  passages: readonly { text: string; published_at: string }[];
}

/** The prompt for one attribute (one user message, as the paper's templates are written). */
export function judgePrompt(attribute: Attribute, answer: JudgedAnswer): string {
  const { intro, criterion } = CRITERIA[attribute];
  const query = `${answer.question} (asked on ${spellDate(answer.tq)})`;
  const passages = answer.passages
    .map((p, i) => `[${i + 1}] (${spellDate(Date.parse(p.published_at))}) ${p.text.replace(/\s+/g, ' ').trim()}`)
    .join('\n');
  return [
    `## Task Description\n${TASK} Your task is to ${intro}, using a 3-point Likert scale. The criteria for rating are detailed below.`,
    criterion,
    OUTPUT(attribute),
    '## Input to be rated',
    `User query: ${query}`,
    ...(attribute === 'faithfulness' ? [`Supporting passages:\n${passages}`] : []),
    `AI assistant's response: ${answer.response}`,
  ].join('\n\n');
}

export type ParsedRating =
  | { kind: 'rating'; rating: 0 | 1 | 2; reason: string }
  /** A number, but not 0, 1 or 2. */
  | { kind: 'out_of_range'; value: number }
  /** No JSON object with a numeric rating in the reply. */
  | { kind: 'malformed' };

/** The first balanced `{…}` of a reply (models wrap the object in prose or a code fence). */
function firstObject(reply: string): string | undefined {
  const start = reply.indexOf('{');
  if (start < 0) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < reply.length; i += 1) {
    const c = reply[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth += 1;
    else if (c === '}' && --depth === 0) return reply.slice(start, i + 1);
  }
  return undefined;
}

export function parseRating(reply: string): ParsedRating {
  const object = firstObject(reply);
  if (object === undefined) return { kind: 'malformed' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(object);
  } catch {
    return { kind: 'malformed' };
  }
  if (typeof parsed !== 'object' || parsed === null) return { kind: 'malformed' };
  const record = parsed as Record<string, unknown>;
  const raw = record.rating;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(value)) return { kind: 'malformed' };
  if (value !== 0 && value !== 1 && value !== 2) return { kind: 'out_of_range', value };
  return { kind: 'rating', rating: value, reason: typeof record.reason === 'string' ? record.reason : '' };
}

export type JudgeOutcome = ParsedRating | { kind: 'failed'; code: string };

/** Rates one answer on one attribute: one call, the reply parsed; an endpoint failure is an outcome too. */
export async function judgeAttribute(
  chat: ChatModel,
  attribute: Attribute,
  answer: JudgedAnswer,
): Promise<JudgeOutcome> {
  try {
    const completion = await chat.complete({
      messages: [{ role: 'user', content: judgePrompt(attribute, answer) }],
      maxTokens: 300,
      temperature: 0,
      json: true,
      purpose: 'judge',
    });
    return parseRating(completion.text);
  } catch (error) {
    if (error instanceof ChatModelError) return { kind: 'failed', code: error.code };
    throw error;
  }
}

/** Rates one answer on every attribute (three separate calls, at once). */
export async function judgeAnswer(chat: ChatModel, answer: JudgedAnswer): Promise<Record<Attribute, JudgeOutcome>> {
  const outcomes = await Promise.all(ATTRIBUTES.map((attribute) => judgeAttribute(chat, attribute, answer)));
  return Object.fromEntries(ATTRIBUTES.map((a, i) => [a, outcomes[i]!])) as Record<Attribute, JudgeOutcome>;
}

export interface AttributeSummary {
  /** Mean of the valid ratings, and its bootstrap 95% interval. */
  mean: number;
  ci95: Interval;
  /** Valid ratings. */
  n: number;
  distribution: Record<'0' | '1' | '2', number>;
  out_of_range: number;
  /** The out-of-range values seen, with how often. */
  out_of_range_values: Record<string, number>;
  malformed: number;
  failed: number;
}

export function summariseAttribute(outcomes: readonly JudgeOutcome[]): AttributeSummary {
  const ratings: number[] = outcomes.flatMap((o) => (o.kind === 'rating' ? [o.rating] : []));
  const outOfRange: Record<string, number> = {};
  for (const o of outcomes)
    if (o.kind === 'out_of_range') outOfRange[String(o.value)] = (outOfRange[String(o.value)] ?? 0) + 1;
  return {
    mean: ratings.length === 0 ? 0 : ratings.reduce((a, b) => a + b, 0) / ratings.length,
    ci95: bootstrapMeanInterval(ratings),
    n: ratings.length,
    distribution: {
      '0': ratings.filter((r) => r === 0).length,
      '1': ratings.filter((r) => r === 1).length,
      '2': ratings.filter((r) => r === 2).length,
    },
    out_of_range: outcomes.filter((o) => o.kind === 'out_of_range').length,
    out_of_range_values: outOfRange,
    malformed: outcomes.filter((o) => o.kind === 'malformed').length,
    failed: outcomes.filter((o) => o.kind === 'failed').length,
  };
}

/** What the judge needs configured, for the message given when it is not. */
export const JUDGE_NEEDS_ENDPOINT =
  'the judge needs an OpenAI-compatible chat endpoint, configured as for the product: set NEON_LLM_URL ' +
  '(and NEON_LLM_MODEL) for a server such as vLLM, Ollama or llama.cpp, or NEON_LLM_KEY (or OPENAI_API_KEY) ' +
  'for api.openai.com (NEON_LLM_MODEL optional, default gpt-4o-mini); see processors/extract/llm-config.ts. Nothing was run.';

import { ChatModelError, type ChatModel } from '../../processors/extract/chat-model.js';
import {
  answerPrompt,
  citedAnswer,
  extractiveAnswer,
  type AnswerDisagreement,
  type AnswerItem,
  type AnswerLead,
  type Citation,
} from '../../processors/query/compose-answer.js';
import type { SearchRequest } from '../../processors/query/search-request.js';
import type { RetrievalResult, RetrievedItem, Retriever } from './retrieve.js';

export interface AnswerResult extends RetrievalResult {
  answer: string;
  citations: Citation[];
  /** The extractive answer's leading sentence (the item it cites, and the name it gives first); null otherwise. */
  lead: AnswerLead | null;
  /** Sources of the extractive answer that report one event with different facts; absent when none do. */
  disagreements?: AnswerDisagreement[];
  /** The model that wrote the answer; null for the extractive answer. */
  model: string | null;
  /** Why an LLM answer was not given although a model is configured (it failed), if so. */
  fallback?: string;
}

/** What the extractive answer reads of an item: its text and time, and the names and headline around it. */
function answerItem(item: RetrievedItem): AnswerItem {
  const names =
    item.kind === 'chunk'
      ? (item.entity_names ?? [])
      : [item.subject?.name, item.object?.name].filter((n): n is string => n !== undefined && n !== '');
  return { ...item, ...(names.length > 0 ? { entities: names } : {}) };
}

/** How many retrieved items go into the LLM prompt (the rest are returned, not sent). */
const PROMPT_ITEMS = 10;

/**
 * NEON §2.3: retrieve, then answer with citations — with the configured LLM, or extractively without
 * one. If the LLM fails (budget spent, endpoint down) the extractive answer is given instead and
 * `fallback` says why: a question is never left without an answer because a paid service is away.
 */
export async function answerQuestion(
  retriever: Retriever,
  request: SearchRequest,
  chat?: ChatModel,
): Promise<AnswerResult> {
  const retrieval = await retriever.search(request);
  const started = performance.now();
  const items = retrieval.items;
  const corroboration = request.corroborate === undefined ? {} : { corroborate: request.corroborate };
  const finish = (answer: Omit<AnswerResult, keyof RetrievalResult>): AnswerResult => ({
    ...retrieval,
    ...answer,
    timings_ms: { ...retrieval.timings_ms, answer: Math.round((performance.now() - started) * 100) / 100 },
  });
  if (chat === undefined || items.length === 0) {
    return finish({
      ...extractiveAnswer(request.q, request.tq, items.map(answerItem), undefined, corroboration),
      model: null,
    });
  }
  const used = items.slice(0, PROMPT_ITEMS);
  try {
    const completion = await chat.complete({
      messages: answerPrompt(request.q, request.tq, used),
      maxTokens: 400,
      temperature: 0,
      purpose: 'answer',
    });
    return finish({ ...citedAnswer(completion.text, used), model: completion.model });
  } catch (error) {
    if (!(error instanceof ChatModelError)) throw error;
    return finish({
      ...extractiveAnswer(request.q, request.tq, items.map(answerItem), undefined, corroboration),
      model: null,
      fallback: error.code,
    });
  }
}

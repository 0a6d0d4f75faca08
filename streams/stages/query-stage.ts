import type { ChatModel } from '../../processors/extract/chat-model.js';
import {
  DEFAULT_ALPHA,
  MAX_HOPS,
  MAX_K,
  MAX_QUERY_CHARS,
  MAX_WINDOW_DAYS,
  type SearchRequest,
} from '../../processors/query/search-request.js';
import type { Answer, Query } from '../../schemas/records.generated.js';
import { answerQuestion } from '../retrieval/answer-question.js';
import { RetrievalTimeout } from '../datastore/datastore.js';
import type { Retriever } from '../retrieval/retrieve.js';
import { KafkaSink } from '../kafka/kafka-sink.js';
import { stageDecoder, topicRecord } from '../runtime/record-codec.js';
import { startStage, stderrLogger, type RunningStage } from '../runtime/run-stage.js';
import { StageError } from '../runtime/stage-error.js';
import { TOPICS } from '../pipeline/topics.js';
import type { Transport } from '../runtime/transport.js';
import type { StageBindingOptions } from '../pipeline/pipeline-topics.js';

export interface QueryStageOptions extends Omit<StageBindingOptions, 'topics'> {
  retriever: Retriever;
  chat?: ChatModel;
  queriesTopic?: string;
  answersTopic?: string;
  deadLetterTopic?: string;
  defaultWindowDays?: number;
  now?: () => number;
}

/** A Query record as the retrieval request the HTTP API would build, with the same bounds. */
export function searchRequestOf(query: Query, defaultWindowDays = 7): SearchRequest {
  const problems: string[] = [];
  if (query.q.trim().length === 0 || query.q.length > MAX_QUERY_CHARS) {
    problems.push(`q must be 1 to ${MAX_QUERY_CHARS} characters`);
  }
  if (query.k < 1 || query.k > MAX_K) problems.push(`k must be 1 to ${MAX_K}`);
  const windowDays = query.window_days ?? defaultWindowDays;
  if (windowDays < 0 || windowDays > MAX_WINDOW_DAYS) problems.push(`window_days must be 0 to ${MAX_WINDOW_DAYS}`);
  if (query.hops < 1 || query.hops > MAX_HOPS) problems.push(`hops must be 1 to ${MAX_HOPS}`);
  if (problems.length > 0)
    throw new StageError('processor_rejected', `query ${query.id}: ${problems.join('; ')}`, 'query');
  return {
    q: query.q.trim(),
    tq: query.t_q,
    k: query.k,
    strategy: query.strategy,
    store: query.datastore === 'INTERACTIONS' ? 'interactions' : query.datastore === 'CHUNKS' ? 'chunks' : 'both',
    constraint: query.time_constraint.toLowerCase() as SearchRequest['constraint'],
    constraintAt: query.constraint_at ?? query.t_q,
    windowDays,
    alpha: DEFAULT_ALPHA,
    includeFuture: !query.as_of_only,
    hops: query.hops,
  };
}

/**
 * `neon.queries` → retrieval and answer → `neon.answers` (keyed by the query id): the request/reply
 * pair for streaming clients. At-least-once: a redelivered query is answered again under the same
 * key (clients take the latest answer per id). Dead letters: undecodable queries and queries out of
 * bounds (`processor_rejected`). An unavailable datastore or a timeout is retried.
 */
export function startQueryStage(transport: Transport, options: QueryStageOptions): Promise<RunningStage> {
  const answers = options.answersTopic ?? TOPICS.answers;
  const now = options.now ?? Date.now;
  return startStage<Query>(transport, {
    name: 'query',
    ...(options.groupId ? { groupId: options.groupId } : {}),
    inputTopics: [options.queriesTopic ?? TOPICS.queries],
    ...(options.deadLetterTopic ? { deadLetterTopic: options.deadLetterTopic } : {}),
    decode: stageDecoder('Query'),
    // Each query is an LLM call and searches: a few at a time is plenty and keeps latency fair.
    maxInFlight: options.maxInFlight ?? 16,
    process: async ({ value: query }) => {
      const request = searchRequestOf(query, options.defaultWindowDays);
      let result;
      try {
        result = await answerQuestion(options.retriever, request, options.chat);
      } catch (error) {
        if (error instanceof RetrievalTimeout) throw new StageError('timeout', error.message, 'query');
        throw new StageError('es_unavailable', `retrieval failed: ${String(error)}`, 'query', { cause: error });
      }
      const kind = (k: 'interaction' | 'chunk') => (k === 'interaction' ? 'INTERACTION' : 'CHUNK');
      const answer: Answer = {
        query_id: query.id,
        answer: result.answer,
        citations: result.citations.map((c) => ({
          n: c.n,
          kind: kind(c.kind),
          id: c.id,
          url: c.url,
          t: Date.parse(c.published_at),
        })),
        retrieved: result.items.map((item) => ({
          id: item.id,
          kind: kind(item.kind),
          score: item.score,
          t: Date.parse(item.published_at),
        })),
        model: result.model,
        timings_ms: result.timings_ms,
        answered_at: now(),
      };
      return [{ sink: 'kafka', id: query.id, item: topicRecord(answers, 'Answer', query.id, answer) }];
    },
    sinks: { kafka: new KafkaSink(transport.producer()) },
    ...(options.metrics ? { metrics: options.metrics } : {}),
    log: options.log ?? stderrLogger,
  });
}

/**
 * NEON's two extraction variants over one interface, with an LLM behind it or not:
 *
 * - `LlmInteractionExtractor`: Figures A1/A2 through any ChatModel (the OpenAI-compatible client:
 *   retries, budget, cache, metrics). A reply is validated (strict schema) and grounded; an invalid
 *   reply is retried once with a prompt that says what was wrong, and a second invalid reply throws
 *   `ExtractionError('llm_invalid_output')`, which the stage dead-letters.
 * - `OfflineInteractionExtractor`: no LLM; M1-style statements, one per sentence of the chunk,
 *   labelled with the offline model name, so the product works end to end without a key.
 *
 * M1 stamps each tuple with its chunk's time. M2 expands each tuple over the batch's unique times
 * (the paper's R = ∪_{t∈T′} (t, NEI(s, o))), each copy citing the chunks of that time.
 *
 * Ids are made from the statement alone — variant, subject, object, text key, time — never from the
 * call that found it (which batch, which chunks, when): the same statement from another batch of the
 * pair, an early extraction of a batch or a replay is the same record, overwritten rather than added.
 * Which chunks and sources a record cites is merged over every call that found it
 * (recent-interactions.ts).
 */
import { createHash } from 'node:crypto';
import type { Chunk, ChunkEntity, Interaction, InteractionVariant } from '../../schemas/records.generated.js';
import { entityKey } from '../markup/entity-id.js';
import type { ChatMessage, ChatModel } from './chat-model.js';
import { m1Prompt, m2Prompt, repairMessages } from './extraction-prompts.js';
import {
  DEFAULT_GROUNDING,
  groundM1,
  groundM2,
  type GroundedTuple,
  type GroundingOptions,
  type RejectReason,
} from './ground-interactions.js';
import { OFFLINE_EXTRACTOR_MODEL, statementsInvolving } from './offline-extractor.js';
import { byTimeThenId } from './pair-batches.js';
import { citationUrls } from './recent-interactions.js';
import { InvalidReplyError, parseM1Reply, parseM2Reply } from './parse-extraction-reply.js';

export interface ExtractionResult {
  interactions: Interaction[];
  rejected: Partial<Record<RejectReason, number>>;
  /** Invalid replies that were retried (and then fixed). */
  repaired: number;
}

export interface InteractionExtractor {
  /** Stamped on every interaction. */
  readonly model: string;
  /** The variants it can run: the offline extractor has no M2. */
  readonly variants: readonly InteractionVariant[];
  m1(subject: ChunkEntity, chunk: Chunk): Promise<ExtractionResult>;
  m2(subject: ChunkEntity, object: ChunkEntity, batch: readonly Chunk[]): Promise<ExtractionResult>;
}

export class ExtractionError extends Error {
  override readonly name = 'ExtractionError';
  constructor(
    readonly code: 'llm_invalid_output',
    message: string,
  ) {
    super(message);
  }
}

export function interactionId(
  variant: InteractionVariant,
  subjectId: string,
  objectId: string | null,
  text: string,
  t: number,
): string {
  const key = `${variant}|${subjectId}|${objectId ?? ''}|${entityKey(text)}|${t}`;
  return `i-${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}

/** Sorted, so a record merged from several calls (recent-interactions.ts) reads the same as one. */
function articleIdsOf(chunks: readonly Chunk[]): string[] {
  const ids = new Set<string>();
  for (const chunk of chunks) {
    ids.add(chunk.article_id);
    for (const source of chunk.provenance) ids.add(source.article_id);
  }
  return [...ids].sort();
}

/** The first chunk's own article first (the link a citation shows, with no look-up of the chunk), the others sorted. */
function urlsOf(chunks: readonly Chunk[]): string[] {
  const first = chunks[0];
  const own = first?.provenance.find((p) => p.article_id === first.article_id)?.url;
  return citationUrls(
    own,
    chunks.flatMap((chunk) => chunk.provenance.map((source) => source.url)),
  );
}

function toInteraction(
  variant: InteractionVariant,
  subject: ChunkEntity,
  tuple: GroundedTuple,
  t: number,
  chunks: readonly Chunk[],
  model: string,
  extractedAt: number,
): Interaction {
  return {
    id: interactionId(variant, subject.id, tuple.object?.id ?? null, tuple.text, t),
    t,
    subject_id: subject.id,
    subject_name: subject.name,
    object_id: tuple.object?.id ?? null,
    object_name: tuple.object?.name ?? null,
    text: tuple.text,
    title: chunks[0]?.title ?? '',
    variant,
    chunk_ids: chunks.map((c) => c.id),
    article_ids: articleIdsOf(chunks),
    urls: urlsOf(chunks),
    model,
    extracted_at: extractedAt,
  };
}

/** M2's expansion: one interaction per tuple and unique time of the batch, citing that time's chunks. */
function expandOverTimes(
  subject: ChunkEntity,
  tuples: readonly GroundedTuple[],
  batch: readonly Chunk[],
  model: string,
  extractedAt: number,
): Interaction[] {
  const byTime = new Map<number, Chunk[]>();
  for (const chunk of batch) byTime.set(chunk.t, [...(byTime.get(chunk.t) ?? []), chunk]);
  const times = [...byTime.keys()].sort((a, b) => a - b);
  return tuples.flatMap((tuple) =>
    times.map((t) => toInteraction('M2', subject, tuple, t, byTime.get(t)!, model, extractedAt)),
  );
}

export interface LlmExtractorOptions {
  /** Most tuples one reply may hold (a longer list is an invalid reply). */
  maxTuples: number;
  /** Bound on generated tokens per call. */
  maxTokens: number;
  grounding: GroundingOptions;
  now: () => number;
}

export const DEFAULT_LLM_EXTRACTOR_OPTIONS: LlmExtractorOptions = {
  maxTuples: 12,
  maxTokens: 600,
  grounding: DEFAULT_GROUNDING,
  now: () => Date.now(),
};

export class LlmInteractionExtractor implements InteractionExtractor {
  readonly variants: readonly InteractionVariant[] = ['M1', 'M2'];
  private readonly options: LlmExtractorOptions;

  constructor(
    private readonly chat: ChatModel,
    options: Partial<LlmExtractorOptions> = {},
  ) {
    this.options = { ...DEFAULT_LLM_EXTRACTOR_OPTIONS, ...options };
  }

  get model(): string {
    return this.chat.model;
  }

  async m1(subject: ChunkEntity, chunk: Chunk): Promise<ExtractionResult> {
    const prompt = m1Prompt(subject.name, chunk, this.options.maxTuples);
    const { value: items, repaired } = await this.ask(prompt, 'm1', (reply) =>
      parseM1Reply(reply, this.options.maxTuples),
    );
    const grounded = groundM1(items, subject, chunk, this.options.grounding);
    const at = this.options.now();
    return {
      interactions: grounded.tuples.map((tuple) =>
        toInteraction('M1', subject, tuple, chunk.t, [chunk], this.model, at),
      ),
      rejected: grounded.rejected,
      repaired,
    };
  }

  async m2(subject: ChunkEntity, object: ChunkEntity, batch: readonly Chunk[]): Promise<ExtractionResult> {
    const sorted = [...batch].sort(byTimeThenId);
    const prompt = m2Prompt(subject.name, object.name, sorted, this.options.maxTuples);
    const { value: items, repaired } = await this.ask(prompt, 'm2', (reply) =>
      parseM2Reply(reply, this.options.maxTuples),
    );
    const grounded = groundM2(items, subject, object, sorted, this.options.grounding);
    return {
      interactions: expandOverTimes(subject, grounded.tuples, sorted, this.model, this.options.now()),
      rejected: grounded.rejected,
      repaired,
    };
  }

  /** One call, and one repair call if the reply is invalid. ChatModelErrors propagate as they are. */
  private async ask<T>(
    prompt: ChatMessage[],
    purpose: 'm1' | 'm2',
    parse: (reply: string) => T,
  ): Promise<{ value: T; repaired: number }> {
    const request = { maxTokens: this.options.maxTokens, temperature: 0, json: true, purpose };
    const first = await this.chat.complete({ ...request, messages: prompt });
    try {
      return { value: parse(first.text), repaired: 0 };
    } catch (error) {
      if (!(error instanceof InvalidReplyError)) throw error;
      const retry = await this.chat.complete({
        ...request,
        messages: repairMessages(prompt, first.text, error.message),
      });
      try {
        return { value: parse(retry.text), repaired: 1 };
      } catch (again) {
        if (!(again instanceof InvalidReplyError)) throw again;
        throw new ExtractionError('llm_invalid_output', `${purpose} reply invalid twice: ${again.message}`);
      }
    }
  }
}

export class OfflineInteractionExtractor implements InteractionExtractor {
  readonly model = OFFLINE_EXTRACTOR_MODEL;
  readonly variants: readonly InteractionVariant[] = ['M1'];

  constructor(private readonly now: () => number = () => Date.now()) {}

  /**
   * The chunk's statements `subject` takes part in, each under the subject its sentence is about:
   * asked for either entity of a link, the same record (the same id) comes out, and is written once.
   */
  m1(subject: ChunkEntity, chunk: Chunk): Promise<ExtractionResult> {
    const at = this.now();
    return Promise.resolve({
      interactions: statementsInvolving(subject.id, chunk).map((statement) =>
        toInteraction(
          'M1',
          statement.subject,
          { object: statement.object, text: statement.text },
          chunk.t,
          [chunk],
          this.model,
          at,
        ),
      ),
      rejected: {},
      repaired: 0,
    });
  }

  m2(): Promise<ExtractionResult> {
    return Promise.reject(new Error('the offline extractor has no M2: it needs an LLM'));
  }
}

/**
 * Interactions without an LLM: NEON M1-style statements taken from the marked sentences themselves,
 * so the product works end to end with no key (the embedded default) and every statement is grounded
 * by construction — its words are the chunk's words.
 *
 * One statement per sentence that states something (sentence-statement.ts): the whole sentence —
 * subject, verb, object and the qualifiers that make it true — with only asides, datelines and
 * attributions cut, attributed to the entity the sentence is about and the one it most concerns.
 * Not one cut-out per pair of entities: a sentence naming four entities is one fact, stored once;
 * the entity filter of retrieval matches an interaction by its subject or its object.
 *
 * `statementsInvolving(e, chunk)` gives the statements of the chunk e takes part in, as subject or
 * as object, each under its own subject: asked for either entity of a link, the same record comes
 * out (the same id), which the extract stage writes once. `extractOffline(s, chunk)` gives those
 * about s alone. Deterministic: the same chunk always gives the same statements, in text order.
 */
import type { Chunk } from '../../schemas/records.generated.js';
import { splitSentences } from '../markup/split-sentences.js';
import { markedTextOf } from './marked-spans.js';
import {
  DEFAULT_STATEMENT_OPTIONS,
  sentenceStatement,
  type SentenceMention,
  type SentenceStatement,
  type StatementOptions,
} from './sentence-statement.js';

/** Bumped whenever what it writes changes: /1 cut a clause per pair of entities, /2 writes a statement per sentence. */
export const OFFLINE_EXTRACTOR_MODEL = 'neon-offline-extractor/2';

export type OfflineStatement = SentenceStatement;
export type OfflineExtractorOptions = StatementOptions;

type MarkedChunk = Pick<Chunk, 'marked_text' | 'entities'>;

interface Analysed {
  /** The marked text this was worked out from: a chunk object changed since is analysed again. */
  markedText: string;
  statements: OfflineStatement[];
}

/**
 * A chunk's statements, worked out once: every target subject of a chunk is extracted from the same
 * chunk object, and tagging its sentences is nearly all of the cost.
 */
const analysed = new WeakMap<MarkedChunk, Analysed>();

/** Every statement of a chunk, in text order, each text once. */
export function offlineStatements(
  chunk: MarkedChunk,
  options: OfflineExtractorOptions = DEFAULT_STATEMENT_OPTIONS,
): OfflineStatement[] {
  const useCache = options === DEFAULT_STATEMENT_OPTIONS;
  const known = useCache ? analysed.get(chunk) : undefined;
  if (known?.markedText === chunk.marked_text) return known.statements;
  const { plain, spans } = markedTextOf(chunk);
  const statements: OfflineStatement[] = [];
  const texts = new Set<string>();
  for (const sentence of splitSentences(plain)) {
    const mentions: SentenceMention[] = [];
    for (const span of spans) {
      if (span.entity === undefined || span.start < sentence.start || span.end > sentence.end) continue;
      mentions.push({ start: span.start - sentence.start, end: span.end - sentence.start, entity: span.entity });
    }
    const statement = sentenceStatement(plain.slice(sentence.start, sentence.end), mentions, options);
    // A sentence repeated within the chunk is one statement.
    if (statement === undefined || texts.has(statement.text)) continue;
    texts.add(statement.text);
    statements.push(statement);
  }
  if (useCache) analysed.set(chunk, { markedText: chunk.marked_text, statements });
  return statements;
}

function resolvedOptions(options: Partial<OfflineExtractorOptions>): OfflineExtractorOptions {
  return Object.keys(options).length === 0 ? DEFAULT_STATEMENT_OPTIONS : { ...DEFAULT_STATEMENT_OPTIONS, ...options };
}

/** The statements of the chunk `entityId` takes part in, as their subject or as their object. */
export function statementsInvolving(
  entityId: string,
  chunk: MarkedChunk,
  options: Partial<OfflineExtractorOptions> = {},
): OfflineStatement[] {
  return offlineStatements(chunk, resolvedOptions(options)).filter(
    (s) => s.subject.id === entityId || s.object?.id === entityId,
  );
}

export interface OfflineTuple {
  objectId: string | null;
  objectName: string | null;
  text: string;
}

/** The statements of the chunk about `subjectId` (it is their subject), as tuples of an object and a text. */
export function extractOffline(
  subjectId: string,
  chunk: MarkedChunk,
  options: Partial<OfflineExtractorOptions> = {},
): OfflineTuple[] {
  return offlineStatements(chunk, resolvedOptions(options))
    .filter((s) => s.subject.id === subjectId)
    .map((s) => ({ objectId: s.object?.id ?? null, objectName: s.object?.name ?? null, text: s.text }));
}

/**
 * Markup: Article → MarkedArticle (NEON §2.1 steps 1–2). Sentences, entity mentions linked to
 * canonical registry ids, date expressions, and the text with `<e>…</e>` markup.
 *
 * Delivery: pure apart from the registry, and replay-safe — ids derive from canonical names, so
 * marking an article again yields the same ids unless the registry has since learned an alias that
 * links a short form differently, or a name a reading depends on ("Hamas militants …", "Puntland
 * forces": `EntitySpan.onlyIfKnown`). Replays do count the article again in the registry's
 * `mentions`.
 * Rejections: none. Any article, even one with empty text, yields a MarkedArticle; the only error
 * is a MarkupConfigError for invalid options, raised before any article is read.
 *
 * Only `article.text` is marked, because every offset refers to it. The title is not used: its
 * headline capitalisation ("Trump Wins Key Vote") would make every word look like a name.
 */
import type { Article, DateExpression, MarkedArticle, MentionSpan, Sentence } from '../../schemas/records.generated.js';
import { analyseText, type TextAnalysis } from './analyse-text.js';
import type { EntityRegistry } from './entity-registry.js';
import type { EntitySpan } from './recognize-entities.js';
import { renderMarkup } from './render-markup.js';
import { resolveCoreferences } from './resolve-coreferences.js';
import type { TextRange } from './split-sentences.js';

export interface MarkupOptions {
  /** Mentions kept per article, the first in text order; the rest are not marked or linked. */
  maxMentionsPerArticle: number;
}

export const DEFAULT_MARKUP_OPTIONS: Readonly<MarkupOptions> = { maxMentionsPerArticle: 1000 };

export const MARKUP_CONFIG_ERROR_CODES = ['invalid_max_mentions'] as const;
export type MarkupConfigErrorCode = (typeof MARKUP_CONFIG_ERROR_CODES)[number];

export class MarkupConfigError extends Error {
  override readonly name = 'MarkupConfigError';
  readonly retriable = false;
  constructor(
    readonly code: MarkupConfigErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Defaults filled in and values checked; throws MarkupConfigError. */
export function resolveMarkupOptions(options: Partial<MarkupOptions> = {}): MarkupOptions {
  const resolved = { ...DEFAULT_MARKUP_OPTIONS, ...options };
  if (!Number.isInteger(resolved.maxMentionsPerArticle) || resolved.maxMentionsPerArticle < 0) {
    throw new MarkupConfigError(
      'invalid_max_mentions',
      `maxMentionsPerArticle must be a non-negative integer, got ${String(resolved.maxMentionsPerArticle)}`,
    );
  }
  return resolved;
}

/**
 * `analysis` is analyseText(article.text, article.published_at), done here unless given (the stage
 * has it done on a worker thread); the rest — coreference, registry linking, markup — is quick.
 */
export function markArticle(
  article: Article,
  registry: EntityRegistry,
  options?: Partial<MarkupOptions>,
  analysis: TextAnalysis = analyseText(article.text, article.published_at),
): MarkedArticle {
  const { maxMentionsPerArticle } = resolveMarkupOptions(options);
  const text = article.text;
  const ranges = analysis.sentences;
  const sentenceOf = sentenceLocator(ranges);

  // A reading that depends on what the registry knows ("Hamas militants …") is settled here.
  const settle = (span: EntitySpan | undefined): EntitySpan | undefined => {
    if (span?.onlyIfKnown === undefined || registry.knowsName(span.onlyIfKnown.name, span.onlyIfKnown.type))
      return span;
    return settle(span.otherwise);
  };
  const spans = analysis.spans
    .map(settle)
    .filter((span): span is EntitySpan => span !== undefined && sentenceOf(span) !== undefined)
    .slice(0, maxMentionsPerArticle);
  // A nationality word joins its country's mentions ("Israeli" with "Israel"), under the country's name.
  const clusters = resolveCoreferences(spans.map((s) => ({ surface: s.name ?? s.surface, type: s.type })));
  const linked = registry.link(
    clusters.map((c) => ({ name: c.name, type: c.type, surfaces: c.surfaces })),
    article.published_at,
  );
  const entityOfMention: { id: string; type: MentionSpan['entity_type'] }[] = [];
  clusters.forEach((cluster, i) => {
    const entity = linked[i]!;
    for (const member of cluster.members) entityOfMention[member] = { id: entity.id, type: entity.type };
  });

  const mentions = spans.map((span: EntitySpan, i): MentionSpan => {
    const entity = entityOfMention[i]!;
    return {
      surface: span.surface,
      entity_id: entity.id,
      entity_type: entity.type,
      sentence_index: sentenceOf(span)!,
      start: span.start,
      end: span.end,
    };
  });

  const sentences: Sentence[] = ranges.map((r) => ({ start: r.start, end: r.end, entity_ids: [] }));
  for (const mention of mentions) {
    const ids = sentences[mention.sentence_index]!.entity_ids;
    if (!ids.includes(mention.entity_id)) ids.push(mention.entity_id);
  }

  const dates: DateExpression[] = [];
  for (const found of analysis.dates) {
    const sentence_index = sentenceOf(found);
    if (sentence_index !== undefined) dates.push({ ...found, sentence_index });
  }

  return { article, sentences, mentions, marked_text: renderMarkup(text, mentions), dates };
}

/** Index of the sentence wholly containing a range, or undefined when it straddles a boundary. */
function sentenceLocator(sentences: readonly TextRange[]): (range: TextRange) => number | undefined {
  return (range) => {
    let lo = 0;
    let hi = sentences.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = sentences[mid]!;
      if (range.start < s.start) hi = mid - 1;
      else if (range.start >= s.end) lo = mid + 1;
      else return range.end <= s.end ? mid : undefined;
    }
    return undefined;
  };
}

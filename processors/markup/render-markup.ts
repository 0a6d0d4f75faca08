/**
 * The `<e>…</e>` markup of the NEON extraction prompts.
 *
 * Escaping: article text is escaped before tags are inserted — `&` → `&amp;`, `<` → `&lt;`,
 * `>` → `&gt;` — so every `<` in the output belongs to a tag that markup put there, and text such as
 * "<e>Fake</e>" in an article can neither add nor close a mention. Quotes are left alone: the result
 * is prompt text, not an HTML attribute. `unescapeMarkup` reverses the escaping (one pass, so
 * "&amp;lt;" becomes "&lt;", not "<"); `stripMarkup` removes the tags and unescapes, giving back the
 * original text.
 */
import type { TextRange } from './split-sentences.js';

export const OPEN_TAG = '<e>';
export const CLOSE_TAG = '</e>';

export const MARKUP_ERROR_CODES = ['overlapping_spans', 'span_out_of_bounds'] as const;
export type MarkupErrorCode = (typeof MARKUP_ERROR_CODES)[number];

/** Spans that cannot be rendered: a caller's bug, never a property of the article. */
export class MarkupError extends Error {
  override readonly name = 'MarkupError';
  constructor(
    readonly code: MarkupErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const UNESCAPES: Readonly<Record<string, string>> = { '&amp;': '&', '&lt;': '<', '&gt;': '>' };

export function escapeMarkup(text: string): string {
  return text.replace(/[&<>]/g, (ch) => ESCAPES[ch] ?? ch);
}

export function unescapeMarkup(marked: string): string {
  return marked.replace(/&(?:amp|lt|gt);/g, (entity) => UNESCAPES[entity] ?? entity);
}

/** The plain text back from marked text: tags removed, then unescaped. */
export function stripMarkup(marked: string): string {
  return unescapeMarkup(marked.split(OPEN_TAG).join('').split(CLOSE_TAG).join(''));
}

/** text with each span wrapped in `<e>…</e>`; spans must not overlap and must lie within text. */
export function renderMarkup(text: string, spans: readonly TextRange[]): string {
  return renderMarkupBetween(text, spans, 0, text.length);
}

/**
 * The markup of text.slice(from, to) alone, for a window of sentences (a chunk); spans outside the
 * window are ignored, and a span must not straddle its edges.
 */
export function renderMarkupBetween(text: string, spans: readonly TextRange[], from: number, to: number): string {
  if (from < 0 || to > text.length || from > to) {
    throw new MarkupError('span_out_of_bounds', `window ${from}..${to} is outside a text of length ${text.length}`);
  }
  const inside = spans
    .filter((s) => s.end > from && s.start < to)
    .slice()
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const parts: string[] = [];
  let cursor = from;
  for (const span of inside) {
    if (span.start < from || span.end > to || span.start >= span.end) {
      throw new MarkupError('span_out_of_bounds', `span ${span.start}..${span.end} does not fit ${from}..${to}`);
    }
    if (span.start < cursor) {
      throw new MarkupError('overlapping_spans', `span ${span.start}..${span.end} overlaps the one before it`);
    }
    parts.push(
      escapeMarkup(text.slice(cursor, span.start)),
      OPEN_TAG,
      escapeMarkup(text.slice(span.start, span.end)),
      CLOSE_TAG,
    );
    cursor = span.end;
  }
  parts.push(escapeMarkup(text.slice(cursor, to)));
  return parts.join('');
}

/**
 * Cuts a marked article into overlapping windows of m sentences (NEON §2.1 step 3):
 * c = (X_1…m, E′, t), with the text, the same text with `<e>…</e>` markup, the entities E′ and the
 * article's publication time.
 *
 * Windows start every m − overlap sentences. The last window is end-aligned (it ends on the last
 * sentence and still has m sentences, overlapping its predecessor by more than `overlap`) rather
 * than a short tail of one or two sentences; an article of fewer than m sentences is one chunk.
 * A window longer than maxChunkChars is re-cut into consecutive pieces of whole sentences that fit,
 * and a single sentence longer than that (tables, lists without full stops) into pieces cut at
 * whitespace, never inside a mention. No text is dropped.
 *
 * E′ (entity_ids) lists the entities mentioned in the chunk in order of first mention, without
 * repeats; it is taken from the mention spans inside the chunk, which agree with the sentences'
 * entity_ids in a consistent record and also carry the surface and type that `entities` needs.
 *
 * Chunk ids are `${article.id}:v${article.version}:${index}`. The version is part of the id so a
 * corrected article gets a fresh, complete set: when it has fewer chunks than before, the leftover
 * ids all name the old version and can be recognised as stale, instead of a mix of current and
 * stale chunks under the same naming. The same article version always yields the same ids, so a
 * replay overwrites instead of duplicating.
 *
 * Delivery: pure and deterministic; replay-safe. Rejections ({@link ChunkingError}):
 * `invalid_options`; `invalid_sentences` (out of order, overlapping or outside the text);
 * `invalid_mentions` (out of order, overlapping, or outside the text). An article without sentences
 * yields no chunks.
 */
import type {
  Chunk,
  ChunkEntity,
  EntityType,
  MarkedArticle,
  MentionSpan,
  Sentence,
} from '../../schemas/records.generated.js';
import { countryOfNationality } from '../markup/recognize-entities.js';
import { renderMarkup } from '../markup/render-markup.js';

export interface ChunkOptions {
  /** m: sentences per chunk. Default 5 (the paper's news chunks have 5–6). */
  sentencesPerChunk: number;
  /** Sentences shared by consecutive chunks; less than m. Default 2. */
  overlap: number;
  /** Longest chunk text in UTF-16 code units; longer windows are re-cut. Default 4000. */
  maxChunkChars: number;
}

export const DEFAULT_CHUNK_OPTIONS: Readonly<ChunkOptions> = { sentencesPerChunk: 5, overlap: 2, maxChunkChars: 4000 };

/** Below this a chunk could not hold an ordinary sentence, so the limit is a mistake. */
export const MIN_CHUNK_CHARS = 80;

export const CHUNKING_ERROR_CODES = ['invalid_options', 'invalid_sentences', 'invalid_mentions'] as const;
export type ChunkingErrorCode = (typeof CHUNKING_ERROR_CODES)[number];

/** Problems reported per error; the rest are counted, so a broken article does not make a huge message. */
const MAX_LISTED_PROBLEMS = 5;

export class ChunkingError extends Error {
  override readonly name = 'ChunkingError';
  constructor(
    readonly code: ChunkingErrorCode,
    readonly problems: readonly string[],
  ) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
    const more = problems.length - listed.length;
    super(`${code}: ${listed.join('; ')}${more > 0 ? `; and ${more} more` : ''}`);
  }
}

/** Fills in defaults and checks every rule at once. */
export function resolveChunkOptions(options: Partial<ChunkOptions> = {}): ChunkOptions {
  const resolved: ChunkOptions = { ...DEFAULT_CHUNK_OPTIONS, ...options };
  const { sentencesPerChunk: m, overlap, maxChunkChars } = resolved;
  const problems: string[] = [];
  if (!Number.isInteger(m) || m < 1) problems.push(`sentencesPerChunk must be an integer ≥ 1, got ${m}`);
  if (!Number.isInteger(overlap) || overlap < 0) problems.push(`overlap must be an integer ≥ 0, got ${overlap}`);
  else if (Number.isInteger(m) && overlap >= m) {
    problems.push(`overlap (${overlap}) must be less than sentencesPerChunk (${m}), or windows would not advance`);
  }
  if (!Number.isInteger(maxChunkChars) || maxChunkChars < MIN_CHUNK_CHARS) {
    problems.push(`maxChunkChars must be an integer ≥ ${MIN_CHUNK_CHARS}, got ${maxChunkChars}`);
  }
  if (problems.length > 0) throw new ChunkingError('invalid_options', problems);
  return resolved;
}

export function chunkId(articleId: string, version: number, index: number): string {
  return `${articleId}:v${version}:${index}`;
}

/** Inclusive sentence index range of one window. */
export interface SentenceWindow {
  first: number;
  last: number;
}

/**
 * The windows over n sentences: starts 0, s, 2s, … (s = m − overlap) while a full window fits
 * before the end, then one end-aligned window [n − m, n − 1]. Every sentence is in some window.
 */
export function sentenceWindows(n: number, m: number, overlap: number): SentenceWindow[] {
  if (n <= 0) return [];
  if (n <= m) return [{ first: 0, last: n - 1 }];
  const step = m - overlap;
  const windows: SentenceWindow[] = [];
  for (let start = 0; start + m < n; start += step) windows.push({ first: start, last: start + m - 1 });
  windows.push({ first: n - m, last: n - 1 });
  return windows;
}

interface Span {
  start: number;
  end: number;
}

function validateSentences(sentences: readonly Sentence[], textLength: number): void {
  const problems: string[] = [];
  let previousEnd = 0;
  sentences.forEach((s, i) => {
    if (!(Number.isInteger(s.start) && Number.isInteger(s.end) && s.start >= 0 && s.start <= s.end)) {
      problems.push(`sentence ${i} has the impossible span [${s.start}, ${s.end})`);
    } else if (s.end > textLength) {
      problems.push(`sentence ${i} ends at ${s.end}, past the text's ${textLength} characters`);
    } else if (s.start < previousEnd) {
      problems.push(`sentence ${i} starts at ${s.start}, before the previous sentence ends (${previousEnd})`);
    }
    previousEnd = Math.max(previousEnd, s.end);
  });
  if (problems.length > 0) throw new ChunkingError('invalid_sentences', problems);
}

function validateMentions(mentions: readonly MentionSpan[], textLength: number): void {
  const problems: string[] = [];
  let previousEnd = 0;
  mentions.forEach((m, i) => {
    if (!(Number.isInteger(m.start) && Number.isInteger(m.end) && m.start >= 0 && m.start < m.end)) {
      problems.push(`mention ${i} has the impossible span [${m.start}, ${m.end})`);
    } else if (m.end > textLength) {
      problems.push(`mention ${i} ends at ${m.end}, past the text's ${textLength} characters`);
    } else if (m.start < previousEnd) {
      problems.push(`mention ${i} starts at ${m.start}, before the previous mention ends (${previousEnd})`);
    }
    previousEnd = Math.max(previousEnd, m.end);
  });
  if (problems.length > 0) throw new ChunkingError('invalid_mentions', problems);
}

/** "Karl Lagerfeld's" → "Karl Lagerfeld": the name, not the possessive form. */
function displayName(surface: string): string {
  return surface
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/['’]s?$/u, '');
}

/**
 * Name and type of every entity of the article. The MarkedArticle carries no registry names, so the
 * name is the longest surface written for it (the fullest form, "Karl Lagerfeld" over "Karl"), the
 * first one on ties, a nationality word read as the country markup linked it to ("Ukrainian" is
 * Ukraine: an alert names the country, and "Israeli" does not outlast "Israel"); the type is the
 * one most of its mentions have, the first seen on ties.
 */
function describeEntities(mentions: readonly MentionSpan[]): Map<string, ChunkEntity> {
  const names = new Map<string, string>();
  const typeCounts = new Map<string, Map<EntityType, number>>();
  for (const m of mentions) {
    const written = displayName(m.surface);
    const name = (m.entity_type === 'LOCATION' ? countryOfNationality(written) : undefined) ?? written;
    const current = names.get(m.entity_id);
    if (current === undefined || name.length > current.length) names.set(m.entity_id, name);
    let counts = typeCounts.get(m.entity_id);
    if (counts === undefined) {
      counts = new Map<EntityType, number>();
      typeCounts.set(m.entity_id, counts);
    }
    counts.set(m.entity_type, (counts.get(m.entity_type) ?? 0) + 1);
  }
  const entities = new Map<string, ChunkEntity>();
  for (const [id, name] of names) {
    let type: EntityType = 'OTHER';
    let best = 0;
    // Map iteration follows insertion order, so ">" keeps the first-seen type on ties.
    for (const [t, n] of typeCounts.get(id) ?? []) {
      if (n > best) {
        best = n;
        type = t;
      }
    }
    entities.set(id, { id, name: name === '' ? id : name, type });
  }
  return entities;
}

/** Index of the first mention starting at or after `offset` (mentions are sorted by start). */
function firstMentionFrom(mentions: readonly MentionSpan[], offset: number): number {
  let lo = 0;
  let hi = mentions.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (mentions[mid]!.start < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Pieces of [start, end) of at most max code units, cut at the last whitespace of each piece's
 * second half, else hard; never inside a mention that starts after the piece does, never between
 * the halves of a surrogate pair.
 */
function splitLongSpan(text: string, span: Span, max: number, mentions: readonly MentionSpan[]): Span[] {
  const pieces: Span[] = [];
  let pos = span.start;
  while (span.end - pos > max) {
    let cut = pos + max;
    const window = text.slice(pos + Math.floor(max / 2), cut);
    const space = window.search(/\s\S*$/u);
    if (space >= 0) cut = pos + Math.floor(max / 2) + space + 1;
    const inside = firstMentionFrom(mentions, cut) - 1;
    const mention = inside >= 0 ? mentions[inside] : undefined;
    if (mention !== undefined && mention.start < cut && mention.end > cut && mention.start > pos) cut = mention.start;
    if (isHighSurrogate(text.charCodeAt(cut - 1)) && cut - 1 > pos) cut -= 1;
    pieces.push({ start: pos, end: cut });
    pos = cut;
    while (pos < span.end && /\s/u.test(text.charAt(pos))) pos++;
  }
  if (pos < span.end) pieces.push({ start: pos, end: span.end });
  return pieces;
}

/** The window's text span, or consecutive pieces of it when it is longer than max. */
function windowSpans(
  text: string,
  sentences: readonly Sentence[],
  window: SentenceWindow,
  max: number,
  mentions: readonly MentionSpan[],
): Span[] {
  const whole = { start: sentences[window.first]!.start, end: sentences[window.last]!.end };
  if (whole.end - whole.start <= max) return [whole];
  const spans: Span[] = [];
  let i = window.first;
  while (i <= window.last) {
    const first = sentences[i]!;
    if (first.end - first.start > max) {
      spans.push(...splitLongSpan(text, first, max, mentions));
      i++;
      continue;
    }
    let j = i;
    while (j + 1 <= window.last && sentences[j + 1]!.end - first.start <= max) j++;
    spans.push({ start: first.start, end: sentences[j]!.end });
    i = j + 1;
  }
  return spans;
}

/** Spans in text order without repeats (overlapping windows re-cut alike give the same pieces). */
function distinctSpans(spans: Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || a.end - b.end);
  return sorted.filter((s, i) => {
    const previous = sorted[i - 1];
    return s.end > s.start && (previous === undefined || previous.start !== s.start || previous.end !== s.end);
  });
}

/** The article's chunks in text order, indexed from 0; none for an article without sentences. */
export function chunkArticle(marked: MarkedArticle, options: Partial<ChunkOptions> = {}): Chunk[] {
  const { sentencesPerChunk, overlap, maxChunkChars } = resolveChunkOptions(options);
  const { article, sentences, mentions } = marked;
  const text = article.text;
  validateSentences(sentences, text.length);
  validateMentions(mentions, text.length);
  const entities = describeEntities(mentions);
  const provenance = { article_id: article.id, url: article.canonical_url, source: article.source };

  const spans = distinctSpans(
    sentenceWindows(sentences.length, sentencesPerChunk, overlap).flatMap((w) =>
      windowSpans(text, sentences, w, maxChunkChars, mentions),
    ),
  );

  return spans.map((span, index): Chunk => {
    const inside: Span[] = [];
    const ids: string[] = [];
    const seen = new Set<string>();
    for (let k = firstMentionFrom(mentions, span.start); k < mentions.length; k++) {
      const m = mentions[k]!;
      if (m.start >= span.end) break;
      if (m.end > span.end) continue;
      inside.push({ start: m.start - span.start, end: m.end - span.start });
      if (!seen.has(m.entity_id)) {
        seen.add(m.entity_id);
        ids.push(m.entity_id);
      }
    }
    const chunkText = text.slice(span.start, span.end);
    return {
      id: chunkId(article.id, article.version, index),
      article_id: article.id,
      index,
      text: chunkText,
      title: article.title,
      marked_text: renderMarkup(chunkText, inside),
      entity_ids: ids,
      entities: ids.map((id) => ({ ...entities.get(id)! })),
      t: article.published_at,
      provenance: [{ ...provenance, published_at: article.published_at }],
    };
  });
}

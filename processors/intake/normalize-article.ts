/**
 * Intake's one decision: does what a source found become an Article, and which one. Every source
 * (feed poller, HTTP endpoint, JSONL and dataset replay) calls this, so all articles share the same
 * id scheme, canonical URL, text cleaning and date rules.
 *
 * Pure and deterministic given `now`: replaying the same input yields the same Article (the same
 * id, so downstream writes overwrite), which makes every source replay-safe.
 *
 * Throws IntakeRejection and nothing else for any input, with reasons: `invalid_input` (wrong
 * field types, neither text nor html, a bad supplied id or language), `invalid_url`, `oversized`
 * (html or text over the limits), `boilerplate` (an ad prompt, newsletter or consent notice,
 * paywall or error page; the kind is in the message), `no_text` (shorter than the minimum after
 * cleaning), `missing_date`, `impossible_date`.
 */
import type { Article } from '../../schemas/records.generated.js';
import { MAX_ARTICLE_TEXT_BYTES } from '../../schemas/record-size-limits.js';
import { IntakeRejection, type ArticleInput } from './article-input.js';
import { articleId, suppliedArticleId } from './article-id.js';
import { canonicalUrl, isSameSite, parseHttpUrl, siteName } from './canonical-url.js';
import { detectBoilerplate, stripBoilerplateLines } from './detect-boilerplate.js';
import { canonicalLanguageTag, extractMainText, type ExtractedPage } from './extract-main-text.js';
import {
  checkPublishTime,
  EARLIEST_PUBLISH_TIME,
  parsePublishedAt,
  publishTimeFromUrl,
  type PublishTimeOptions,
} from './publish-time.js';

export interface NormalizeOptions {
  /** Longer cleaned text is `oversized` (it would not be news but a dump). */
  maxTextChars: number;
  /**
   * Cleaned text of more UTF-8 bytes is `oversized` too: 200,000 characters of Cyrillic or CJK are
   * 400–600 KB, and the article's marked version downstream must fit a Kafka record
   * (schemas/record-size-limits).
   */
  maxTextBytes: number;
  /** Shorter cleaned text is `no_text`. */
  minTextChars: number;
  /** A larger html or text body (UTF-8 bytes) is `oversized` before any parsing work. */
  maxHtmlBytes: number;
  /** How far after `now` a publication time may lie. */
  futureToleranceMs: number;
  /** The earliest plausible publication time: 1990 for live sources, 1900 for replays of archives. */
  earliestPublishTime: number;
}

export const DEFAULT_NORMALIZE_OPTIONS: NormalizeOptions = Object.freeze({
  maxTextChars: 200_000,
  maxTextBytes: MAX_ARTICLE_TEXT_BYTES,
  minTextChars: 80,
  maxHtmlBytes: 5 * 1024 * 1024,
  futureToleranceMs: 24 * 60 * 60 * 1000,
  earliestPublishTime: EARLIEST_PUBLISH_TIME,
});

/**
 * The floor for sources whose items are one-sentence event summaries (Wikipedia's Current Events
 * portal, the bundled sample built from it): "Hamas free eight hostages, three Israelis and five Thai
 * nationals." is a whole news item at 66 characters, which the article floor of 80 would refuse
 * (46 of the 2025 Q1 portal's 1,478 items). Such a source's reader declares it for its items.
 */
export const SUMMARY_MIN_TEXT_CHARS = 30;

/** Titles longer than this are not headlines. */
export const MAX_TITLE_CHARS = 2000;
/** Publisher names longer than this are not names. */
export const MAX_SOURCE_CHARS = 200;

function invalid(message: string): IntakeRejection {
  return new IntakeRejection('invalid_input', message);
}

const OPTIONAL_STRING_FIELDS = ['title', 'text', 'html', 'source', 'id', 'language'] as const;

/**
 * The input with its field types checked: it may come from JSON and not match its declared type.
 * `null` means absent, as JSON writers often spell it.
 */
function checkShape(input: unknown): ArticleInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('input must be an object');
  const record = input as Record<string, unknown>;
  const url = record.url;
  if (url === undefined || url === null) throw new IntakeRejection('invalid_url', 'url is required');
  if (typeof url !== 'string') throw new IntakeRejection('invalid_url', 'url must be a string');
  const checked: ArticleInput = { url };
  for (const field of OPTIONAL_STRING_FIELDS) {
    const value = record[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw invalid(`${field} must be a string`);
    checked[field] = value;
  }
  const published = record.published_at;
  if (typeof published === 'string' || typeof published === 'number') checked.published_at = published;
  else if (published !== undefined && published !== null) throw invalid('published_at must be a string or a number');
  const version = record.version;
  if (typeof version === 'number' && Number.isSafeInteger(version) && version >= 1 && version < 2 ** 31) {
    checked.version = version;
  } else if (version !== undefined && version !== null) throw invalid('version must be an integer from 1');
  return checked;
}

// Lone surrogates cannot be encoded as UTF-8 (Avro strings) without silently becoming U+FFFD.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
// C0/C1 controls except \n, plus the BOM and other zero-width marks that are not text.
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\uFEFF\u200B]/g;

/**
 * NFC text with no control characters except "\n", no lone surrogates, spaces collapsed, lines
 * trimmed and at most one blank line between paragraphs. MarkedArticle offsets count UTF-16 units
 * of this string, so it is computed once here and never changed downstream.
 */
export function cleanText(text: string): string {
  return text
    .replace(/\r\n?|[\u2028\u2029\u0085]/g, '\n')
    .replace(/[\t\v\f]/g, ' ')
    .replace(LONE_SURROGATE, '\uFFFD')
    .replace(INVISIBLE, '')
    .normalize('NFC')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** A title: clean text on one line. */
export function cleanTitle(title: string): string {
  return cleanText(title).replace(/\s*\n+\s*/g, ' ');
}

function bytes(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

function pickText(input: ArticleInput, page: ExtractedPage | undefined): string {
  const given = input.text === undefined ? '' : cleanText(input.text);
  return given !== '' ? given : cleanText(page?.text ?? '');
}

function pickPublishedAt(
  input: ArticleInput,
  page: ExtractedPage | undefined,
  url: string,
  options: PublishTimeOptions,
): number {
  const given = input.published_at;
  if (given !== undefined && (typeof given === 'number' || given.trim() !== '')) {
    // An explicit but wrong date from the source is rejected rather than guessed around.
    return parsePublishedAt(given, options);
  }
  if (page?.publishedAt !== undefined) return page.publishedAt;
  const fromUrl = publishTimeFromUrl(url, options.earliest);
  if (fromUrl !== undefined) return checkPublishTime(fromUrl, options);
  if (page?.publishedAtProblem !== undefined) throw new IntakeRejection('impossible_date', page.publishedAtProblem);
  throw new IntakeRejection('missing_date', 'no publication time in the input, the page metadata or the URL');
}

function pickCanonicalUrl(url: string, page: ExtractedPage | undefined): string {
  const own = canonicalUrl(url);
  const stated = page?.canonicalUrl;
  if (stated === undefined || !isSameSite(stated, url)) return own;
  try {
    return canonicalUrl(stated);
  } catch {
    return own;
  }
}

function pickLanguage(input: ArticleInput, page: ExtractedPage | undefined): string | null {
  if (input.language !== undefined && input.language.trim() !== '') {
    const tag = canonicalLanguageTag(input.language);
    if (tag === undefined) throw invalid(`language ${JSON.stringify(input.language.slice(0, 40))} is not a BCP 47 tag`);
    return tag;
  }
  return page?.language ?? null;
}

function pickSource(input: ArticleInput, url: string): string {
  const given = input.source === undefined ? '' : cleanTitle(input.source);
  if (given.length > MAX_SOURCE_CHARS) throw invalid(`source is longer than ${MAX_SOURCE_CHARS} characters`);
  return given !== '' ? given : siteName(url);
}

function normalizeChecked(input: ArticleInput, now: number, options: NormalizeOptions): Article {
  const url = parseHttpUrl(input.url).href;
  const html = input.html;
  const rawText = input.text;
  if (html === undefined && rawText === undefined) throw invalid('either text or html is required');
  for (const [field, value] of [
    ['html', html],
    ['text', rawText],
  ] as const) {
    if (value !== undefined && (value.length > options.maxHtmlBytes || bytes(value) > options.maxHtmlBytes)) {
      throw new IntakeRejection('oversized', `${field} is larger than ${options.maxHtmlBytes} bytes`);
    }
  }
  const dateOptions: PublishTimeOptions = {
    now,
    futureToleranceMs: options.futureToleranceMs,
    earliest: options.earliestPublishTime,
  };
  const page = html === undefined || html.trim() === '' ? undefined : extractMainText(html, url, dateOptions);

  const title = cleanTitle(input.title !== undefined && input.title.trim() !== '' ? input.title : (page?.title ?? ''));
  if (title.length > MAX_TITLE_CHARS) {
    throw new IntakeRejection('oversized', `title is longer than ${MAX_TITLE_CHARS} characters`);
  }
  const extracted = pickText(input, page);
  const verdict = detectBoilerplate(title, extracted);
  if (verdict) throw new IntakeRejection('boilerplate', `${verdict.kind}: ${JSON.stringify(verdict.evidence)}`);
  const text = stripBoilerplateLines(extracted);
  if (text.length < options.minTextChars) {
    throw new IntakeRejection('no_text', `text has ${text.length} characters, fewer than ${options.minTextChars}`);
  }
  if (text.length > options.maxTextChars) {
    throw new IntakeRejection('oversized', `text has ${text.length} characters, more than ${options.maxTextChars}`);
  }
  const textBytes = Buffer.byteLength(text, 'utf8');
  if (textBytes > options.maxTextBytes) {
    throw new IntakeRejection('oversized', `text has ${textBytes} bytes in UTF-8, more than ${options.maxTextBytes}`);
  }

  const canonical = pickCanonicalUrl(url, page);
  const id = input.id !== undefined ? suppliedArticleId(input.id) : articleId(canonical);
  return {
    id,
    url,
    canonical_url: canonical,
    source: pickSource(input, url),
    title,
    text,
    published_at: pickPublishedAt(input, page, url, dateOptions),
    fetched_at: now,
    language: pickLanguage(input, page),
    version: input.version ?? 1,
  };
}

/**
 * The Article for an input found at time `now` (ms since the epoch), or an IntakeRejection.
 * Text comes from `text` when given, else from the main text of `html`; metadata the input lacks
 * (title, publication time, canonical URL, language) comes from the page, and the publication
 * time finally from the URL.
 */
export function normalizeArticle(input: ArticleInput, now: number, options?: Partial<NormalizeOptions>): Article {
  const settings: NormalizeOptions = { ...DEFAULT_NORMALIZE_OPTIONS, ...options };
  const checked = checkShape(input);
  try {
    return normalizeChecked(checked, now, settings);
  } catch (error) {
    if (error instanceof IntakeRejection) throw error;
    // A library failing on a hostile page is still a property of the input, not a crash.
    const message = error instanceof Error ? error.message : String(error);
    throw new IntakeRejection('no_text', `the page could not be processed: ${message.slice(0, 200)}`);
  }
}

/**
 * The contract between intake's sources (feed pollers, the HTTP endpoint, JSONL replay, dataset
 * loaders) and the normalisation that turns what they found into an Article or a rejection.
 */
import type { Article } from '../../schemas/records.generated.js';

/** What a source hands to normalisation. Either `text` (already plain) or `html` (a page) is given. */
export interface ArticleInput {
  url: string;
  title?: string;
  text?: string;
  html?: string;
  /** ISO 8601 string, a day such as `2022/06/17`, or ms since the epoch. */
  published_at?: string | number;
  source?: string;
  /** Supplied id; otherwise a hash of the canonical URL. */
  id?: string;
  language?: string;
  /**
   * Revision of the article under its id, from 1 (the default): a source that republishes the same
   * URL with changed text, or a correction under the same id, gives a higher one, and its chunks
   * supersede the older revision's in answers as of its `published_at` or later.
   */
  version?: number;
}

/** Why intake refused an input. Closed set: these are dead-letter reason codes and metric labels. */
export const INTAKE_REJECTION_REASONS = [
  'invalid_json',
  'invalid_input',
  'unparseable_feed',
  'invalid_utf8',
  'invalid_url',
  'no_text',
  'oversized',
  'missing_date',
  'impossible_date',
  'boilerplate',
  /** A page the entry links to is on an address the outbound policy refuses (loopback, private, …). */
  'address_refused',
] as const;
export type IntakeRejectionReason = (typeof INTAKE_REJECTION_REASONS)[number];

export class IntakeRejection extends Error {
  override readonly name = 'IntakeRejection';
  constructor(
    readonly reason: IntakeRejectionReason,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Where sources deliver. Implemented in streams/ (a producer to `news.articles` and `neon.dlq`);
 * tests use an in-memory one. `publish` resolves once the article is durably accepted.
 */
export interface ArticlePublisher {
  publish(article: Article): Promise<void>;
  /** A dead letter with the original bytes, the reason code and where the input came from. */
  reject(original: Buffer, rejection: IntakeRejection, origin: string): Promise<void>;
}

/**
 * Article ids are Kafka keys and Elasticsearch `_id`s downstream, so they are deterministic: a
 * replay or a second fetch of the same article produces the same id and overwrites instead of
 * duplicating.
 *
 * Rejection reason: `invalid_input` (a supplied id that is empty, too long or has other characters).
 */
import { createHash } from 'node:crypto';
import { IntakeRejection } from './article-input.js';

export const MAX_SUPPLIED_ID_LENGTH = 200;
const SUPPLIED_ID_PATTERN = /^[A-Za-z0-9._:-]+$/;

/**
 * `a-` + the first 16 hex digits (64 bits) of SHA-256 of the canonical URL. 64 bits keep the
 * chance of any collision below one in a million up to six million articles.
 */
export function articleId(canonicalUrl: string): string {
  return `a-${createHash('sha256').update(canonicalUrl, 'utf8').digest('hex').slice(0, 16)}`;
}

/** A source's own id, accepted as is when it is 1–200 characters of `[A-Za-z0-9._:-]`. */
export function suppliedArticleId(id: string): string {
  if (id.length === 0) throw new IntakeRejection('invalid_input', 'supplied id is empty');
  if (id.length > MAX_SUPPLIED_ID_LENGTH) {
    throw new IntakeRejection('invalid_input', `supplied id is longer than ${MAX_SUPPLIED_ID_LENGTH} characters`);
  }
  if (!SUPPLIED_ID_PATTERN.test(id)) {
    throw new IntakeRejection('invalid_input', 'supplied id may only contain letters, digits and . _ : -');
  }
  return id;
}

/**
 * Comparison keys and canonical ids for entity names. Both are pure functions of the text, so two
 * replicas that meet the same name independently derive the same id without talking to each other.
 */
import { createHash } from 'node:crypto';

const COMBINING_MARKS = /\p{M}+/gu;
const NOT_KEY_CHARACTER = /[^\p{L}\p{N}]+/gu;
const SLUG_LIMIT = 48;

/**
 * The form two surfaces must share to count as the same name: NFKD-folded without diacritics,
 * lower-cased, punctuation dropped ("U.S." = "US", "Zürich" = "Zurich", "Keller-Sutter" = "Keller
 * Sutter"), whitespace collapsed. Scripts other than Latin keep their letters.
 */
export function entityKey(surface: string): string {
  const known = recentKeys.get(surface);
  if (known !== undefined) return known;
  const key = computeEntityKey(surface);
  if (surface.length <= MEMO_MAX_SURFACE) {
    // Oldest first out: a Map iterates in insertion order.
    if (recentKeys.size >= MEMO_ENTRIES) recentKeys.delete(recentKeys.keys().next().value!);
    recentKeys.set(surface, key);
  }
  return key;
}

/**
 * Keys of recently seen surfaces. Markup, coreference and every registry merge ask for the keys of
 * the same few thousand names over and over, and Unicode normalisation is most of what linking
 * costs; bounded, so a stream of new names never grows it.
 */
const recentKeys = new Map<string, string>();
const MEMO_ENTRIES = 50_000;
const MEMO_MAX_SURFACE = 200;

function computeEntityKey(surface: string): string {
  return surface
    .normalize('NFKD')
    .replace(COMBINING_MARKS, '')
    .toLowerCase()
    .replace(/[.'’]/g, '')
    .replace(NOT_KEY_CHARACTER, ' ')
    .trim();
}

/**
 * Canonical id of the entity whose canonical name is `name`: `e-` + an ASCII slug of its key, with a
 * short hash of the key appended when the slug would lose information (letters outside ASCII, as in
 * Cyrillic or Arabic names) or is long. Names with the same key share an id, so case and diacritics
 * never split an entity.
 */
export function entityIdFor(name: string): string {
  const key = entityKey(name);
  const slug = key.replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  // eslint-disable-next-line no-control-regex -- the ASCII range is the point of the test
  const lossy = /[^\x00-\x7f]/.test(key) || slug.length === 0;
  if (!lossy && slug.length <= SLUG_LIMIT) return `e-${slug}`;
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 10);
  const head = slug.slice(0, SLUG_LIMIT).replace(/-+$/, '');
  return head.length > 0 ? `e-${head}-${hash}` : `e-${hash}`;
}

/** The key's words: what token-level alias rules (last names, acronyms) compare. */
export function keyTokens(surface: string): string[] {
  const key = entityKey(surface);
  return key.length === 0 ? [] : key.split(' ');
}

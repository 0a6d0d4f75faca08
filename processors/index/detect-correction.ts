/**
 * Whether a chunk belongs to an article that corrects, updates or retracts an earlier article of the
 * same publisher, and which one. Pure; the chunk index records the answer on the chunk's document
 * (`corrects_urls`, `correction`) and retrieval leaves the named article out of answers as of the
 * correction's time or later.
 *
 * The rule is deliberately narrow, as a false match silently hides a report:
 * - the article says it is a correction: its headline, or the chunk's own first sentence when it is
 *   the article's first chunk, opens with "Correction:", "Clarification:", "Update:", "Editor's
 *   note:", or says "An earlier version of this article", "retracts"/"retracted", "withdrawn"/"withdraws";
 * - and the chunk's text names the earlier article by its address: an http(s) URL on the same host
 *   as the correcting article's own URL (a publisher corrects its own reporting; a link to another
 *   publisher is a citation, not a correction), other than its own URL.
 * Text near-duplicated from the earlier article is not used to name it: dedupe merges such chunks into
 * the earlier article's own, so they cannot tell a correction from a follow-up that repeats it.
 * "Retracts" or "withdrawn" makes it a retraction: the named article is withdrawn, not replaced.
 */

/**
 * A URL as corrections are matched on: host without `www.`, lower-cased, then path and query, without
 * the scheme, the fragment or a trailing slash; undefined for what does not parse as http(s).
 */
export function comparableUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
    const path = parsed.pathname.replace(/\/+$/, '');
    return `${parsed.hostname.toLowerCase().replace(/^www\./, '')}${path}${parsed.search}`;
  } catch {
    return undefined;
  }
}

export type CorrectionKind = 'correction' | 'retraction';

export interface Correction {
  kind: CorrectionKind;
  /** The corrected articles' URLs (`comparableUrl`), without repeats. */
  urls: string[];
}

const OPENING = /^\s*(?:correction|clarification|update|updated|editor['’]s note)\s*[:\-–—]/i;
const EARLIER_VERSION = /\ban earlier version of this (?:article|story|report)\b/i;
const RETRACTION = /\b(?:retracts?|retracted|retraction|withdrawn|withdraws?)\b/i;
const URL_IN_TEXT = /https?:\/\/[^\s<>"'()[\]]+/gi;

function host(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return undefined;
  }
}

/** The first sentence of a text: up to the first full stop, question or exclamation mark before a space. */
function firstSentence(text: string): string {
  const match = /^[\s\S]*?[.!?](?=\s|$)/.exec(text.trim());
  return match === null ? text.trim() : match[0];
}

function says(line: string): { correction: boolean; retraction: boolean } {
  const retraction = RETRACTION.test(line);
  return { correction: retraction || OPENING.test(line) || EARLIER_VERSION.test(line), retraction };
}

/**
 * The correction a chunk states, or undefined. `ownUrl` is its article's URL; `first` whether it is
 * the article's first chunk (whose first sentence is the article's).
 */
export function detectCorrection(chunk: {
  title: string;
  text: string;
  ownUrl: string;
  first: boolean;
}): Correction | undefined {
  const headline = says(chunk.title);
  const opening = chunk.first ? says(firstSentence(chunk.text)) : { correction: false, retraction: false };
  if (!headline.correction && !opening.correction) return undefined;
  const ownHost = host(chunk.ownUrl);
  if (ownHost === undefined) return undefined;
  const own = comparableUrl(chunk.ownUrl);
  const urls = [
    ...new Set(
      (chunk.text.match(URL_IN_TEXT) ?? [])
        .map((url) => url.replace(/[.,;:!?]+$/, ''))
        .filter((url) => host(url) === ownHost)
        .map(comparableUrl)
        .filter((url): url is string => url !== undefined && url !== own),
    ),
  ];
  if (urls.length === 0) return undefined;
  return { kind: headline.retraction || opening.retraction ? 'retraction' : 'correction', urls };
}

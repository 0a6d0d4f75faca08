/**
 * Date and time expressions with chrono-node, relative ones ("yesterday", "last Tuesday") resolved
 * against the publication time in UTC.
 *
 * chrono reads any month name as a date, so precision rules apply: an expression is kept only when
 * chrono is certain of its day (a date, a weekday, "yesterday"), or of both month and year ("March
 * 2019"). A bare month ("May", "in March") is dropped, as are month names written in lower case
 * ("protesters march"), a month right after a capitalised name ("Theresa May 5"), numeric dates
 * without a year ("3/4" is as often a fraction), and matches that run across a sentence end.
 */
import * as chrono from 'chrono-node';

import type { DateGranularity } from '../../schemas/records.generated.js';

export interface FoundDateExpression {
  text: string;
  start: number;
  end: number;
  /** Start of the stated unit, UTC milliseconds since the epoch. */
  refers_to: number;
  granularity: DateGranularity;
}

const MONTH_NAME =
  /\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b/i;
const LEADING_MONTH = new RegExp(`^${MONTH_NAME.source}`, 'i');
const ABBREVIATION_PERIOD =
  /\b(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|mon|tue|tues|wed|thu|thurs|fri|sat|sun|[ap]\.m|st|no)\.$/i;
/** Years 1000–9999: what a MarkedArticle may carry (see schemas/validate-record-semantics.ts). */
const EARLIEST = Date.UTC(1000, 0, 1);
const LATEST = Date.UTC(10000, 0, 1);
const LEADING_PREPOSITION = /^(?:on|in|at|since|by|from|until|till|during|of)\s+/i;
const NUMERIC_WITHOUT_YEAR = /^\d{1,2}[/.-]\d{1,2}$/;
/** Words after which a capitalised month still reads as a date. */
const DATE_LEAD_WORDS: ReadonlySet<string> = new Set([
  'in',
  'on',
  'since',
  'by',
  'until',
  'till',
  'from',
  'before',
  'after',
  'during',
  'through',
  'of',
  'last',
  'next',
  'this',
  'early',
  'late',
  'mid',
  'between',
  'and',
  'to',
  'as',
  'until',
  'around',
  'about',
]);

/** Date expressions of text in text order, non-overlapping. */
export function findDateExpressions(text: string, publishedAt: number): FoundDateExpression[] {
  const found: FoundDateExpression[] = [];
  const results = chrono.parse(text, { instant: new Date(publishedAt), timezone: 0 });
  for (const result of results) {
    if (text.slice(result.index, result.index + result.text.length) !== result.text) continue;
    // "on Sunday" is stated by "Sunday": the preposition is not part of the expression.
    const lead = LEADING_PREPOSITION.exec(result.text)?.[0].length ?? 0;
    const start = result.index + lead;
    // chrono sometimes takes the comma after a date ("Monday,") with it.
    const end = result.index + result.text.replace(/[\s,;:]+$/, '').length;
    if (end <= start) continue;
    const expression = text.slice(start, end);
    const granularity = granularityOf(result.start);
    if (granularity === undefined || !plausible(text, expression, start)) continue;
    if (found.length > 0 && found.at(-1)!.end > start) continue;
    const refersTo = truncate(result.start.date().getTime(), granularity);
    if (!Number.isFinite(refersTo) || refersTo < EARLIEST || refersTo >= LATEST) continue;
    found.push({ text: expression, start, end, refers_to: refersTo, granularity });
  }
  return found;
}

function granularityOf(c: chrono.ParsedComponents): DateGranularity | undefined {
  const dayKnown = c.isCertain('day') || c.isCertain('weekday');
  if (c.isCertain('hour') && dayKnown) return 'TIME';
  if (dayKnown) return 'DAY';
  if (c.isCertain('month') && c.isCertain('year')) return 'MONTH';
  return undefined;
}

function plausible(text: string, expression: string, start: number): boolean {
  // "now" is the publication time itself: it states no date; all-caps words are mastheads ("USA TODAY").
  if (/^(?:right )?now$/i.test(expression.trim()) || !/\p{Ll}/u.test(expression)) return false;
  if (NUMERIC_WITHOUT_YEAR.test(expression.trim())) return false;
  const month = MONTH_NAME.exec(expression);
  if (month !== null && !/^\p{Lu}/u.test(month[0])) return false;
  if (crossesSentenceEnd(expression)) return false;
  if (LEADING_MONTH.test(expression)) {
    const before = /(\S+)\s+$/u.exec(text.slice(Math.max(0, start - 40), start));
    const word = before?.[1];
    if (word !== undefined && /^\p{Lu}\p{Ll}/u.test(word) && !DATE_LEAD_WORDS.has(word.toLowerCase())) return false;
  }
  return true;
}

/** "February. 12 people": a period that is not an abbreviation's ends the sentence inside the match. */
function crossesSentenceEnd(expression: string): boolean {
  for (const match of expression.matchAll(/[.!?](?=\s)/g)) {
    const head = expression.slice(0, match.index + 1);
    if (!ABBREVIATION_PERIOD.test(head)) return true;
  }
  return false;
}

/** The start of the unit the expression states, in UTC ("March 3" → 00:00 on March 3). */
function truncate(ms: number, granularity: DateGranularity): number {
  const d = new Date(ms);
  switch (granularity) {
    case 'TIME':
      return ms;
    case 'DAY':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    case 'MONTH':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    case 'YEAR':
      return Date.UTC(d.getUTCFullYear(), 0, 1);
  }
}

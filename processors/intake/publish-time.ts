/**
 * Publication time: every temporal query is measured against it, so a wrong one is worse than
 * none. It is read from what the source says, the page's metadata, or the URL (the NEON paper
 * takes it "from the source URL"), and checked for plausibility.
 *
 * Day-resolution values (`2022/06/17`, a URL's `/2022/06/17/`) become 00:00 UTC of that day. The
 * value then stands for the whole UTC day: flooring it gives back the day the source named (what
 * the temporal strategy matches on), and an "as of" query made any time that day includes the
 * article instead of hiding it until an invented hour. Consumers must render such times in UTC.
 *
 * Rejection reason: `impossible_date` (unreadable, an invalid calendar date such as 2023-02-30,
 * before the earliest time allowed, on the Unix epoch's day, or more than the tolerance after
 * `now`). The earliest time is 1990 for live sources (online news begins in the 1990s: anything
 * earlier from a feed is a parsing accident) and 1900 for replays of archives, which are news
 * too (a 1987 newswire); either is configurable. The epoch's day (1970-01-01, what a zero or unset
 * timestamp reads as) is refused whatever the earliest time. A value that is simply absent is not a
 * rejection here: callers fall back to the next source and report `missing_date` at the end.
 */
import * as chrono from 'chrono-node';
import { IntakeRejection } from './article-input.js';

/** Online news begins in the 1990s: from a live source, anything earlier is a parsing accident (0, 1970). */
export const EARLIEST_PUBLISH_TIME = Date.UTC(1990, 0, 1);
/** Replays of archives go further back (`neon replay --earliest` for older ones). */
export const EARLIEST_REPLAY_PUBLISH_TIME = Date.UTC(1900, 0, 1);
const EPOCH_DAY_END = 24 * 60 * 60 * 1000;
export const DEFAULT_FUTURE_TOLERANCE_MS = 24 * 60 * 60 * 1000;
const MAX_DATE_TEXT_LENGTH = 120;
const MAX_CANDIDATES = 20;

export interface PublishTimeOptions {
  /** Milliseconds since the epoch; defaults to the wall clock. */
  readonly now?: number;
  /** How far after `now` a time may lie (feeds stamp slightly ahead, clocks drift). Default 1 day. */
  readonly futureToleranceMs?: number;
  /** The earliest plausible time; default EARLIEST_PUBLISH_TIME (1990, live sources). */
  readonly earliest?: number;
}

function impossible(message: string): IntakeRejection {
  return new IntakeRejection('impossible_date', message);
}

function quote(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}

/** Milliseconds for a calendar day and time in UTC, or undefined when the calendar has no such day. */
function utcTime(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  ms = 0,
): number | undefined {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const time = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const date = new Date(time);
  // Date.UTC rolls 2023-02-30 over to March; a round trip catches it. Years below 100 map to 19xx.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return time;
}

/**
 * Throws `impossible_date` unless `time` lies between the earliest time (default 1990-01-01) and
 * `now` + tolerance, off the Unix epoch's day.
 */
export function checkPublishTime(time: number, options: PublishTimeOptions = {}): number {
  const now = options.now ?? Date.now();
  const tolerance = options.futureToleranceMs ?? DEFAULT_FUTURE_TOLERANCE_MS;
  const earliest = options.earliest ?? EARLIEST_PUBLISH_TIME;
  if (!Number.isFinite(time)) throw impossible(`publication time ${time} is not a finite number`);
  if (time >= 0 && time < EPOCH_DAY_END) {
    throw impossible(`publication time ${new Date(time).toISOString()} is the Unix epoch: a time that was never set`);
  }
  if (time < earliest) {
    const when = Math.abs(time) <= 8.64e15 ? new Date(time).toISOString() : String(time);
    throw impossible(`publication time ${when} is before ${new Date(earliest).toISOString().slice(0, 10)}`);
  }
  if (time > now + tolerance) {
    const when = Math.abs(time) <= 8.64e15 ? new Date(time).toISOString() : String(time);
    throw impossible(`publication time ${when} is more than ${(tolerance / 3_600_000).toFixed(1)} h in the future`);
  }
  return time;
}

const DAY_ONLY = /^(\d{4})([-/.])(\d{1,2})\2(\d{1,2})$/;
const COMPACT_DAY = /^(\d{4})(\d{2})(\d{2})$/;
const ISO_DATE_TIME =
  /^(\d{4})([-/])(\d{2})\2(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/i;
const COMPACT_DATE_TIME = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})?(?:[.,](\d{1,9}))?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Minutes east of UTC for `Z`, `UTC`, `+02:00`, `-0530`, `+02`; no zone means UTC. */
function zoneOffsetMinutes(zone: string | undefined): number {
  if (zone === undefined || /^(z|utc|gmt)$/i.test(zone)) return 0;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}

function fromIsoParts(match: RegExpExecArray, text: string, offset: number): number {
  const [year, month, day, hour, minute, second, fraction, zone] = [
    match[1],
    match[offset],
    match[offset + 1],
    match[offset + 2],
    match[offset + 3],
    match[offset + 4],
    match[offset + 5],
    match[offset + 6],
  ];
  const ms = fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1000);
  const local = utcTime(
    Number(year),
    Number(month),
    Number(day),
    Number(hour),
    Number(minute),
    second === undefined ? 0 : Number(second),
    ms,
  );
  if (local === undefined) throw impossible(`${quote(text)} is not a calendar date and time`);
  return local - zoneOffsetMinutes(zone) * 60_000;
}

/** Dates in prose or e-mail form (`Sun, 06 Aug 2023 09:00:00 GMT`, `August 6, 2023 10:15 AM EDT`). */
function fromProse(text: string): number | undefined {
  const results = chrono.strict.parse(text, new Date(0));
  if (results.length !== 1) return undefined;
  const start = results[0]!.start;
  if (!start.isCertain('year') || !start.isCertain('month') || !start.isCertain('day')) return undefined;
  const hasTime = start.isCertain('hour');
  const local = utcTime(
    start.get('year') ?? 0,
    start.get('month') ?? 0,
    start.get('day') ?? 0,
    hasTime ? (start.get('hour') ?? 0) : 0,
    hasTime ? (start.get('minute') ?? 0) : 0,
    hasTime ? (start.get('second') ?? 0) : 0,
  );
  if (local === undefined) return undefined;
  const offset = start.isCertain('timezoneOffset') ? (start.get('timezoneOffset') ?? 0) : 0;
  return local - offset * 60_000;
}

/** Reads a date or time without judging whether it is plausible. */
function readPublishTime(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw impossible(`publication time ${value} is not a finite number`);
    return Math.floor(value);
  }
  const text = value.trim();
  if (text === '') throw impossible('publication time is empty');
  if (text.length > MAX_DATE_TEXT_LENGTH) throw impossible(`publication time ${quote(text)} is too long to be a date`);
  const day = DAY_ONLY.exec(text) ?? COMPACT_DAY.exec(text);
  if (day) {
    const [year, month, date] = day.length === 5 ? [day[1], day[3], day[4]] : [day[1], day[2], day[3]];
    const time = utcTime(Number(year), Number(month), Number(date));
    if (time === undefined) throw impossible(`${quote(text)} is not a calendar date`);
    return time;
  }
  const iso = ISO_DATE_TIME.exec(text);
  if (iso) return fromIsoParts(iso, text, 3);
  const compact = COMPACT_DATE_TIME.exec(text);
  if (compact) return fromIsoParts(compact, text, 2);
  const prose = fromProse(text);
  if (prose === undefined) throw impossible(`${quote(text)} is not a readable date`);
  return prose;
}

/**
 * A publication time from a source: ms since the epoch, ISO 8601 with or without zone (no zone
 * means UTC), a day (`2022/06/17`, `2022-06-17`, `20220617` → 00:00 UTC), or a date in e-mail or
 * prose form. Throws `impossible_date` when unreadable or implausible.
 */
export function parsePublishedAt(value: string | number, options: PublishTimeOptions = {}): number {
  return checkPublishTime(readPublishTime(value), options);
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const URL_DATE_PATTERNS: readonly { pattern: RegExp; month: (raw: string) => number }[] = [
  // /2023/08/06/ and /2023/8/6
  { pattern: /\/((?:19|20)\d{2})\/(\d{1,2})\/(\d{1,2})(?=[/._-]|$)/, month: Number },
  // /2023-08-06/, /story-2023-08-06-title, /2023_08_06.html
  { pattern: /(?:^|[/_-])((?:19|20)\d{2})[-_](\d{2})[-_](\d{2})(?=[/._-]|$)/, month: Number },
  // /20230806/ and -20230806.html
  { pattern: /(?:^|[/_-])((?:19|20)\d{2})(\d{2})(\d{2})(?=[/._-]|$)/, month: Number },
  // /2023/aug/06/
  {
    pattern: /\/((?:19|20)\d{2})\/(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\/(\d{1,2})(?=[/._-]|$)/i,
    month: (raw) => MONTHS.indexOf(raw.slice(0, 3).toLowerCase()) + 1,
  },
];

/**
 * The day a news URL's path names (`/2023/08/06/`, `/2023-08-06/`, `/20230806/`, `/2023/aug/06/`),
 * as 00:00 UTC, or undefined when the path names no valid day since `earliest` (1990). Does not check the
 * future bound (that needs a clock): pass the result through {@link checkPublishTime}.
 */
export function publishTimeFromUrl(url: string, earliest = EARLIEST_PUBLISH_TIME): number | undefined {
  if (!URL.canParse(url)) return undefined;
  const path = new URL(url).pathname;
  let best: { index: number; time: number } | undefined;
  for (const { pattern, month } of URL_DATE_PATTERNS) {
    const match = pattern.exec(path);
    if (!match || (best !== undefined && best.index <= match.index)) continue;
    const time = utcTime(Number(match[1]), month(match[2] ?? ''), Number(match[3]));
    if (time !== undefined && time >= earliest) best = { index: match.index, time };
  }
  return best?.time;
}

/** The subset of a DOM element that metadata reading needs; linkedom's and browsers' fit it. */
export interface PageElement {
  readonly tagName: string;
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
}

/** The subset of a DOM document that metadata reading needs. */
export interface PageDocument {
  querySelectorAll(selectors: string): Iterable<PageElement>;
}

/** Meta tags that carry the publication time, by priority; keys are lower-case `property`/`name`/`itemprop`. */
const META_PRIORITY: readonly string[] = [
  'article:published_time',
  'og:published_time',
  'datepublished',
  'json-ld',
  'parsely-pub-date',
  'sailthru.date',
  'dc.date',
  'dc.date.issued',
  'dcterms.issued',
  'dcterms.created',
  'time',
];

/** `datePublished` anywhere in a JSON-LD value: objects, arrays and `@graph` included. */
function jsonLdDates(value: unknown, out: string[], depth = 0): void {
  if (depth > 20 || typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) jsonLdDates(item, out, depth + 1);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key === 'datePublished' && typeof item === 'string') out.push(item);
    else if (typeof item === 'object') jsonLdDates(item, out, depth + 1);
  }
}

/** The publication-time values the page states, best source first (at most 20: pages list many `<time>`s). */
export function publishTimeCandidates(document: PageDocument): string[] {
  const found = new Map<string, string[]>(META_PRIORITY.map((key) => [key, []]));
  const add = (key: string, value: string | null | undefined): void => {
    const text = value?.trim();
    if (text) found.get(key)?.push(text);
  };
  for (const meta of document.querySelectorAll('meta')) {
    for (const attribute of ['property', 'name', 'itemprop']) {
      const key = meta.getAttribute(attribute)?.trim().toLowerCase();
      if (key !== undefined && found.has(key) && key !== 'json-ld' && key !== 'time') {
        add(key, meta.getAttribute('content'));
      }
    }
  }
  for (const element of document.querySelectorAll('[itemprop]')) {
    if (element.tagName.toLowerCase() === 'meta') continue;
    if (element.getAttribute('itemprop')?.trim().toLowerCase() !== 'datepublished') continue;
    add('datepublished', element.getAttribute('content') ?? element.getAttribute('datetime') ?? element.textContent);
  }
  for (const script of document.querySelectorAll('script')) {
    if (script.getAttribute('type')?.trim().toLowerCase() !== 'application/ld+json') continue;
    const dates: string[] = [];
    try {
      jsonLdDates(JSON.parse(script.textContent ?? '') as unknown, dates);
    } catch {
      continue;
    }
    for (const date of dates) add('json-ld', date);
  }
  for (const time of document.querySelectorAll('time')) add('time', time.getAttribute('datetime'));
  return META_PRIORITY.flatMap((key) => found.get(key) ?? []).slice(0, MAX_CANDIDATES);
}

/**
 * The publication time the page's metadata states (article:published_time, og:published_time,
 * itemprop datePublished, JSON-LD datePublished, parsely-pub-date, sailthru.date, dc.date,
 * `<time datetime>`): the first value that is readable and plausible. Undefined when the page
 * states none; throws `impossible_date` when it states some and none is usable.
 */
export function publishTimeFromHtml(document: PageDocument, options: PublishTimeOptions = {}): number | undefined {
  const candidates = publishTimeCandidates(document);
  let firstProblem: IntakeRejection | undefined;
  for (const candidate of candidates) {
    try {
      return parsePublishedAt(candidate, options);
    } catch (error) {
      if (!(error instanceof IntakeRejection)) throw error;
      firstProblem ??= error;
    }
  }
  if (firstProblem) throw impossible(`no usable date in page metadata: ${firstProblem.message}`);
  return undefined;
}

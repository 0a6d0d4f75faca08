/**
 * The time a question asks about, from its own words (META, seed 001: time-constraint prediction,
 * for a question instead of an article section). Pure: the words are resolved against the query
 * time tq in UTC days, as the product stamps publication times in UTC.
 *
 * What it reads, and what each becomes (a window is inclusive and never ends after tq, since a
 * question is asked as of tq):
 *
 * - absolute dates (chrono-node: "January 20, 2025", "20 Jan", "2025-01-20", "March 2023"); a day or
 *   month without a year is its latest occurrence not after tq;
 * - bare years ("in 2019"), decades ("the 1990s"), year ranges ("2019–2021"), seasons ("last summer",
 *   "the winter of 2024": meteorological, northern, winter labelled by its January) and "Q1 2025";
 * - relative words: today, yesterday, this/last week|month|year (calendar units, weeks start on
 *   Monday), "the last/past N days|weeks|months|years|hours" (rolling), "N days ago" (that day; weeks,
 *   months and years ago: that calendar unit), weekdays ("on Monday": the latest Monday not after
 *   tq; "last Monday": the latest before tq's day), weekends, "earlier this month";
 * - the relation a preposition gives: in/on/during → within; since → from the start; after → from
 *   the end; before → until the start; until/by/through → until the end; around → ±7 days; between …
 *   and … / from … to … → a range. early/mid/late and "the end of" narrow a month or a year;
 * - recency: "latest", "current", "most recent", "now", "still", …, a period after tq ("next week",
 *   "tomorrow": only earlier coverage exists), and a recurring event named without a year ("the
 *   final", "the election", "its quarterly report") — the most recent occurrence before tq is meant;
 * - "before / after / since <named event>" that is not a date: an `eventAnchor` for a lookup to
 *   resolve, never a guessed date.
 *
 * A year that names an event ("the 2024 election", "Euro 2024", "Trump's 2016 campaign") is an
 * `event` expression, not a window: coverage of a named occurrence runs well outside its calendar
 * year (a campaign before, a certification and its aftermath after: the 2024 US election was
 * certified in January 2025), and the year is already in the words the retriever matches. It does
 * pin the occurrence, so it turns recency off. A year in front of a plain noun with no preposition
 * ("2019 people") is a count, and numbers in names ("Boeing 737") are not years.
 */
import * as chrono from 'chrono-node';

import { DAY_MS } from './rank-candidates.js';
import type { ExplicitTimeParameters, SearchRequest } from './search-request.js';
import { CARDINALS_BELOW_TWENTY, TENS } from './number-words.js';

export type TimeExpressionKind = 'date' | 'range' | 'relative' | 'recency' | 'event';

export interface TimeExpression {
  /** The words as written (with their preposition), `question.slice(start, end)`. */
  text: string;
  start: number;
  end: number;
  kind: TimeExpressionKind;
}

export type QuestionTimeConstraint = 'none' | 'before' | 'after' | 'around' | 'within';

/** Inclusive publication bounds (ms since the epoch, UTC). */
export interface PublicationWindow {
  from?: number;
  to?: number;
}

/** "before the election": the event's date is not in the question; a lookup resolves it. */
export interface EventAnchor {
  relation: 'before' | 'after';
  phrase: string;
}

export interface QuestionTimeIntent {
  /** The time words found, in text order. */
  expressions: TimeExpression[];
  constraint: QuestionTimeConstraint;
  /** Inclusive publication bounds the question names; `to` is never after tq. */
  window?: PublicationWindow;
  /** The time the question is about: the window's end, the centre of an "around", otherwise tq. */
  reference: number;
  /** Prefer the most recent matching coverage before tq. */
  recency: boolean;
  /**
   * The question asks for the newest of several occurrences ("the latest", "the current", a
   * recurring event without its year, a period after tq, "now"), not only about the present
   * ("recently", "still"), which a strategy that weighs recency already prefers.
   */
  asksLatest: boolean;
  eventAnchor?: EventAnchor;
  /** The question without its time words, for matching. */
  topic: string;
  /** One short line for people, e.g. `published 2023-03-01 – 2023-03-31 ("in March 2023")`. */
  explanation: string;
}

/**
 * A question's time words date the news it asks about, not the articles that report it: a week's
 * story is reported from the days before "this week" began (a Monday's question reads Sunday's
 * reports) and for days after its period ended. The window searched is the period named, widened
 * by `COVERAGE_LEAD_DAYS` before it and, for a period the question is within, by
 * `COVERAGE_LAG_DAYS` after it, never past tq. A longer lag would let the next occurrence of a
 * recurring event in ("the final in 2020" must not read 2021's). "before <date>" keeps its bound: it
 * states when the reporting was, not when the news happened.
 */
export const COVERAGE_LEAD_DAYS = 3;
export const COVERAGE_LAG_DAYS = 7;

export function coverageWindow(
  window: PublicationWindow,
  constraint: QuestionTimeConstraint,
  tq: number,
): PublicationWindow {
  if (constraint === 'before' || constraint === 'around' || constraint === 'none') return { ...window };
  const from = window.from === undefined ? undefined : window.from - COVERAGE_LEAD_DAYS * DAY_MS;
  let to = window.to;
  if (constraint === 'within' && window.to !== undefined) to = Math.min(tq, window.to + COVERAGE_LAG_DAYS * DAY_MS);
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}

/**
 * The longest period up to the query time ("this week", "this month") that is a recent period: a
 * strategy weighs it as recency rather than filtering by it, and the question's other periods are
 * the background of its news ("this week marked the anniversary of … in August last year").
 */
export const RECENT_PERIOD_DAYS = 31;

/** Half-width of "around <date>", as the request's default `window_days`. */
export const AROUND_DAYS = 7;

interface Period {
  from: number;
  to: number;
}

/** How a preposition relates the question to a period. */
type Relation = 'in' | 'since' | 'after' | 'before' | 'until' | 'around';

/** A period the question names, before it is related and bounded. */
interface DatedCore {
  start: number;
  end: number;
  period: Period;
  kind: 'date' | 'range' | 'relative';
  /** A month or a year: early/mid/late and "the end of" can narrow it. */
  unit?: 'month' | 'year';
  /** Written without a year ("July 4", "in March"): another period's year may place it. */
  yearless?: boolean;
}

interface DatedExpression extends DatedCore {
  relation: Relation;
}

// ---------------------------------------------------------------------------------------------
// UTC calendar

const dayStart = (t: number): number => Math.floor(t / DAY_MS) * DAY_MS;
const dayPeriod = (t: number): Period => ({ from: dayStart(t), to: dayStart(t) + DAY_MS - 1 });
const monthPeriod = (year: number, month0: number): Period => ({
  from: Date.UTC(year, month0, 1),
  to: Date.UTC(year, month0 + 1, 1) - 1,
});
const yearPeriod = (year: number): Period => ({ from: Date.UTC(year, 0, 1), to: Date.UTC(year + 1, 0, 1) - 1 });
const span = (a: Period, b: Period): Period => ({ from: Math.min(a.from, b.from), to: Math.max(a.to, b.to) });

/** Monday 00:00 to Sunday 23:59:59.999 of the week holding t. */
function weekPeriod(t: number): Period {
  const from = dayStart(t) - ((new Date(t).getUTCDay() + 6) % 7) * DAY_MS;
  return { from, to: from + 7 * DAY_MS - 1 };
}

/** t moved by n calendar months, the day of month kept where the month has it. */
function addMonths(t: number, n: number): number {
  const d = new Date(t);
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  return Date.UTC(target.getUTCFullYear(), target.getUTCMonth(), Math.min(d.getUTCDate(), lastDay)) + (t % DAY_MS);
}

type Unit = 'hour' | 'day' | 'week' | 'month' | 'year';

function shift(t: number, unit: Unit, n: number): number {
  switch (unit) {
    case 'hour':
      return t + n * 3_600_000;
    case 'day':
      return t + n * DAY_MS;
    case 'week':
      return t + n * 7 * DAY_MS;
    case 'month':
      return addMonths(t, n);
    case 'year':
      return addMonths(t, 12 * n);
  }
}

/** The calendar unit holding t. */
function unitPeriod(t: number, unit: Unit): Period {
  const d = new Date(t);
  switch (unit) {
    case 'hour':
    case 'day':
      return dayPeriod(t);
    case 'week':
      return weekPeriod(t);
    case 'month':
      return monthPeriod(d.getUTCFullYear(), d.getUTCMonth());
    case 'year':
      return yearPeriod(d.getUTCFullYear());
  }
}

/** The latest (month, day) not after tq: a date written without its year. */
function latestYearFor(month0: number, day: number, tq: number): number {
  const now = new Date(tq);
  const year = now.getUTCFullYear();
  return Date.UTC(year, month0, day) <= dayStart(tq) ? year : year - 1;
}

const iso = (t: number): string => new Date(t).toISOString().slice(0, 10);

// ---------------------------------------------------------------------------------------------
// Vocabulary

const MONTH_WORD =
  /\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?/i;
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  ...CARDINALS_BELOW_TWENTY,
  ...TENS,
  'a couple of': 2,
  couple: 2,
  few: 3,
  'a few': 3,
  several: 5,
};
const COUNT = String.raw`(\d{1,3}|a couple of|a few|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty)`;
const UNIT = String.raw`(hours?|days?|weeks?|months?|years?)`;

/** Prepositions that relate a question to a period, longest first. */
const LEADS: readonly [string, Relation][] = [
  ['in the run-up to', 'before'],
  ['leading up to', 'before'],
  ['prior to', 'before'],
  ['ahead of', 'before'],
  ['up to', 'until'],
  ['as of', 'until'],
  ['up until', 'until'],
  ['close to', 'around'],
  ['throughout', 'in'],
  ['during', 'in'],
  ['within', 'in'],
  ['in', 'in'],
  ['on', 'in'],
  ['of', 'in'],
  ['from', 'in'],
  ['at', 'in'],
  ['over', 'in'],
  ['for', 'in'],
  ['since', 'since'],
  ['after', 'after'],
  ['following', 'after'],
  ['before', 'before'],
  ['until', 'until'],
  ['till', 'until'],
  ['through', 'until'],
  ['by', 'until'],
  ['between', 'in'],
  ['around', 'around'],
  ['circa', 'around'],
  ['approximately', 'around'],
  ['roughly', 'around'],
];
const LEAD_PATTERN = new RegExp(
  String.raw`(?:^|[\s(,;:—–-])(${LEADS.map(([w]) => w.replace(/ /g, String.raw`\s+`)).join('|')})\s+(the\s+(?:years?\s+|months?\s+of\s+)?)?$`,
  'i',
);
const NARROWING =
  /(?:^|\s)(early|mid|late|(?:the\s+)?(?:beginning|start|middle|end)\s+of(?:\s+the)?|(?:the\s+)?(?:first|second|third|fourth|last)\s+week\s+of|(?:the\s+)?(?:first|second)\s+half\s+of)[\s-]*$/i;

/** Words after which a bare month name is still a month (not "May resigned", "March on Washington"). */
const AFTER_BARE_MONTH = new Set([
  'and',
  'or',
  'to',
  'through',
  'until',
  'till',
  'when',
  'where',
  'what',
  'who',
  'why',
  'how',
  'that',
  'which',
  'about',
  'for',
  'in',
  'at',
  'with',
  'after',
  'before',
  'this',
  'last',
  'did',
  'does',
  'do',
  'was',
  'were',
  'is',
  'are',
  'has',
  'have',
  'had',
  'will',
  'would',
  'compared',
  'versus',
  'vs',
  'so',
  'onwards',
  'onward',
  'alone',
]);

/** Words that may follow a year that is a time ("in 2019 and 2020", "2019 when"). */
const AFTER_YEAR = new Set([
  ...AFTER_BARE_MONTH,
  'on',
  'by',
  'from',
  'the',
  'a',
  'an',
  'during',
  'between',
  'while',
  'as',
  'but',
  'than',
  'alone',
]);

const RECENCY_WORDS =
  /\b(?:(?:the\s+)?(?:very\s+)?(?:latest|newest|most\s+recent(?:ly)?)|current(?:ly)?|right\s+now|as\s+of\s+now|just\s+now|now|at\s+present|presently|these\s+days|nowadays|recent(?:ly)?|so\s+far|to\s+date|up[\s-]to[\s-]date|still|anymore|any\s+more|the\s+new(?=\s+(?:pope|president|prime\s+minister|chancellor|leader|ceo|coach|manager|chief|head|chair(?:man|woman)?|governor|mayor|speaker|secretary|minister|government|king|queen|champion)\b))\b/gi;
/**
 * Recency words that place the question in the present without asking for the newest of several
 * ("who recently retired", "still recovering"); "now" and "current" ask for the state as of now.
 */
const PRESENT_TIME_WORDS = /^(?:recent(?:ly)?|these\s+days|nowadays|still|anymore|any\s+more)$/i;
/** Not recency: "current account", "a current of", "now-defunct". */
const NOT_RECENCY =
  /^(?:current\s+(?:account|affairs|events|of|flows?)|currents|now[-‑]|still\s+(?:life|water)|recent\s+history)/i;

/**
 * Occurrences of a recurring event: named without a year, the most recent is meant. Words of the
 * brief's kinds (finals, elections, summits, reports, awards, polls) and their best-known names.
 */
const RECURRING_EVENT = new RegExp(
  [
    String.raw`(?:semi-?)?finals?(?=\s*(?:[?.,;!]|$|of|in|at|on|against|between|and|was|is|were|take|took|played|ended|end|held|won|score|result|results|match|game))`,
    String.raw`(?:cup|league|open|championship|women'?s|men'?s|singles|doubles|grand)\s+finals?`,
    String.raw`elections?|primar(?:y|ies)|runoffs?|run-offs?|by-elections?|caucus(?:es)?|referendums?`,
    String.raw`(?:presidential|leadership|televised|election|tv)\s+debates?|summits?|(?:annual|party|leadership|climate|security)\s+conference`,
    String.raw`quarterly|earnings|(?:annual|quarterly|jobs|employment|inflation|payrolls?)\s+(?:reports?|results|figures|data|numbers)`,
    String.raw`(?:first|second|third|fourth|q[1-4])[\s-]quarter\s+(?:results|earnings|figures|report|gdp|growth)`,
    String.raw`(?:rate|interest[\s-]rates?|policy)\s+(?:decision|meeting|announcement)|(?:fed|fomc|ecb|opec\+?)(?:'s)?\s+(?:\w+\s+)?meeting`,
    String.raw`awards?(?:\s+ceremony)?|ceremony|oscars?|academy\s+awards|grammys?|emmys?|golden\s+globes?|baftas?|tony\s+awards|nobel(?:\s+\w+)?\s+prize|nobel|booker(?:\s+prize)?|pulitzer|ballon\s+d'or|palme\s+d'or`,
    String.raw`polls?|surveys?|approval\s+ratings?`,
    String.raw`super\s+bowl|world\s+cup|olympics?|olympic\s+games|paralympics|australian\s+open|french\s+open|roland[\s-]garros|wimbledon|u\.?s\.?\s+open|the\s+masters|tour\s+de\s+france|grand\s+prix|eurovision|davos|world\s+economic\s+forum|g7|g20|state\s+of\s+the\s+union|budget|derby|playoffs?|(?:nfl|nba|mlb|nhl)\s+draft|champions\s+league|stanley\s+cup|world\s+series|nba\s+finals|six\s+nations|ryder\s+cup|met\s+gala|cannes|general\s+assembly|munich\s+security\s+conference|march\s+madness|grand\s+national|boat\s+race`,
    String.raw`(?:weekly|monthly|annual|yearly|biannual)\s+\w+`,
  ]
    .map((p) => `(?:${p})`)
    .join('|'),
  'i',
);
const RECURRING_EVENT_GLOBAL = new RegExp(String.raw`\b(?:${RECURRING_EVENT.source})\b`, 'gi');
/** The question is about the event's past or its nature, not its latest occurrence. */
const NOT_LATEST =
  /\b(?:history|historically|ever|all[\s-]time|how\s+many\s+times|how\s+often|every\s+(?:year|time)|each\s+year|traditionally|usually|typically|origins?|founded|inaugural|previous|past\s+winners|first\s+(?:ever|time))\b|^\s*(?:how\s+(?:do|does|are|is)\b|what\s+(?:is|are)\s+an?\b|explain\b|define\b)/i;

/** "before the committee", "named after", "look after": not time. */
const NOT_TEMPORAL_BEFORE =
  /\b(?:testif(?:y|ied|ies|ying)|appear(?:s|ed|ing)?|brought|bring|came|come|comes|stand|stood|went|go|goes|put|placed|laid)\s+$/i;
const NOT_TEMPORAL_AFTER =
  /\b(?:named|look(?:s|ed|ing)?|go(?:es|ne)?|went|chas(?:e|es|ed|ing)|take[sn]?|took|sought)\s+$/i;
const NOT_TEMPORAL_OBJECT =
  /^(?:the\s+)?(?:court|courts|committee|congress|senate|house|parliament|judge|jury|tribunal|panel|voters|cameras|all|that|then|this|it|him|her|them|which|what|whom|us|me|long|now)\b/i;

/** An occurrence named after a year: "2024 presidential election", "2025 budget", "2022 invasion". */
const EVENT_AFTER_YEAR = new RegExp(
  String.raw`^\s+(?:[\p{L}'’-]+\s+){0,3}?(?:${RECURRING_EVENT.source}|season|campaign|war|invasion|crisis|attack|attacks|earthquake|tsunami|flood|floods|hurricane|fires?|wildfires?|protests?|coup|massacre|pandemic|outbreak|riots?|strike|strikes|shooting|bombing|crash|tournament|games|race|census|agreement|deal|treaty|accords?|act|law|bill|ceasefire|uprising|revolution|scandal)\b`,
  'iu',
);

/** "2019 people", "2000 troops": what a number in front of them counts. */
const COUNTED =
  /^\s+(?:people|persons|men|women|children|kids|troops|soldiers|fighters|workers|employees|migrants|refugees|students|residents|civilians|patients|deaths|dead|votes|voters|jobs|homes|houses|buildings|cases|dollars|euros|pounds|tonnes|tons|miles|kilometres|kilometers|km|meters|metres|feet|acres|hectares|units|cars|vehicles|flights|passengers|shares|points|prisoners|hostages|protesters|police|officers|delegates|seats|members|companies|firms|books|times)\b/i;

// ---------------------------------------------------------------------------------------------
// Finding

/** Relative periods: each match's period, by the words alone (the preposition is read after). */
interface RelativeRule {
  pattern: RegExp;
  resolve: (m: RegExpExecArray, tq: number) => Period | undefined;
}

/** What comes before "a year ago" when it is the baseline a figure is compared with. */
const COMPARISON_BASELINE =
  /(?:(?<!\b(?:more|less|fewer)\s+)\bthan|\bcompared\s+(?:with|to)|\bversus|\bvs\.?|\b(?:up|down|rose|risen|fell|fallen|increased?|decreased?|jumped|dropped|climbed|declined)\s+(?:[\d.,]+\s*(?:%|percent)\s+)?from)\s+(?:[\p{L}'’]+\s+){0,3}$/iu;

const unitOf = (word: string): Unit => word.toLowerCase().replace(/s$/, '') as Unit;
const countOf = (word: string): number => {
  const w = word.toLowerCase().replace(/\s+/g, ' ');
  return /^\d+$/.test(w) ? Number(w) : (NUMBER_WORDS[w] ?? 1);
};
const isFuzzy = (word: string): boolean => /few|several|couple/i.test(word);

/** "the past 3 days": from the start of the day N units back to tq (hours: exactly N hours back). */
function rolling(tq: number, unit: Unit, n: number): Period {
  const from = shift(tq, unit, -n);
  return { from: unit === 'hour' ? from : dayStart(from), to: tq };
}

function weekendOf(t: number): Period {
  const saturday = weekPeriod(t).from + 5 * DAY_MS;
  return { from: saturday, to: saturday + 2 * DAY_MS - 1 };
}

const SEASON_MONTH0: Record<string, number> = { spring: 2, summer: 5, autumn: 8, fall: 8, winter: 11 };

function seasonPeriod(season: string, year: number): Period {
  const start = SEASON_MONTH0[season.toLowerCase()]!;
  // Winter is labelled by the year of its January (NOAA's convention): winter 2024 = Dec 2023 – Feb 2024.
  const startYear = start === 11 ? year - 1 : year;
  return { from: Date.UTC(startYear, start, 1), to: Date.UTC(startYear, start + 3, 1) - 1 };
}

/** The latest season of that name that has begun by tq (`before`: ended before tq's season began). */
function latestSeason(season: string, tq: number, previous: boolean): Period {
  const year = new Date(tq).getUTCFullYear();
  const candidates = [year + 1, year, year - 1, year - 2].map((y) => seasonPeriod(season, y));
  const started = candidates.filter((p) => p.from <= tq);
  if (!previous) return started[0]!;
  return started.find((p) => p.to < tq) ?? started[0]!;
}

const RELATIVE_RULES: RelativeRule[] = [
  {
    pattern: new RegExp(
      String.raw`\b(?:the\s+)?(?:last|past|previous|next|coming)\s+${COUNT}\s+${UNIT}\b(?!\s+of\b)`,
      'gi',
    ),
    resolve: (m, tq) => {
      const unit = unitOf(m[2]!);
      const n = countOf(m[1]!);
      if (/next|coming/i.test(m[0])) return { from: tq + 1, to: shift(tq, unit, n) };
      return rolling(tq, unit, n);
    },
  },
  {
    // "in recent days/weeks/months": a week, four weeks, three months.
    pattern: /\b(?:recent|the\s+last\s+few|the\s+past\s+few)\s+(days|weeks|months)\b/gi,
    resolve: (m, tq) => {
      const unit = unitOf(m[1]!);
      return rolling(tq, unit === 'day' ? 'day' : unit, unit === 'day' ? 7 : unit === 'week' ? 4 : 3);
    },
  },
  {
    pattern: new RegExp(String.raw`\b${COUNT}\s+${UNIT}\s+ago\b`, 'gi'),
    resolve: (m, tq) => {
      // "higher than they were a year ago", "up 8% from a year ago": the baseline of a comparison.
      if (COMPARISON_BASELINE.test(m.input.slice(0, m.index))) return undefined;
      const unit = unitOf(m[2]!);
      const n = countOf(m[1]!);
      // "a few days ago" is not one day: from twice as far back to one unit back.
      if (isFuzzy(m[1]!)) {
        return { from: unitPeriod(shift(tq, unit, -2 * n), unit).from, to: unitPeriod(shift(tq, unit, -1), unit).to };
      }
      return unitPeriod(shift(tq, unit, -n), unit);
    },
  },
  {
    pattern:
      /\b(?:(the)\s+)?(?:(earlier|later)\s+)?(this|last|past|previous|next|coming)\s+(week|month|year|weekend|decade|spring|summer|autumn|fall|winter)\b(?!\s+of\b)/gi,
    resolve: (m, tq) => {
      const which = m[3]!.toLowerCase();
      const unit = m[4]!.toLowerCase();
      const future = which === 'next' || which === 'coming' || m[2]?.toLowerCase() === 'later';
      if (unit in SEASON_MONTH0) {
        if (future) return latestSeason(unit, shift(tq, 'year', 1), false);
        const season = latestSeason(unit, tq, which !== 'this');
        // "this summer" asked in March is the coming one.
        if (which === 'this' && !(season.from <= tq && tq <= season.to)) {
          return latestSeason(unit, shift(tq, 'year', 1), false);
        }
        return season;
      }
      if (unit === 'weekend') {
        const current = weekendOf(tq);
        if (future) return weekendOf(tq + 7 * DAY_MS);
        // "last weekend": the one before this week's, whether or not this week's has begun.
        return which === 'this' ? current : weekendOf(tq - 7 * DAY_MS);
      }
      if (unit === 'decade') {
        const year = new Date(tq).getUTCFullYear();
        if (which === 'past' || which === 'last') return rolling(tq, 'year', 10);
        return { from: Date.UTC(year - (year % 10), 0, 1), to: tq };
      }
      const u = unit as Unit;
      if (future) return unitPeriod(shift(tq, u, 1), u);
      // "the past week" is rolling; "last week" is the calendar week before this one.
      if (which === 'past' || (which === 'last' && m[1] !== undefined)) return rolling(tq, u, 1);
      if (which === 'this') return unitPeriod(tq, u);
      return unitPeriod(shift(tq, u, -1), u);
    },
  },
  {
    // "the weekend", "over the weekend": the latest one begun by tq.
    pattern: /\b(?:over\s+)?the\s+weekend\b/gi,
    resolve: (_m, tq) => {
      const current = weekendOf(tq);
      return current.from <= tq ? current : weekendOf(tq - 7 * DAY_MS);
    },
  },
  {
    // "on the 10th": the latest 10th not after tq.
    pattern:
      /(?<=\bon\s+)the\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of|anniversary|day|time|floor|century|amendment|round|place|minute|edition|birthday|hole|inning|lap|stage|test|game|match)\b)/gi,
    resolve: (m, tq) => {
      const day = Number(m[1]);
      if (day < 1 || day > 31) return undefined;
      const now = new Date(tq);
      for (let back = 0; back < 12; back++) {
        const t = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, day);
        if (new Date(t).getUTCDate() === day && t <= tq) return dayPeriod(t);
      }
      return undefined;
    },
  },
  {
    // "in the first quarter" without a year: the latest first quarter begun by tq.
    pattern:
      /(?<=\b(?:in|during|over|for|through|throughout|since|before|after|until|by)\s+)the\s+(first|second|third|fourth)\s+quarter\b(?!\s+(?:of|results|earnings|figures|report|gdp|growth)\b)/gi,
    resolve: (m, tq) => {
      const q = ['first', 'second', 'third', 'fourth'].indexOf(m[1]!.toLowerCase());
      const now = new Date(tq);
      const year = Date.UTC(now.getUTCFullYear(), q * 3, 1) <= tq ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
      return { from: Date.UTC(year, q * 3, 1), to: Date.UTC(year, q * 3 + 3, 1) - 1 };
    },
  },
  {
    // Fixed-date holidays after a preposition ("on New Year's Day", "over Christmas"): the latest one.
    pattern:
      /(?<=\b(?:on|at|over|since|before|after|around|until|during|by|between|and)\s+)(?:new\s+year(?:['’]s)?(?:\s+(day|eve))?|christmas(\s+(?:day|eve))?|valentine['’]s\s+day|halloween)\b/gi,
    resolve: (m, tq) => {
      const text = m[0].toLowerCase();
      const [month0, day] = text.startsWith('new')
        ? m[1]?.toLowerCase() === 'eve'
          ? [11, 31]
          : [0, 1]
        : text.startsWith('christmas')
          ? [11, /eve/.test(m[2] ?? '') ? 24 : 25]
          : text.startsWith('valentine')
            ? [1, 14]
            : [9, 31];
      return dayPeriod(Date.UTC(latestYearFor(month0, day, tq), month0, day));
    },
  },
  {
    // "in the fall", "during the summer" (not "the fall of Assad"): the latest one begun by tq.
    pattern:
      /(?<=\b(?:in|during|over|since|before|after|until|through|throughout)\s+)the\s+(spring|summer|autumn|fall|winter)\b(?!\s+of\b)/gi,
    resolve: (m, tq) => latestSeason(m[1]!, tq, false),
  },
  {
    pattern: /\b(?:so\s+far\s+this\s+year|this\s+year\s+so\s+far|year[\s-]to[\s-]date)\b/gi,
    resolve: (_m, tq) => unitPeriod(tq, 'year'),
  },
  {
    pattern: /\b(?:(?:today|tonight)(?:['’]s)?|this\s+(?:morning|afternoon|evening))\b/gi,
    resolve: (_m, tq) => dayPeriod(tq),
  },
  {
    pattern: /\b(?:yesterday|last\s+night)(?:['’]s)?\b/gi,
    resolve: (_m, tq) => dayPeriod(tq - DAY_MS),
  },
  {
    pattern: /\b(?:the\s+day\s+after\s+)?tomorrow(?:['’]s)?\b/gi,
    resolve: (_m, tq) => dayPeriod(tq + DAY_MS),
  },
];

/** Weekdays come after chrono's dates: "Monday, January 20" is January 20. */
const WEEKDAY_RULES: RelativeRule[] = [
  {
    pattern:
      /\b(?:(last|this|past|next|coming)\s+)?(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)(?:['’]s)?\b/gi,
    resolve: (m, tq) => {
      const modifier = m[1]?.toLowerCase();
      // Lower-case weekday alone is rare in a question and often a name fragment: need a modifier.
      if (modifier === undefined && !/^\p{Lu}/u.test(m[2]!)) return undefined;
      const target = WEEKDAYS.indexOf(m[2]!.toLowerCase());
      const today = new Date(tq).getUTCDay();
      if (modifier === 'next' || modifier === 'coming') {
        const ahead = (target - today + 7) % 7 || 7;
        return dayPeriod(tq + ahead * DAY_MS);
      }
      let back = (today - target + 7) % 7;
      if ((modifier === 'last' || modifier === 'past') && back === 0) back = 7;
      return dayPeriod(tq - back * DAY_MS);
    },
  },
];

/**
 * Time words written in capitals in a question that is not: part of a name ("USA TODAY", "NOW
 * Magazine"), not a time.
 */
function isCapitalisedName(question: string, words: string): boolean {
  return /\p{Lu}{2}/u.test(words) && !/\p{Ll}/u.test(words) && /\p{Ll}/u.test(question);
}

function findRelative(question: string, tq: number, rules: readonly RelativeRule[]): DatedCore[] {
  const found: DatedCore[] = [];
  for (const rule of rules) {
    for (const m of question.matchAll(new RegExp(rule.pattern.source, rule.pattern.flags))) {
      if (isCapitalisedName(question, m[0])) continue;
      const resolved = rule.resolve(m, tq);
      if (resolved === undefined) continue;
      found.push({ start: m.index, end: m.index + m[0].length, period: resolved, kind: 'relative' });
    }
  }
  return found;
}

const YEAR = String.raw`(1[89]\d\d|20\d\d)`;

/** Seasons with a year, quarters, decades, year ranges and bare years. */
function findYears(question: string, tq: number): { dated: DatedCore[]; eventYears: TimeExpression[] } {
  const dated: DatedCore[] = [];
  const eventYears: TimeExpression[] = [];
  const add = (m: RegExpMatchArray, period: Period, kind: DatedCore['kind'], unit?: 'year'): void => {
    dated.push({ start: m.index!, end: m.index! + m[0].length, period, kind, ...(unit ? { unit } : {}) });
  };
  for (const m of question.matchAll(
    new RegExp(String.raw`\b(?:the\s+)?(spring|summer|autumn|fall|winter)\s+(?:of\s+)?${YEAR}\b`, 'gi'),
  )) {
    add(m, seasonPeriod(m[1]!, Number(m[2])), 'date');
  }
  for (const m of question.matchAll(
    new RegExp(
      String.raw`\b(?:q([1-4])|(?:the\s+)?(first|second|third|fourth)\s+quarter)(?:\s+of)?\s+${YEAR}\b(?!\s+(?:results|earnings|figures|report|gdp|growth))`,
      'gi',
    ),
  )) {
    const q =
      m[1] !== undefined ? Number(m[1]) - 1 : ['first', 'second', 'third', 'fourth'].indexOf(m[2]!.toLowerCase());
    const year = Number(m[3]);
    add(m, { from: Date.UTC(year, q * 3, 1), to: Date.UTC(year, q * 3 + 3, 1) - 1 }, 'date');
  }
  for (const m of question.matchAll(/\b(?:the\s+)?(1[89]|20)(\d)0['’]?s\b/gi)) {
    const from = Number(`${m[1]}${m[2]}0`);
    add(m, { from: Date.UTC(from, 0, 1), to: Date.UTC(from + 10, 0, 1) - 1 }, 'date');
  }
  for (const m of question.matchAll(new RegExp(String.raw`\b${YEAR}\s*(?:–|—|-|to|through|until)\s*${YEAR}\b`, 'gi'))) {
    add(m, span(yearPeriod(Number(m[1])), yearPeriod(Number(m[2]))), 'range');
  }
  for (const m of question.matchAll(new RegExp(String.raw`\b${YEAR}\b`, 'g'))) {
    const start = m.index;
    const end = start + m[0].length;
    if (dated.some((d) => d.start <= start && end <= d.end)) continue;
    const before = question.slice(0, start);
    const after = question.slice(end);
    // Money, numbers, codes and scores: "$2019", "2,019", "2019.5", "No. 2019", "2019%", "10-2019".
    if (/[$£€#\d.,:/]$|\bno\.\s*$/i.test(before) || /^(?:[\d%]|[.,:/]\d|\s*(?:%|percent|per\s+cent))/i.test(after)) {
      continue;
    }
    // "2024–25 season": the season's name.
    if (/^\s*[–—-]\s*\d{2}\b/.test(after)) {
      eventYears.push({
        text: question.slice(start, end + /^\s*[–—-]\s*\d{2}/.exec(after)![0].length),
        start,
        end: end + /^\s*[–—-]\s*\d{2}/.exec(after)![0].length,
        kind: 'event',
      });
      continue;
    }
    const nextWord = /^\s+([\p{L}'’]+)/u.exec(after)?.[1];
    const followedByNoun = nextWord !== undefined && !AFTER_YEAR.has(nextWord.toLowerCase());
    const previousWord = /([\p{L}'’]+)\s*$/u.exec(before)?.[1];
    const lead = LEAD_PATTERN.exec(before);
    const determiner = /(?:\b(?:the|a|an|this|that|its|his|her|their|our|your)|['’]s)\s+$/i.test(before);
    // "the 2024 election", "Trump's 2016 campaign", "in the 2022 World Cup": a named occurrence.
    if (determiner && (followedByNoun || lead?.[2] !== undefined)) {
      eventYears.push({ text: m[0], start, end, kind: 'event' });
      continue;
    }
    // "2024 presidential election": a year in front of an occurrence's name.
    if (followedByNoun && lead === null && !COUNTED.test(after) && EVENT_AFTER_YEAR.test(after)) {
      eventYears.push({ text: m[0], start, end, kind: 'event' });
      continue;
    }
    // "Euro 2024", "Expo 2025", "Flight 2019": part of a name.
    const capitalisedName =
      previousWord !== undefined &&
      /^\p{Lu}/u.test(previousWord) &&
      !MONTH_WORD.test(previousWord) &&
      !LEADS.some(([w]) => w === previousWord.toLowerCase()) &&
      /\S\s+\S+\s*$/.test(before);
    if (capitalisedName) {
      eventYears.push({ text: m[0], start, end, kind: 'event' });
      continue;
    }
    // "2019 people", "around 2000 troops": a count. A real preposition keeps the year ("since 2015 migrants…").
    const strongLead = lead !== null && lead[1]!.toLowerCase() !== 'around' && lead[1]!.toLowerCase() !== 'over';
    if (followedByNoun && !strongLead) continue;
    if (Number(m[1]) > new Date(tq).getUTCFullYear() + 50) continue;
    add(m, yearPeriod(Number(m[1])), 'date', 'year');
  }
  return { dated, eventYears };
}

/** Absolute dates by chrono-node, with the precision rules a question needs. */
function findAbsolute(question: string, tq: number): DatedCore[] {
  const found: DatedCore[] = [];
  for (const result of chrono.parse(question, { instant: new Date(tq), timezone: 0 })) {
    const tags = result.tags();
    // Relative words are read by this module's own rules, which know calendar units.
    if ([...tags].some((t) => t.startsWith('result/relativeDate') || t.startsWith('casualReference'))) continue;
    const start = result.index;
    const text = result.text.replace(/[\s,;:]+$/, '');
    const end = start + text.length;
    if (question.slice(start, end) !== text) continue;
    // chrono reads "end of January" as January 31: the month it is, narrowed like "late January".
    const part = /^(?:the\s+)?(?:end|beginning|start|middle)\s+of\s+(?:the\s+)?/i.exec(text);
    if (part !== null && MONTH_WORD.test(text.slice(part[0].length))) {
      const month0 = result.start.get('month')! - 1;
      const year = result.start.isCertain('year') ? result.start.get('year')! : latestYearFor(month0, 1, tq);
      found.push({
        start: start + part[0].length,
        end,
        period: monthPeriod(year, month0),
        kind: 'date',
        unit: 'month',
      });
      continue;
    }
    if (result.end) {
      // "January–February 2025": the end's year is the start's too (a year earlier across New Year).
      const last = periodOf(result.end, question, start, end, tq, undefined, true);
      const startMonth = result.start.get('month');
      const hint =
        last === undefined || result.start.isCertain('year') || startMonth === null
          ? undefined
          : startMonth - 1 > new Date(last.period.from).getUTCMonth()
            ? last.year - 1
            : last.year;
      const first = periodOf(result.start, question, start, end, tq, hint, true);
      if (first !== undefined && last !== undefined && last.period.to >= first.period.from) {
        found.push({ start, end, period: span(first.period, last.period), kind: 'range' });
        continue;
      }
    }
    const first = periodOf(result.start, question, start, end, tq);
    if (first === undefined) continue;
    found.push({
      start,
      end,
      period: first.period,
      kind: 'date',
      ...(first.unit === 'month' ? { unit: 'month' } : {}),
      ...(result.start.isCertain('year') ? {} : { yearless: true }),
    });
  }
  return found;
}

const MONTH_NUMBER: Record<string, number> = {
  jan: 0,
  feb: 1,
  mar: 2,
  apr: 3,
  may: 4,
  jun: 5,
  jul: 6,
  aug: 7,
  sep: 8,
  oct: 9,
  nov: 10,
  dec: 11,
};

/**
 * Month names alone that chrono passes over: it reads "May" only after "in", as a guard against the
 * modal verb, so "during May" and "since May" would be lost. The same rules as chrono's months apply.
 */
function findBareMonths(question: string, tq: number): DatedCore[] {
  const found: DatedCore[] = [];
  for (const m of question.matchAll(new RegExp(MONTH_WORD.source, 'gi'))) {
    const word = m[0].replace(/\.$/, '');
    if (word.length < 3 || !bareMonthIsDate(question, m.index, word)) continue;
    const month0 = MONTH_NUMBER[word.slice(0, 3).toLowerCase()]!;
    const period = monthPeriod(latestYearFor(month0, 1, tq), month0);
    found.push({ start: m.index, end: m.index + word.length, period, kind: 'date', unit: 'month', yearless: true });
  }
  return found;
}

/** The period one chrono component states, or undefined when it is not certainly a date. */
function periodOf(
  c: chrono.ParsedComponents,
  question: string,
  start: number,
  end: number,
  tq: number,
  yearHint?: number,
  /** One end of a range: a month name there is a date without a preposition ("January–March 2025"). */
  inRange = false,
): { period: Period; unit: 'day' | 'month'; year: number } | undefined {
  if (!c.isCertain('month')) return undefined;
  const text = question.slice(start, end);
  const month0 = c.get('month')! - 1;
  const dayKnown = c.isCertain('day');
  const monthName = MONTH_WORD.exec(text);
  if (monthName === null) {
    // "3/4" is as often a fraction or a score as a date: numeric dates need their year.
    if (!c.isCertain('year')) return undefined;
  } else if (
    !inRange &&
    !dayKnown &&
    !c.isCertain('year') &&
    !bareMonthIsDate(question, start + monthName.index, monthName[0])
  ) {
    return undefined;
  } else if (!plausibleMonthName(question, start + monthName.index, monthName[0], dayKnown || c.isCertain('year'))) {
    return undefined;
  }
  const day = dayKnown ? c.get('day')! : 1;
  const year = c.isCertain('year') ? c.get('year')! : (yearHint ?? latestYearFor(month0, day, tq));
  if (dayKnown) {
    const t = Date.UTC(year, month0, day);
    if (new Date(t).getUTCMonth() !== month0) return undefined;
    return { period: dayPeriod(t), unit: 'day', year };
  }
  return { period: monthPeriod(year, month0), unit: 'month', year };
}

/** "Mar-a-Lago", "May-ling": a month's letters joined to a lower-case word are part of a name. */
function inHyphenatedName(question: string, at: number, word: string): boolean {
  return /^[-‑]\p{Ll}/u.test(question.slice(at + word.length));
}

/** A month name that is a name or a word: "Theresa May", "May's", lower-case "march". */
function plausibleMonthName(question: string, at: number, word: string, dated: boolean): boolean {
  if (inHyphenatedName(question, at, word)) return false;
  const previous = /([\p{L}'’.]+)\s+$/u.exec(question.slice(Math.max(0, at - 40), at))?.[1];
  if (/^['’]s\b/.test(question.slice(at + word.length))) return false;
  // "Theresa May 2019", "Brian May": a capitalised name right before the month.
  if (
    previous !== undefined &&
    /^\p{Lu}\p{Ll}/u.test(previous) &&
    !LEADS.some(([w]) => w === previous.toLowerCase()) &&
    !/^(?:early|mid|late|last|this|next|and)$/i.test(previous)
  ) {
    return false;
  }
  // A lower-case month needs a day or a year with it ("in march" alone is the verb as often).
  return /^\p{Lu}/u.test(word) || dated || LEAD_PATTERN.test(question.slice(0, at));
}

/** A month without day or year: only after a preposition, and not followed by a verb or "on". */
function bareMonthIsDate(question: string, at: number, word: string): boolean {
  if (inHyphenatedName(question, at, word)) return false;
  const before = question.slice(0, at);
  const narrowed = NARROWING.exec(before);
  const lead = LEAD_PATTERN.exec(
    narrowed ? before.slice(0, narrowed.index + (narrowed[0].startsWith(' ') ? 1 : 0)) : before,
  );
  // "in January and February": the second month shares the first one's preposition.
  const listed = new RegExp(String.raw`${MONTH_WORD.source}\s*(?:,|and|or)\s*$`, 'i').test(before);
  if (lead === null && narrowed === null && !listed && !/\b(?:last|this|early|mid|late)[\s-]*$/i.test(before)) {
    return false;
  }
  // "in the March on Washington": a determiner makes it a noun.
  if (lead?.[2] !== undefined) return false;
  const next = /^\s*([\p{L}'’]+|[^\s\p{L}])?/u.exec(question.slice(at + word.length))?.[1];
  if (next === undefined || /^[^\p{L}]$/u.test(next)) return true;
  if (/^\p{Lu}/u.test(next)) return !/^(?:on)$/i.test(next);
  return AFTER_BARE_MONTH.has(next.toLowerCase());
}

// ---------------------------------------------------------------------------------------------
// Relating and combining

/** The preposition (and early/mid/late) in front of a period, and how far back they reach. */
function relate(question: string, core: DatedCore): DatedExpression {
  let start = core.start;
  let period = core.period;
  let before = question.slice(0, start);
  const narrowing = NARROWING.exec(before);
  if (narrowing !== null && core.unit !== undefined) {
    period = narrow(period, narrowing[1]!, core.unit);
    start = narrowing.index + (/^\s/.test(narrowing[0]) ? 1 : 0);
    before = question.slice(0, start);
  }
  const lead = LEAD_PATTERN.exec(before);
  let relation: Relation = 'in';
  if (lead !== null) {
    relation = LEADS.find(([w]) => w === normaliseLead(lead[1]!))?.[1] ?? relation;
    start = lead.index + (/^[\s(,;:—–-]/.test(lead[0]) ? 1 : 0);
  }
  // "from January onwards" is "since January".
  if (/^\s+onwards?\b/i.test(question.slice(core.end)) && (relation === 'in' || relation === 'since'))
    relation = 'since';
  return { ...core, start, period, relation };
}

const normaliseLead = (lead: string): string => lead.toLowerCase().replace(/\s+/g, ' ');

function narrow(period: Period, how: string, unit: 'month' | 'year'): Period {
  const word = how.toLowerCase();
  const d = new Date(period.from);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const week = /(first|second|third|fourth|last)\s+week/.exec(word)?.[1];
  if (week !== undefined && unit === 'month') {
    if (week === 'last') return { from: period.to + 1 - 7 * DAY_MS, to: period.to };
    const from = Date.UTC(y, m, 1 + 7 * ['first', 'second', 'third', 'fourth'].indexOf(week));
    return { from, to: from + 7 * DAY_MS - 1 };
  }
  const half = /(first|second)\s+half/.exec(word)?.[1];
  if (half !== undefined) {
    const middle = unit === 'month' ? Date.UTC(y, m, 16) : Date.UTC(y, 6, 1);
    return half === 'first' ? { from: period.from, to: middle - 1 } : { from: middle, to: period.to };
  }
  const part = /early|beginning|start/.test(word) ? 0 : /mid|middle/.test(word) ? 1 : 2;
  if (unit === 'month') {
    const starts = [1, 11, 21, 32] as const;
    return { from: Date.UTC(y, m, starts[part]), to: part === 2 ? period.to : Date.UTC(y, m, starts[part + 1]) - 1 };
  }
  return { from: Date.UTC(y, part * 4, 1), to: Date.UTC(y, part * 4 + 4, 1) - 1 };
}

/** "between January 5 and February 2", "from 2019 to 2021", "January–March 2025": one range. */
function joinRanges(question: string, expressions: DatedExpression[]): DatedExpression[] {
  const joined: DatedExpression[] = [];
  for (const current of expressions) {
    const previous = joined.at(-1);
    const gap = previous ? question.slice(previous.end, current.start) : '';
    const opensRange =
      previous !== undefined && /^(?:between|from)\b/i.test(question.slice(previous.start, previous.end));
    if (
      previous !== undefined &&
      ((opensRange && /^\s*(?:and|to|until|till|through|[–—-])\s*$/i.test(gap)) || /^\s*[–—]\s*$/.test(gap))
    ) {
      const end = current.period.to >= previous.period.from ? current.period : shiftYearForward(current.period);
      joined[joined.length - 1] = {
        ...previous,
        end: current.end,
        period: span(previous.period, end),
        kind: 'range',
        relation: 'in',
      };
      continue;
    }
    joined.push(current);
  }
  return joined;
}

function shiftYearForward(p: Period): Period {
  return { from: shift(p.from, 'year', 1), to: shift(p.to + 1, 'year', 1) - 1 };
}

/** Non-overlapping, the earlier and then the longer first. */
function withoutOverlaps<T extends { start: number; end: number }>(items: T[]): T[] {
  const sorted = [...items].sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: T[] = [];
  for (const item of sorted) {
    const last = kept.at(-1);
    if (last !== undefined && item.start < last.end) continue;
    kept.push(item);
  }
  return kept;
}

/** Spans the earlier finders claimed, so that the later ones do not read them again. */
function overlapsAny(
  item: { start: number; end: number },
  claimed: readonly { start: number; end: number }[],
): boolean {
  return claimed.some((c) => item.start < c.end && c.start < item.end);
}

function findEventAnchor(
  question: string,
  claimed: readonly { start: number; end: number }[],
): { anchor: EventAnchor; start: number; end: number } | undefined {
  const pattern =
    /\b(in\s+the\s+run-up\s+to|leading\s+up\s+to|in\s+the\s+(?:wake|aftermath)\s+of|prior\s+to|ahead\s+of|before|after|since|until|following)\s+([^?.!,;]*)/gi;
  for (const m of question.matchAll(pattern)) {
    const leadWord = m[1]!.toLowerCase().replace(/\s+/g, ' ');
    // A named event: a determiner or a capitalised name first ("the election", "Trump's inauguration").
    if (!/^(?:the|a|an|his|her|its|their|this|last)\b/i.test(m[2]!) && !/^\p{Lu}/u.test(m[2]!)) continue;
    const phraseStart = m.index + m[0].length - m[2]!.length;
    const before = question.slice(0, m.index);
    if (leadWord === 'following' && /\bthe\s+$/i.test(before)) continue;
    if (leadWord === 'before' && NOT_TEMPORAL_BEFORE.test(before)) continue;
    if (leadWord === 'after' && NOT_TEMPORAL_AFTER.test(before)) continue;
    if (NOT_TEMPORAL_OBJECT.test(m[2]!)) continue;
    // The phrase ends where the clause does: a conjunction or a question word.
    const phrase = m[2]!
      .replace(
        /\s+(?:and|but|when|while|what|who|whom|how|why|where|did|does|do|was|were|is|are|has|have|had)\b.*$/i,
        '',
      )
      .trim();
    if (phrase === '') continue;
    const end = phraseStart + phrase.length;
    // A date in the phrase ("before the January 20 inauguration") is read as that date.
    if (overlapsAny({ start: phraseStart, end }, claimed)) continue;
    const relation = /before|prior|ahead|until|run-up|leading/.test(leadWord) ? 'before' : 'after';
    return { anchor: { relation, phrase }, start: m.index, end };
  }
  return undefined;
}

function findRecency(question: string, claimed: readonly { start: number; end: number }[]): TimeExpression[] {
  const found: TimeExpression[] = [];
  for (const m of question.matchAll(RECENCY_WORDS)) {
    const item = { start: m.index, end: m.index + m[0].length };
    if (overlapsAny(item, claimed)) continue;
    if (NOT_RECENCY.test(question.slice(m.index))) continue;
    found.push({ text: m[0], ...item, kind: 'recency' });
  }
  return found;
}

/** A recurring event named without its year, and nothing that says another occurrence is meant. */
function recurringEvent(question: string): string | undefined {
  if (NOT_LATEST.test(question)) return undefined;
  for (const m of question.matchAll(RECURRING_EVENT_GLOBAL)) {
    // "the first Super Bowl": a particular occurrence.
    if (/\b(?:first|inaugural|original|\d+(?:st|nd|rd|th))\s+$/i.test(question.slice(0, m.index))) continue;
    return m[0];
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The intent

/**
 * The question's time words, resolved as of tq: constraint, publication window, reference time,
 * recency preference and, for "before/after <named event>", the anchor a lookup must resolve.
 */
export function understandQuestionTime(question: string, tq: number): QuestionTimeIntent {
  const years = findYears(question, tq);
  // Relative words first (they know their units), then chrono's dates, weekdays, then years.
  const groups = [
    findRelative(question, tq, RELATIVE_RULES),
    findAbsolute(question, tq),
    findBareMonths(question, tq),
    findRelative(question, tq, WEEKDAY_RULES),
    years.dated,
  ];
  const cores: DatedCore[] = [];
  for (const group of groups) {
    for (const core of withoutOverlaps(group)) {
      if (!overlapsAny(core, cores)) cores.push(core);
    }
  }
  cores.sort((a, b) => a.start - b.start);
  const dated = joinRanges(
    question,
    cores.map((core) => relate(question, core)),
  );
  const eventYears = years.eventYears.filter((e) => !overlapsAny(e, dated));
  const anchorFound = findEventAnchor(question, dated);
  const recencyWords = findRecency(question, [...dated, ...eventYears]);

  const placed = placeInNamedYear(dated).map((d) => upcomingIfFuture(question, d, tq));
  const background = backgroundOf(placed, tq);
  const framing = placed.filter((d) => !background.includes(d));
  const combined = combine(framing, tq);
  const recurring = dated.length === 0 && eventYears.length === 0 ? recurringEvent(question) : undefined;
  const recency = recencyWords.length > 0 || combined.future || recurring !== undefined;
  const asksLatest =
    combined.future || recurring !== undefined || recencyWords.some((w) => !PRESENT_TIME_WORDS.test(w.text));

  const expressions: TimeExpression[] = [
    ...dated.map((d) => ({
      text: question.slice(d.start, d.end),
      start: d.start,
      end: d.end,
      kind: d.kind === 'range' ? ('range' as const) : d.kind,
    })),
    ...eventYears,
    ...recencyWords,
    ...(anchorFound
      ? [
          {
            text: question.slice(anchorFound.start, anchorFound.end),
            start: anchorFound.start,
            end: anchorFound.end,
            kind: 'event' as const,
          },
        ]
      : []),
  ].sort((a, b) => a.start - b.start);

  let constraint = combined.constraint;
  if (constraint === 'none' && anchorFound !== undefined) constraint = anchorFound.anchor.relation;
  const intent: QuestionTimeIntent = {
    expressions,
    constraint,
    ...(combined.window === undefined ? {} : { window: combined.window }),
    reference: combined.reference ?? tq,
    recency,
    asksLatest,
    ...(anchorFound === undefined ? {} : { eventAnchor: anchorFound.anchor }),
    // Background periods stay in the topic: "the January 6, 2021, attack" is what the question is about.
    topic: topicOf(question, [...framing, ...recencyWords]),
    explanation: '',
  };
  intent.explanation = explain(intent, tq, framing, combined.future, recurring, background);
  return intent;
}

const isWholeYear = (p: Period): boolean => {
  const from = new Date(p.from);
  return (
    from.getUTCMonth() === 0 &&
    from.getUTCDate() === 1 &&
    p.from % DAY_MS === 0 &&
    p.to === yearPeriod(from.getUTCFullYear()).to
  );
};

/**
 * A question set in a recent period up to now ("this week", "today", "the past few days") is asked
 * of that period's reports; an earlier period it also names ("the January 6, 2021, attack", "in
 * August last year") is the story's background, not a second period to unite with it (which would
 * read "this week … in August last year" as "since last August").
 */
function backgroundOf(dated: readonly DatedExpression[], tq: number): DatedExpression[] {
  const recent = dated.find(
    (d) =>
      d.relation === 'in' &&
      d.kind === 'relative' &&
      d.period.to >= dayStart(tq) &&
      d.period.from <= tq &&
      tq - d.period.from <= RECENT_PERIOD_DAYS * DAY_MS,
  );
  if (recent === undefined) return [];
  return dated.filter(
    (d) => d !== recent && (d.relation === 'in' || d.relation === 'around') && d.period.to < recent.period.from,
  );
}

/** Words that put a clause in the future ("will decrease … in November"). */
const FUTURE_TENSE =
  /\b(?:will|won['’]t|shall|(?:is|are|was|were)\s+(?:set|going|scheduled|expected|due)\s+to|plans?\s+to|planning\s+to|upcoming)\b/i;

/**
 * A date without a year is its latest occurrence by tq, unless its sentence has spoken of the future:
 * "will decrease its charges beginning in November", asked in September, is the coming November
 * (then only earlier coverage exists, and the latest is meant).
 */
function upcomingIfFuture(question: string, d: DatedExpression, tq: number): DatedExpression {
  if (d.yearless !== true || d.relation !== 'in' || d.period.to >= dayStart(tq)) return d;
  // The future word comes before the date in its sentence: "say in March that it will" is past.
  const sentenceStart = Math.max(...['.', '?', '!'].map((c) => question.lastIndexOf(c, d.start - 1))) + 1;
  if (!FUTURE_TENSE.test(question.slice(sentenceStart, d.start))) return d;
  return { ...d, period: shiftYearForward(d.period) };
}

/** "on July 4 last year", "in March, 2019": a date without a year takes the year named beside it. */
function placeInNamedYear(dated: DatedExpression[]): DatedExpression[] {
  const year = dated.find((d) => d.relation === 'in' && d.yearless !== true && isWholeYear(d.period));
  if (year === undefined) return dated;
  const target = new Date(year.period.from).getUTCFullYear();
  return dated.map((d) => {
    if (d.yearless !== true) return d;
    const months = 12 * (target - new Date(d.period.from).getUTCFullYear());
    return { ...d, period: { from: addMonths(d.period.from, months), to: addMonths(d.period.to + 1, months) - 1 } };
  });
}

/** The periods another "in" period lies inside: "on July 4 last year" names the day, not the year. */
function withoutEnclosing(dated: DatedExpression[]): DatedExpression[] {
  const inside = (o: Period, d: Period): boolean =>
    d.from <= o.from && o.to <= d.to && (o.from !== d.from || o.to !== d.to);
  return dated.filter(
    (d) => d.relation !== 'in' || !dated.some((o) => o !== d && o.relation === 'in' && inside(o.period, d.period)),
  );
}

/**
 * Periods named "in"/"on" are united ("in 2019 or 2020"); since/after give a lower bound, before/until
 * an upper one; all are intersected, then cut at tq. A period entirely after tq ("next week") is no
 * window: the question is about the future, and only the latest earlier coverage can answer it.
 */
function combine(
  dated: DatedExpression[],
  tq: number,
): { constraint: QuestionTimeConstraint; window?: PublicationWindow; reference?: number; future: boolean } {
  if (dated.length === 0) return { constraint: 'none', future: false };
  let inside: Period | undefined;
  let lower: number | undefined;
  let upper: number | undefined;
  let around: number | undefined;
  let future = false;
  for (const d of withoutEnclosing(dated)) {
    switch (d.relation) {
      case 'in':
        if (d.period.from > tq) future = true;
        else inside = inside === undefined ? d.period : span(inside, d.period);
        break;
      case 'around': {
        const centre = d.period.from + Math.floor((d.period.to - d.period.from + 1) / 2 / DAY_MS) * DAY_MS;
        const p = { from: centre - AROUND_DAYS * DAY_MS, to: centre + (AROUND_DAYS + 1) * DAY_MS - 1 };
        if (p.from > tq) future = true;
        else {
          around = centre;
          inside = inside === undefined ? p : span(inside, p);
        }
        break;
      }
      case 'since':
        lower = Math.max(lower ?? -Infinity, d.period.from);
        break;
      case 'after':
        lower = Math.max(lower ?? -Infinity, d.period.to + 1);
        break;
      case 'before':
        upper = Math.min(upper ?? Infinity, d.period.from - 1);
        break;
      case 'until':
        upper = Math.min(upper ?? Infinity, d.period.to);
        break;
    }
  }
  const from = Math.max(inside?.from ?? -Infinity, lower ?? -Infinity);
  const to = Math.min(inside?.to ?? Infinity, upper ?? Infinity, tq);
  if (from > to) {
    // Only after tq ("since next Monday", "after 2030"): nothing published yet; the latest coverage.
    return { constraint: 'none', future: true };
  }
  if (inside === undefined && lower === undefined && upper === undefined) return { constraint: 'none', future };
  const window: PublicationWindow = { ...(Number.isFinite(from) ? { from } : {}), to };
  let constraint: QuestionTimeConstraint;
  if (around !== undefined && inside !== undefined && lower === undefined && upper === undefined) constraint = 'around';
  else if (inside !== undefined || (lower !== undefined && upper !== undefined)) constraint = 'within';
  else if (lower !== undefined) constraint = 'after';
  else constraint = 'before';
  return { constraint, window, reference: constraint === 'around' ? around! : to, future };
}

/** The question without its time words and their prepositions, for matching. */
function topicOf(question: string, spans: readonly { start: number; end: number }[]): string {
  let topic = '';
  let at = 0;
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    if (s.start < at) continue;
    const gap = question.slice(at, s.start);
    // "in 2019 and 2020": the word joining two removed expressions goes with them.
    topic += at > 0 && /^\s*(?:and|or|,|to)\s*$/i.test(gap) ? ' ' : `${gap} `;
    at = s.end;
  }
  topic += question.slice(at);
  return topic
    .replace(/\s+/g, ' ')
    .replace(/\s+([?.!,;:])/g, '$1')
    .replace(/([,;:])\s*([?.!])/g, '$2')
    .replace(/^[\s,;:]+/, '')
    .trim();
}

function windowText(window: PublicationWindow, tq: number): string {
  const end = window.to === undefined || window.to >= tq ? 'the query time' : iso(window.to);
  if (window.from === undefined) return `published by ${end}`;
  if (window.to !== undefined && iso(window.from) === iso(window.to)) return `published on ${iso(window.from)}`;
  return `published ${iso(window.from)} – ${end}`;
}

function explain(
  intent: QuestionTimeIntent,
  tq: number,
  dated: DatedExpression[],
  future: boolean,
  recurring: string | undefined,
  background: readonly DatedExpression[],
): string {
  const quoted = dated.map((d) => `“${intent.expressions.find((e) => e.start === d.start)?.text ?? ''}”`).join(', ');
  const parts: string[] = [];
  if (intent.window !== undefined) {
    const base =
      intent.constraint === 'around'
        ? `published around ${iso(intent.reference)} (±${AROUND_DAYS} days)`
        : intent.constraint === 'after'
          ? `published since ${iso(intent.window.from!)}`
          : intent.constraint === 'before'
            ? `published by ${intent.window.to! >= tq ? 'the query time' : iso(intent.window.to!)}`
            : windowText(intent.window, tq);
    parts.push(`${base} (${quoted})`);
  }
  if (intent.eventAnchor !== undefined) {
    parts.push(`published ${intent.eventAnchor.relation} ${intent.eventAnchor.phrase} (its date needs a lookup)`);
  }
  if (intent.recency && !intent.asksLatest) {
    const words = intent.expressions.filter((e) => e.kind === 'recency').map((e) => `“${e.text}”`);
    parts.push(`recent coverage preferred: about the present (${words.join(', ')})`);
  } else if (intent.recency) {
    const why = future
      ? `asks about a time after ${iso(tq)} (${quoted})`
      : recurring !== undefined && !intent.expressions.some((e) => e.kind === 'recency')
        ? `“${recurring}” recurs and no year is named`
        : `asks for the latest (${intent.expressions
            .filter((e) => e.kind === 'recency')
            .map((e) => `“${e.text}”`)
            .join(', ')})`;
    parts.push(`the most recent matching coverage before ${iso(tq)}: ${why}`);
  }
  if (background.length > 0) {
    const words = background.map((d) => `“${intent.expressions.find((e) => e.start === d.start)?.text ?? ''}”`);
    parts.push(`the story's background, not a window: ${words.join(', ')}`);
  }
  const named = intent.expressions.filter((e) => e.kind === 'event' && e.text !== intent.eventAnchor?.phrase);
  if (parts.length === 0 && named.length > 0) {
    return `names an occurrence (${named.map((e) => `“${e.text}”`).join(', ')}): no publication window, as of ${iso(tq)}`;
  }
  return parts.length === 0 ? `no time words: as of ${iso(tq)}` : parts.join('; ');
}

// ---------------------------------------------------------------------------------------------
// The request

/**
 * The request with the question's time intent applied. The caller's own time parameters win: an
 * explicit constraint or window replaces the question's time scope as a whole (its constraint and
 * window are one reading of the same words, and half of it mixed with the caller's would be
 * neither); recency is applied unless the caller set it. `eventAt`, when a lookup has dated the
 * event anchor, turns "before/after the election" into that constraint.
 *
 * before/after set the request's constraint at the window's bound (the same filter, named as META
 * names it); within and around set the window alone, as the request's `around` (±window_days about
 * one instant) cannot state a month and a week either side.
 */
export function applyTimeIntent(
  request: SearchRequest,
  intent: QuestionTimeIntent,
  explicit: ExplicitTimeParameters,
  eventAt?: number,
): SearchRequest {
  const applied: SearchRequest = { ...request };
  if (!explicit.recency && request.recency === undefined) applied.recency = intent.recency;
  if (explicit.constraint || explicit.window) return applied;
  let window = intent.window;
  let constraint = intent.constraint;
  if (window === undefined && intent.eventAnchor !== undefined && eventAt !== undefined && eventAt <= request.tq) {
    constraint = intent.eventAnchor.relation;
    window = constraint === 'before' ? { to: eventAt } : { from: eventAt, to: request.tq };
  }
  if (window === undefined) return applied;
  applied.window = { ...window };
  if (constraint === 'before' && window.to !== undefined) {
    applied.constraint = 'before';
    applied.constraintAt = window.to;
  } else if (constraint === 'after' && window.from !== undefined) {
    applied.constraint = 'after';
    applied.constraintAt = window.from;
  }
  return applied;
}

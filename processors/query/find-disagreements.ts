/**
 * Two sources that report one event with different facts ("12 killed" on one site, "15 killed" on
 * another), so the answer can say both, each dated and cited, instead of quietly picking one.
 *
 * A false "sources differ" misleads more than silence, so the rule is narrow. Two sentences disagree
 * when all of these hold:
 *
 * - **different sources**: both items have a URL and their publishers differ (the host without
 *   `www.`/`m.`/`amp.`, down to its registrable part: `edition.cnn.com` is `cnn.com`). A
 *   publisher's own correction is on its own host, so it is never a disagreement (and retrieval
 *   already leaves the superseded report out);
 * - **close in time**: reported within three days of each other;
 * - **the same event**: apart from the figures (and, for a name, the names in dispute) the two
 *   sentences share at least three content words and half of the shorter one's; their names agree
 *   (the same names for a share, a count of things or a name in dispute — "Smith won in Springfield"
 *   is not "Jones won in Shelbyville" —, at least one in common for a death or injury toll);
 * - **the same slot, different values**:
 *   - a figure tied to the same unit, once in each sentence: a toll (killed/dead/died, injured,
 *     missing, arrested, displaced; "12 soldiers killed" is another slot than "15 killed"), a
 *     percentage (of the same thing: "of the vote"), an amount of money, or a count of a listed noun
 *     (seats, votes, people…). A unit that holds two values in one sentence cannot be matched and is
 *     left out. Values disagree only when both cannot be true: "at least 12" and "15" agree, "about
 *     100" and "104" agree (within 10%), "12" and "15" do not;
 *   - or, for a question asking for a name, each sentence gives exactly one answer name the other
 *     does not, and the two share no word ("Jane Smith" / "Maria Jones").
 *
 * Pure: no I/O. Only items whose text holds a figure are split into sentences.
 */
import { splitSentences } from '../markup/split-sentences.js';
import { namesIn, namesSeenMidSentence, withoutDateline } from './answer-candidates.js';
import { contentTerms, words } from './question-terms.js';
import { cardinalValue, CARDINALS_BELOW_TWENTY, DIGIT_WORDS, TENS } from './number-words.js';

/** What is read of a retrieved item. */
export interface ReportedItem {
  text: string;
  /** ISO 8601. */
  published_at: string;
  url: string | null;
}

/** A sentence the answer states, with the answers of the asked kind it gives. */
export interface StatedSentence {
  /** Index of its item (0-based). */
  item: number;
  text: string;
  /** Names (or other answers) of the kind the question asks for that the question does not give. */
  answers: readonly string[];
}

export interface DisagreeingReport {
  /** Index of the item (0-based). */
  item: number;
  /** The publisher's host, as written in the URL (without `www.`). */
  source: string;
  /** What it reports, e.g. "12 killed", "28.5% of the vote", "Smith". */
  value: string;
  /** The sentence it is read from, verbatim. */
  sentence: string;
  /** ISO 8601, the item's time. */
  published_at: string;
}

export interface Disagreement {
  /** What the reports disagree about: "killed", "injured", "% of vote", "seat", "$", "name"… */
  slot: string;
  /** The two reports, the earlier first. */
  reports: [DisagreeingReport, DisagreeingReport];
}

export interface FindOptions {
  /** The question asks for a name (who, where, which <noun>): different answer names can disagree. */
  nameAnswers?: boolean;
  /** At most this many disagreements. Default 2. */
  limit?: number;
}

const SAME_EVENT_MS = 3 * 24 * 60 * 60 * 1000;
const MIN_SHARED_TERMS = 3;
const MIN_SHARED_SHARE = 0.5;
/** Two approximate figures ("about 100") agree within this share of the larger. */
const APPROXIMATE_SHARE = 0.1;

/** Number words from two up ("one" is left out: "no one was killed"). */
const SMALL_NUMBERS = Object.keys(CARDINALS_BELOW_TWENTY).filter((w) => w !== 'one');
const UNITS_WORDS = DIGIT_WORDS.join('|');
const SCALES: Record<string, number> = { thousand: 1e3, million: 1e6, billion: 1e9, trillion: 1e12 };

/**
 * A figure: digits (with thousands commas and decimals), a percentage, a scale word, a currency
 * sign; or a number word from two to ninety-nine ("one" is left out: "no one was killed").
 */
const FIGURE = new RegExp(
  `([$£€]\\s?)?\\b(\\d{1,3}(?:,\\d{3})+|\\d+)(\\.\\d+)?(\\s?(?:%|percent\\b|per cent\\b))?(\\s(?:thousand|million|billion|trillion)\\b)?|\\b((?:${Object.keys(TENS).join('|')})(?:-(?:${UNITS_WORDS}))?|${SMALL_NUMBERS.join('|')})\\b`,
  'gi',
);

/** Words before a figure that bound it. */
const QUALIFIER =
  /\b(at least|more than|over|nearly|almost|about|around|some|up to|fewer than|less than|under|roughly|approximately|an estimated|as many as)\s+$/i;
const LOWER_BOUNDS: ReadonlySet<string> = new Set(['at least', 'more than', 'over']);
const UPPER_BOUNDS: ReadonlySet<string> = new Set([
  'nearly',
  'almost',
  'up to',
  'fewer than',
  'less than',
  'under',
  'as many as',
]);

/** Toll words and the slot they fill. */
const TOLL_WORDS: Record<string, string> = {
  killed: 'killed',
  dead: 'killed',
  died: 'killed',
  deaths: 'killed',
  fatalities: 'killed',
  injured: 'injured',
  wounded: 'injured',
  hurt: 'injured',
  missing: 'missing',
  arrested: 'arrested',
  detained: 'arrested',
  displaced: 'displaced',
  evacuated: 'displaced',
};
/** Who a toll counts, when the sentence says: "12 soldiers killed" is not the same slot as "15 killed". */
const TOLL_NOUNS =
  'soldiers|troops|civilians|children|police|officers|militants|fighters|rebels|journalists|students|workers|migrants|passengers|residents|firefighters|miners|tourists|women|men|protesters|hostages|patients';
/** Words between a figure and a toll word that change nothing ("12 people were killed"). */
const TOLL_FILLER =
  'people|persons|others|other|more|were|was|are|is|have|has|had|been|being|reportedly|confirmed|later|also|now|so|far';
const TOLL_AFTER = new RegExp(
  `^\\s+(?:(${TOLL_NOUNS})\\s+)?(?:(?:${TOLL_FILLER})\\s+){0,4}(${Object.keys(TOLL_WORDS).join('|')})\\b`,
  'i',
);
/** A toll word before the figure: "killing 12", "injured 30", "the death toll rose to 15". */
const TOLL_BEFORE =
  /\b(killing|killed|kills|kill|injuring|injured|wounding|wounded|death toll(?:\s+\w+){0,3}?\s+(?:to|at|of|reached|hit))\s+$/i;
const TOLL_VERBS: Record<string, string> = {
  killing: 'killed',
  killed: 'killed',
  kills: 'killed',
  kill: 'killed',
  injuring: 'injured',
  injured: 'injured',
  wounding: 'injured',
  wounded: 'injured',
};
/** Things whose count two reports can disagree about. */
const COUNTED =
  /^\s+(seats|votes|delegates|people|troops|soldiers|civilians|hostages|prisoners|migrants|refugees|passengers|homes|houses|buildings|jobs|cases)\b/i;
/** A figure that measures time, distance or size is no count ("killed 12 years ago"). */
const MEASURE =
  /^\s+(?:years?|months?|weeks?|days?|hours?|minutes?|seconds?|km|kilometres?|kilometers?|miles?|metres?|meters?|feet|ft|kg|tons?|tonnes?|degrees?|times)\b/i;
const CURRENCY_AFTER = /^\s+(dollars|euros|pounds|yen|yuan|rupees)\b/i;

type Bound = 'exact' | 'lower' | 'upper' | 'about';

interface Figure {
  slot: string;
  value: number;
  bound: Bound;
  /** As reported: "12 killed", "at least 15 killed", "28.5% of the vote". */
  phrase: string;
}

function numberOf(match: RegExpMatchArray): number {
  const word = match[6];
  if (word !== undefined) {
    return cardinalValue(word) ?? 0;
  }
  const scale = match[5] === undefined ? 1 : SCALES[match[5].trim().toLowerCase()]!;
  return Number(`${match[2]!.replace(/,/g, '')}${match[3] ?? ''}`) * scale;
}

function boundOf(qualifier: string | undefined): Bound {
  if (qualifier === undefined) return 'exact';
  const q = qualifier.toLowerCase();
  if (LOWER_BOUNDS.has(q)) return 'lower';
  if (UPPER_BOUNDS.has(q)) return 'upper';
  return 'about';
}

/** The figures of a sentence tied to a unit, each unit once: a unit given two values is dropped. */
export function figuresIn(sentence: string): Figure[] {
  const found: Figure[] = [];
  for (const match of sentence.matchAll(FIGURE)) {
    const start = match.index;
    const end = start + match[0].length;
    const before = sentence.slice(0, start);
    const after = sentence.slice(end);
    if (MEASURE.test(after)) continue;
    const qualifier = QUALIFIER.exec(before)?.[1];
    const beforeFigure = qualifier === undefined ? before : before.slice(0, before.length - qualifier.length - 1);
    const written = `${qualifier === undefined ? '' : `${qualifier.toLowerCase()} `}${match[0].trim()}`;
    const value = numberOf(match);
    const bound = boundOf(qualifier);
    const currency = match[1]?.trim() ?? CURRENCY_AFTER.exec(after)?.[1]?.toLowerCase();
    if (currency !== undefined) {
      found.push({ slot: currency, value, bound, phrase: `${written}${match[1] ? '' : ` ${currency}`}` });
      continue;
    }
    if (match[4] !== undefined) {
      const of = /^\s+of\s+(?:the\s+)?(\p{L}+)/iu.exec(after)?.[1]?.toLowerCase();
      found.push({
        slot: of === undefined ? '%' : `% of ${of}`,
        value,
        bound,
        phrase: of === undefined ? written : `${written} of the ${of}`,
      });
      continue;
    }
    const tollAfter = TOLL_AFTER.exec(after);
    if (tollAfter !== null) {
      const noun = tollAfter[1]?.toLowerCase();
      const word = tollAfter[2]!.toLowerCase();
      const slot = noun === undefined ? TOLL_WORDS[word]! : `${noun} ${TOLL_WORDS[word]!}`;
      found.push({
        slot,
        value,
        bound,
        phrase: `${written.toLowerCase()} ${noun === undefined ? '' : `${noun} `}${word}`,
      });
      continue;
    }
    const tollBefore = TOLL_BEFORE.exec(beforeFigure);
    if (tollBefore !== null) {
      const verb = tollBefore[1]!.toLowerCase();
      const toll = TOLL_VERBS[verb] ?? 'killed';
      const noun = new RegExp(`^\\s+(${TOLL_NOUNS})\\b`, 'i').exec(after)?.[1]?.toLowerCase();
      found.push({
        slot: noun === undefined ? toll : `${noun} ${toll}`,
        value,
        bound,
        phrase: `${written.toLowerCase()} ${noun === undefined ? '' : `${noun} `}${toll}`,
      });
      continue;
    }
    const counted = COUNTED.exec(after)?.[1]?.toLowerCase();
    if (counted !== undefined) found.push({ slot: counted, value, bound, phrase: `${written} ${counted}` });
  }
  const bySlot = new Map<string, Figure[]>();
  for (const figure of found) bySlot.set(figure.slot, [...(bySlot.get(figure.slot) ?? []), figure]);
  return [...bySlot.values()].filter((same) => same.length === 1).map((same) => same[0]!);
}

/** Whether two figures of one slot can both be true. */
export function figuresAgree(a: Pick<Figure, 'value' | 'bound'>, b: Pick<Figure, 'value' | 'bound'>): boolean {
  if (a.bound === 'about' || b.bound === 'about') {
    return Math.abs(a.value - b.value) <= APPROXIMATE_SHARE * Math.max(a.value, b.value);
  }
  if (a.bound === b.bound && a.bound !== 'exact') return true;
  const [first, second] = a.bound === 'exact' ? [b, a] : [a, b];
  if (first.bound === 'exact') return first.value === second.value;
  // A lower bound holds for the other (exact, or an upper bound) at or above it; an upper bound, at or below.
  return first.bound === 'lower' ? first.value <= second.value : second.value <= first.value;
}

/** The host a URL names, without `www.` and the like; null for none or an unreadable one. */
export function hostOf(url: string | null): string | null {
  if (url === null) return null;
  try {
    const host = new URL(url).hostname.toLowerCase();
    return host === '' ? null : host.replace(/^(?:www\d?|m|mobile|amp|edition)\./, '');
  } catch {
    return null;
  }
}

/** The publisher of a host: its last two labels, three under a country's second level (`bbc.co.uk`). */
export function publisherOf(host: string): string {
  const labels = host.split('.');
  const secondLevel =
    labels.length >= 3 && labels.at(-1)!.length === 2 && /^(?:co|com|org|net|gov|ac|edu|ne|or)$/.test(labels.at(-2)!);
  return labels.slice(secondLevel ? -3 : -2).join('.');
}

/** Stemmed content words without figures and without the given words (the names in dispute). */
function eventTerms(sentence: string, leaveOut: readonly string[]): Set<string> {
  const out = new Set(leaveOut.flatMap((name) => contentTerms(name)));
  const withoutFigures = sentence.replace(FIGURE, ' ');
  return new Set(contentTerms(withoutFigures).filter((t) => !out.has(t) && !/^\d/.test(t)));
}

function shareEnough(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  let shared = 0;
  for (const term of a) if (b.has(term)) shared++;
  return shared >= MIN_SHARED_TERMS && shared >= MIN_SHARED_SHARE * Math.min(a.size, b.size);
}

/** The names of a sentence as folded word strings, the disputed ones left out. */
function nameKeys(sentence: string, seen: ReadonlySet<string>, leaveOut: readonly string[]): Set<string> {
  const out = new Set(leaveOut.map((name) => words(name).join(' ')));
  return new Set(
    namesIn(withoutDateline(sentence), seen)
      .map((name) => words(name).join(' '))
      .filter((key) => key !== '' && !out.has(key)),
  );
}

/** The names of `these` that `those` do not give (compared as folded words). */
function notIn(these: readonly string[], those: readonly string[]): string[] {
  const keys = new Set(those.map((name) => words(name).join(' ')));
  return these.filter((name) => !keys.has(words(name).join(' ')));
}

function sameNames(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((name) => b.has(name));
}

function shareAName(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size === 0 || b.size === 0) return true;
  return [...a].some((name) => b.has(name));
}

const TOLLS: ReadonlySet<string> = new Set(Object.values(TOLL_WORDS));

interface Sentence {
  item: number;
  text: string;
}

function report(items: readonly ReportedItem[], s: Sentence, value: string): DisagreeingReport {
  const item = items[s.item]!;
  return { item: s.item, source: hostOf(item.url)!, value, sentence: s.text, published_at: item.published_at };
}

function earlierFirst(a: DisagreeingReport, b: DisagreeingReport): [DisagreeingReport, DisagreeingReport] {
  const ta = Date.parse(a.published_at);
  const tb = Date.parse(b.published_at);
  return ta < tb || (ta === tb && a.item <= b.item) ? [a, b] : [b, a];
}

/**
 * The disagreements between the sentences an answer states and the sentences of the other items
 * (figures), or among the stated sentences (answer names), at most `limit` and one per slot, in the
 * order of the stated sentences.
 */
export function findDisagreements(
  items: readonly ReportedItem[],
  stated: readonly StatedSentence[],
  options: FindOptions = {},
): Disagreement[] {
  const limit = options.limit ?? 2;
  const found: Disagreement[] = [];
  const taken = new Set<string>();
  const publisher = items.map((item) => {
    const host = hostOf(item.url);
    return host === null ? null : publisherOf(host);
  });
  const time = items.map((item) => Date.parse(item.published_at));
  const comparable = (a: number, b: number): boolean =>
    publisher[a] !== null &&
    publisher[b] !== null &&
    publisher[a] !== publisher[b] &&
    Number.isFinite(time[a]) &&
    Number.isFinite(time[b]) &&
    Math.abs(time[a]! - time[b]!) <= SAME_EVENT_MS;
  const add = (slot: string, a: DisagreeingReport, b: DisagreeingReport): void => {
    if (found.length >= limit || taken.has(slot)) return;
    taken.add(slot);
    found.push({ slot, reports: earlierFirst(a, b) });
  };

  // Figures: each stated sentence against every sentence of the other sources' items that has one.
  let sentencesOf: Sentence[][] | undefined;
  for (const anchor of stated) {
    const anchorFigures = figuresIn(anchor.text);
    if (anchorFigures.length === 0) continue;
    sentencesOf ??= items.map((item, index) =>
      new RegExp(FIGURE.source, 'i').test(item.text)
        ? splitSentences(item.text).map((r) => ({
            item: index,
            text: item.text.slice(r.start, r.end).replace(/\s+/g, ' ').trim(),
          }))
        : [],
    );
    const anchorTerms = eventTerms(anchor.text, []);
    for (const rivals of sentencesOf) {
      for (const rival of rivals) {
        if (!comparable(anchor.item, rival.item)) continue;
        const rivalFigures = figuresIn(rival.text);
        const conflicts = anchorFigures.flatMap((a) => {
          const b = rivalFigures.find((f) => f.slot === a.slot);
          return b !== undefined && !figuresAgree(a, b) ? [[a, b] as const] : [];
        });
        if (conflicts.length === 0 || !shareEnough(anchorTerms, eventTerms(rival.text, []))) continue;
        const seen = namesSeenMidSentence([anchor.text, rival.text]);
        const anchorNames = nameKeys(anchor.text, seen, []);
        const rivalNames = nameKeys(rival.text, seen, []);
        for (const [a, b] of conflicts) {
          const baseSlot = a.slot.split(' ').at(-1)!;
          const namesFit = TOLLS.has(baseSlot)
            ? shareAName(anchorNames, rivalNames)
            : sameNames(anchorNames, rivalNames);
          if (namesFit) add(a.slot, report(items, anchor, a.phrase), report(items, rival, b.phrase));
        }
      }
    }
  }

  // Names: two stated sentences that give one different answer each for the same event (an answer
  // both give, such as a capitalised "Voters" read as a name, is not in dispute).
  if (options.nameAnswers === true) {
    stated.forEach((a, i) => {
      for (const b of stated.slice(i + 1)) {
        if (!comparable(a.item, b.item)) continue;
        const onlyA = notIn(a.answers, b.answers);
        const onlyB = notIn(b.answers, a.answers);
        if (onlyA.length !== 1 || onlyB.length !== 1) continue;
        const [nameA, nameB] = [onlyA[0]!, onlyB[0]!];
        const wordsB = new Set(words(nameB));
        if (words(nameA).some((w) => wordsB.has(w))) continue;
        const disputed = [nameA, nameB];
        if (!shareEnough(eventTerms(a.text, disputed), eventTerms(b.text, disputed))) continue;
        const seen = namesSeenMidSentence([a.text, b.text]);
        if (!sameNames(nameKeys(a.text, seen, disputed), nameKeys(b.text, seen, disputed))) continue;
        add('name', report(items, a, nameA), report(items, b, nameB));
      }
    });
  }
  return found;
}

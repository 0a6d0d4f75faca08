/**
 * What a sentence could answer with, and what kind of sentence it is — cheap surface reading and
 * lexicon lookups, no tagging in context (milliseconds a sentence): the composer runs it on every
 * sentence of every retrieved item.
 *
 * - names: runs of capitalised words ("Friedrich Merz", "Alternative for Germany", "CDU/CSU"), cut at
 *   a possessive ("Merz's CDU" → "Merz", "CDU"), plus quoted titles and the item's own entity names;
 *   a capitalised word that only starts the sentence counts when it is capitalised mid-sentence
 *   somewhere in the items or compromise's lexicon does not know it as a common word (so
 *   "Officials said" names nobody, "Merz said" and "Matthews won" do);
 * - dates: month names, weekdays, years, numeric dates; numbers: figures, amounts, percentages,
 *   number words (a bare year is a date, not a number);
 * - form: boilerplate (newsletter, ads, credits), questions, headlines.
 */
import nlp from 'compromise';

import { QUESTION_WORDS, words } from './question-terms.js';

type Lexicon = Record<string, string | string[] | undefined>;
/** compromise's lexicon: what a word is out of context ("won" → PastTense, "matthew" → FirstName). */
const LEXICON: Lexicon = (nlp.model() as { one: { lexicon: Lexicon } }).one.lexicon;
const NAME_TAGS =
  /^(?:Person|FirstName|MaleName|FemaleName|LastName|Place|Country|City|Region|Organization|ProperNoun|Acronym)$/;

/** The lexicon's tags for a lower-case word ([] when it does not know it). */
export function lexicalTags(word: string): readonly string[] {
  const entry = LEXICON[word];
  return entry === undefined ? [] : typeof entry === 'string' ? [entry] : entry;
}

/**
 * Whether a capitalised word that starts a sentence is a name rather than a capitalised common word:
 * the lexicon does not know it (nor its singular), or knows it as a name ("Matthews" → "matthew").
 */
function nameByLexicon(word: string): boolean {
  const lower = word.toLowerCase();
  const forms = [lower, lower.replace(/e?s$/, '')].filter((f) => f.length > 1);
  const tags = forms.flatMap(lexicalTags);
  return tags.length === 0 || tags.some((tag) => NAME_TAGS.test(tag));
}

const MONTHS =
  'January|February|March|April|May|June|July|August|September|October|November|December|Jan\\.?|Feb\\.?|Mar\\.?|Apr\\.?|Jun\\.?|Jul\\.?|Aug\\.?|Sept?\\.?|Oct\\.?|Nov\\.?|Dec\\.?';
const WEEKDAYS = 'Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday';
const DATE_PATTERN = new RegExp(
  `\\b(?:(?:${MONTHS})(?:\\s+\\d{1,2}(?:st|nd|rd|th)?)?(?:,?\\s+\\d{4})?|\\d{1,2}(?:st|nd|rd|th)?\\s+(?:${MONTHS})|(?:${WEEKDAYS})|(?:1[89]|20)\\d{2}s?|\\d{1,2}/\\d{1,2}(?:/\\d{2,4})?|(?:yesterday|today|tonight))\\b`,
  'g',
);
const NUMBER_WORDS =
  'one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|hundreds|thousand|thousands|million|millions|billion|billions|trillion|dozen|dozens|half|third|quarter|double|triple';
const NUMBER_PATTERN = new RegExp(
  `[$£€¥]\\s?\\d[\\d,.]*(?:\\s?(?:million|billion|trillion|thousand|[mbk]n?)\\b)?|\\b\\d[\\d,.]*(?:\\s?(?:%|percent|per cent|million|billion|trillion|thousand)\\b)?%?|\\b(?:${NUMBER_WORDS})\\b`,
  'gi',
);
const MONTH_OR_WEEKDAY = new RegExp(`^(?:${MONTHS}|${WEEKDAYS})$`);
const YEAR = /^(?:1[89]|20)\d{2}$/;

/** Small words that may sit inside a name ("Alternative for Germany", "Bank of England"). */
const NAME_CONNECTORS: ReadonlySet<string> = new Set(['of', 'for', 'the', 'and', '&', 'de', 'del', 'la', 'von', 'van']);
/** Capitalised words that name nothing by themselves. */
const NOT_NAMES: ReadonlySet<string> = new Set(
  (
    'the a an and but or so if in on at by for from to of with as after before while when where who what which ' +
    'why how this that these those there here it its he she they we you i his her their our your my mr mrs ms dr ' +
    'no yes not also however meanwhile still then now today yesterday according some many most all one'
  ).split(' '),
);

const BOILERPLATE = new RegExp(
  [
    'sign up',
    'newsletter',
    'subscribe',
    'click here',
    'all rights reserved',
    'copyright',
    '©',
    'how relevant is this ad',
    'advertisement',
    'follow us',
    'read more',
    'getty images',
    'cookie',
    'privacy policy',
    'terms of (?:use|service)',
    'your inbox',
    'contributed to this report',
    'this story has been updated',
    'this article (?:was|has been) (?:updated|amended)',
    'download the app',
    'listen to this article',
    'photo(?:graph)?:',
    'image:',
    'just watched',
    'must watch',
    'replay more videos',
    'corrections (?:&|and) clarifications',
    'staff and wire reports',
    '^related:',
    '^watch:',
    '^read:',
    '^source:',
  ].join('|'),
  'i',
);

interface Word {
  text: string;
  start: number;
  end: number;
  possessive: boolean;
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}.\-&/]*(?:['’][\p{L}]+)?/gu;

function readWords(sentence: string): Word[] {
  const found: Word[] = [];
  for (const match of sentence.matchAll(WORD)) {
    // A final full stop ends the sentence, except in an abbreviation made of initials ("U.S.").
    let text = /^(?:\p{L}\.)+$/u.test(match[0]) ? match[0] : match[0].replace(/\.$/, '');
    const possessive = /['’]s$/.test(text);
    text = text.replace(/['’]s$/, '');
    found.push({ text, start: match.index, end: match.index + text.length, possessive });
  }
  return found;
}

function isCapitalised(word: string): boolean {
  // Most words open on a lower-case ASCII letter: answered without a regular expression.
  const first = word.charCodeAt(0);
  if (first >= 97 && first <= 122) return false;
  if (first >= 65 && first <= 90) return true;
  return /^\p{Lu}/u.test(word) || /^\p{N}+\p{Lu}/u.test(word);
}

/** Lower-cased words seen capitalised somewhere other than a sentence's first word. */
export function namesSeenMidSentence(sentences: readonly string[]): Set<string> {
  const seen = new Set<string>();
  for (const sentence of sentences) {
    let first = true;
    // As `readWords` reads them, but only the capitalised words are cut to size: most are not.
    for (const match of sentence.matchAll(WORD)) {
      if (first) {
        first = false;
        continue;
      }
      if (!isCapitalised(match[0])) continue;
      const text = /^(?:\p{L}\.)+$/u.test(match[0]) ? match[0] : match[0].replace(/\.$/, '');
      seen.add(text.replace(/['’]s$/, '').toLowerCase());
    }
  }
  return seen;
}

/**
 * The names of a sentence: capitalised runs (joined across connectors, cut after a possessive or
 * punctuation between words), quoted titles, and the given known names found in it. Months and
 * weekdays are dates, not names.
 */
export function namesIn(
  sentence: string,
  seenMidSentence: ReadonlySet<string>,
  known: readonly string[] = [],
): string[] {
  const all = readWords(sentence);
  const names: string[] = [];
  let run: Word[] = [];
  const close = (): void => {
    while (run.length > 0 && NAME_CONNECTORS.has(run.at(-1)!.text.toLowerCase())) run.pop();
    while (run.length > 0 && NOT_NAMES.has(run[0]!.text.toLowerCase())) run.shift();
    const real = run.filter((w) => !MONTH_OR_WEEKDAY.test(w.text) && !NAME_CONNECTORS.has(w.text.toLowerCase()));
    const startsSentence = run[0] !== undefined && run[0] === all[0];
    const onlyInitial =
      run.length === 1 &&
      startsSentence &&
      !seenMidSentence.has(run[0]!.text.toLowerCase()) &&
      !nameByLexicon(run[0]!.text);
    if (real.length > 0 && !onlyInitial) names.push(sentence.slice(run[0]!.start, run.at(-1)!.end));
    run = [];
  };
  all.forEach((word, i) => {
    const between = i > 0 ? sentence.slice(all[i - 1]!.end, word.start) : ' ';
    const joined = run.length > 0 && /^\s+$/.test(between) && !run.at(-1)!.possessive;
    if (run.length > 0 && !joined) close();
    const capitalised =
      isCapitalised(word.text) && !MONTH_OR_WEEKDAY.test(word.text) && !QUESTION_WORDS.has(word.text.toLowerCase());
    const connector = run.length > 0 && NAME_CONNECTORS.has(word.text) && isCapitalised(all[i + 1]?.text ?? '');
    if (capitalised || connector) run.push(word);
    else if (run.length > 0) close();
  });
  if (run.length > 0) close();
  for (const match of sentence.matchAll(/["“‘]([^"“”‘’]{2,80})["”’]/g)) {
    const quoted = match[1]!.trim();
    // A quoted title (“Everything Everywhere All at Once”), not a quoted remark.
    if (isCapitalised(quoted) && !/[.!?,]$/.test(quoted) && quoted.split(/\s+/).length <= 8) names.push(quoted);
  }
  const folded = known.length === 0 ? '' : ` ${words(sentence).join(' ')} `;
  for (const name of known) {
    const key = words(name).join(' ');
    if (key !== '' && folded.includes(` ${key} `) && !names.includes(name)) names.push(name);
  }
  return [...new Set(names)];
}

export function datesIn(sentence: string): string[] {
  return [...sentence.matchAll(DATE_PATTERN)].map((m) => m[0]);
}

/** Figures, amounts and number words; a bare year is left to `datesIn`. */
export function numbersIn(sentence: string): string[] {
  return [...sentence.matchAll(NUMBER_PATTERN)]
    .map((m) => m[0].trim().replace(/[.,]+$/, ''))
    .filter((n) => !YEAR.test(n));
}

/**
 * A news page's dateline or byline before the sentence proper: "(CNN) ", "New York (CNN Business) ",
 * "WASHINGTON – ", "INDIAN WELLS, Calif. — ", "London CNN — ", "Jane Doe Associated Press WASHINGTON – ".
 * Their names are the outlet's and the place of filing, not what the sentence says.
 */
const DATELINE =
  /^(?:.{0,40}?\((?:CNN|CNN Business|CNN Sport|AP|Reuters|AFP)\)\s*[–—-]?\s*|(?:\p{Lu}[\p{L}.'’]*\s+){0,6}\p{Lu}{4,}(?:[ .]+\p{Lu}{2,})*\.?(?:,\s*[\p{L}.]+)?\s+[–—-]\s+|\p{Lu}\p{L}+ CNN\s*[–—-]\s+|[–—-]\s+)/u;

/** The sentence without a leading dateline or byline (the same text when it has none). */
export function withoutDateline(sentence: string): string {
  return sentence.replace(DATELINE, '');
}

/** Headlines run into the text by a page's extraction: "More:Burmese and Indian pythons…", "OPINION:Los Angeles…". */
export function hasGluedHeadline(sentence: string): boolean {
  return /\p{L}:\p{Lu}/u.test(sentence);
}

export function isBoilerplate(sentence: string): boolean {
  return BOILERPLATE.test(sentence);
}

/** A question, or a sentence quoting one. */
export function asksSomething(sentence: string): boolean {
  return sentence.includes('?');
}

/**
 * A headline or caption rather than a sentence: no closing punctuation, or (with three words or
 * more) nearly every longer word capitalised.
 */
export function looksLikeHeadline(sentence: string): boolean {
  if (!/[.!?]["”’')\]]*$/.test(sentence.trim())) return true;
  const longer = sentence.split(/\s+/).filter((w) => /^[\p{L}]{4,}/u.test(w));
  if (longer.length < 3) return false;
  return longer.filter((w) => /^\p{Lu}/u.test(w)).length / longer.length > 0.7;
}

/**
 * The sentence opens on something the sentence before it said, so it reads wrong alone: a pronoun
 * or demonstrative ("He said…", "This comes after…"), a connective that answers or contrasts with
 * what came before ("In response to the visit, …", "As a result, …", "However, …"), or an event
 * noun that points back ("The move…", "The company said…").
 */
export function opensOnWhatCameBefore(sentence: string): boolean {
  return DEPENDENT_OPENING.test(withoutDateline(sentence).trim());
}

const DEPENDENT_OPENING = new RegExp(
  [
    String.raw`^(?:he|she|it|they|his|her|its|their|this|that|these|those|such)\b(?!\.)`,
    String.raw`^(?:in (?:response|reply|retaliation|turn)|as a result|because of (?:this|that)|following (?:this|that)|after (?:this|that)|however|but|instead|nevertheless|nonetheless)\b`,
    String.raw`^(?:the )?(?:same|next|following|previous) (?:day|week|month|year)\b`,
    String.raw`^the (?:move|decision|announcement|incident|attack|deal|visit|remarks|comments|measure|proposal|suspect|company|group)\b`,
  ].join('|'),
  'i',
);

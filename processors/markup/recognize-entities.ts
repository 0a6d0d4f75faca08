/**
 * Named-entity recognition over plain article text with compromise: pure JavaScript, no model to
 * download, deterministic, and maintained; its tagging is most of markup's cost (about 60k
 * characters a second on one core, see eval/markup-quality.ts). compromise tags words (Person, Place,
 * Organization, ProperNoun, Demonym, Honorific, …) but its own `people()`/`places()` spans swallow
 * punctuation and split names it only half knows, so mentions are built here from capitalised word
 * runs and compromise's tags and matches only type them and veto common words.
 *
 * A mention never includes a possessive "'s", a title ("President", "Mr."), or punctuation around
 * the name. Offsets are UTF-16 code units into the text, end exclusive.
 */
import nlp from 'compromise';

import './tagger-sweep.js';

import type { EntityType } from '../../schemas/records.generated.js';
import {
  BOILERPLATE_WORDS,
  COMMON_CAPITALISED,
  EVENT_HEADS,
  EVENT_NOUNS,
  EVENT_PREFIXES,
  LOCATION_HEADS,
  NAME_CONNECTORS,
  ORGANIZATION_HEADS,
  PLACE_ACRONYMS,
  RESTRICTED_CONNECTORS,
  TITLE_WORDS,
} from './entity-vocabulary.js';
import { nationalityTable } from './nationality-words.js';

export interface EntitySpan {
  start: number;
  end: number;
  type: EntityType;
  /** text.slice(start, end). */
  surface: string;
  /** The name the span stands for when it is not its surface: a nationality word's country. */
  name?: string;
  /**
   * A reading that holds only if the entity registry already knows this name (as this type, when
   * given): "Hamas militants fire rockets" reads like "Security forces fire rockets", and only
   * having seen "Hamas" as a name elsewhere tells them apart; "Puntland forces" are armed forces
   * only if Puntland is known as a place. The text alone cannot say, so markup asks the registry.
   */
  onlyIfKnown?: { name: string; type?: EntityType };
  /** What is marked instead when `onlyIfKnown` does not hold. */
  otherwise?: EntitySpan;
}

interface CompromiseTerm {
  text: string;
  pre: string;
  post: string;
  tags: string[];
  id: string;
  offset: { start: number; length: number };
}
interface CompromiseSentence {
  terms: CompromiseTerm[];
}

/** One word of the text as the recogniser sees it. */
interface Word {
  /** Core text without a possessive ending. */
  text: string;
  lower: string;
  start: number;
  end: number;
  /** What separates this word from the next one in the text (post + next pre). */
  gap: string;
  tags: ReadonlySet<string>;
  /** Which compromise match (people/places/organizations) covers the word, if any. */
  match: { type: EntityType; index: number } | undefined;
  possessive: boolean;
  /** First word of a sentence, or right after an opening quote, colon or line break. */
  initial: boolean;
}

const TYPE_TAGS: readonly [string, EntityType][] = [
  ['Person', 'PERSON'],
  ['FirstName', 'PERSON'],
  ['LastName', 'PERSON'],
  ['Organization', 'ORGANIZATION'],
  ['Place', 'LOCATION'],
  ['Country', 'LOCATION'],
  ['City', 'LOCATION'],
  ['Region', 'LOCATION'],
];
const NAME_TAGS = ['ProperNoun', 'Person', 'Place', 'Organization', 'Acronym', 'FirstName', 'LastName'];
const FUNCTION_TAGS = ['Pronoun', 'Determiner', 'Conjunction', 'Preposition', 'QuestionWord'];
/** Possessives that belong to names ("Austrian People's Party", "Women's March"). */
const NAME_POSSESSIVES: ReadonlySet<string> = new Set(['people', 'peoples', 'workers', 'women', 'children', 'men']);
/** Plural names of countries, which compromise reads as demonyms. */
const PLURAL_PLACES: ReadonlySet<string> = new Set([
  'philippines',
  'netherlands',
  'bahamas',
  'maldives',
  'seychelles',
  'comoros',
]);
const COMPASS_ADJECTIVES: ReadonlySet<string> = new Set([
  'northern',
  'southern',
  'eastern',
  'western',
  'central',
  'greater',
  'upper',
  'lower',
  'new',
  'old',
  'great',
]);
/** A single capitalised word with these tags and no name tag is not a name ("No. 2", "Nearly"). */
const NON_NAME_TAGS = ['Adverb', 'Expression', 'Conjunction', 'Determiner', 'Preposition', 'Pronoun', 'QuestionWord'];
const COMMON_WORD_TAGS = ['Verb', 'Adverb', 'Adjective', 'Plural', 'Value', 'Expression', 'Date'];
const ABBREVIATED_SUFFIX = /^(?:Inc|Corp|Ltd|Co|Jr|Sr|Bros)$/;
const YEAR = /^(?:1[89]|20)\d\d$/;
/** Capital letters then digits: a code name ("M23", "G7", "COP29", "H5N1"), never a common word. */
const CODE_NAME = /^\p{Lu}+\d+[\p{Lu}\d]*$/u;
const ROMAN = /^[IVXLC]{1,6}$/;
const UPPER_START = /^\p{Lu}/u;
const ONLY_SPACES = /^[^\S\n]+$/u;
const POSSESSIVE = /(?:['’]s|(?<=s)['’])$/u;
/**
 * Prefixes that make a name an attitude or a time ("anti-Erdoğan protests", "pro-Russian forces",
 * "ex-Google staff", "post-Assad Syria"): the name is what follows the hyphen.
 */
const NAME_PREFIXES: ReadonlySet<string> = new Set(['anti', 'pro', 'ex', 'non', 'post', 'pre', 'neo', 'mid']);
/** compromise keeps a lower-case prefix and its name as one term ("anti-Erdoğan"). */
const PREFIXED_NAME = /^(\p{Ll}+)[-‐](?=\p{Lu})/u;
/**
 * Participles a name is hyphenated to when it says who is behind, in or of something: "Iran-backed",
 * "Saudi-led", "Russia-based", "M23-aligned", "Hamas-run". The name is a mention of its own;
 * compromise reads it as part of one adjective.
 */
const NAME_MODIFIERS =
  'backed|led|based|run|made|born|linked|aligned|allied|affiliated|owned|controlled|held|occupied|annexed|sponsored|funded|supported|brokered|bound|built|operated|registered|listed|headquartered|focused|centric|style';
/** What compromise tags a name hyphenated to a participle as, that the name is not. */
const MODIFIER_TAGS: ReadonlySet<string> = new Set(['Adjective', 'Hyphenated', 'Verb', 'PastTense', 'Participle']);

/** The name tags the lexicon gives a word out of context: a country, city or region is a place. */
function lexicalNameTags(lower: string): string[] {
  const tags = lexicalTags(lower).filter((t) => ['Country', 'City', 'Region', 'Place', 'Organization'].includes(t));
  return tags.some((t) => t !== 'Organization') ? [...tags, 'Place'] : tags;
}
const HYPHEN_MODIFIER = new RegExp(`^(?:${NAME_MODIFIERS})$`, 'i');
/** compromise keeps some such compounds as one term ("M23-aligned"): the name before the hyphen. */
const MODIFIED_NAME = new RegExp(`^(\\p{Lu}[\\p{L}\\p{N}.&']*)[-‐](?:${NAME_MODIFIERS})$`, 'u');
const OFFICE_DOMAINS: ReadonlySet<string> = new Set([
  'state',
  'defense',
  'defence',
  'staff',
  'health',
  'justice',
  'finance',
  'labor',
  'labour',
  'commerce',
  'energy',
  'education',
  'agriculture',
  'transportation',
  'treasury',
  'interior',
  'homeland',
  'security',
  'foreign',
  'affairs',
  'humanitarian',
  'the',
  'house',
  'national',
  'intelligence',
  'veterans',
  'housing',
  'war',
  'and',
  'human',
  'services',
  'economy',
  'trade',
  'home',
  'rights',
  // Ranks of an office: "High Commissioner for Human Rights", "Special Envoy for Syria".
  'high',
  'special',
]);
/** Titles that also occur inside organisation names ("General Motors", "Chief Rabbinate"). */
const AMBIGUOUS_TITLES: ReadonlySet<string> = new Set([
  'democrat',
  'democratic',
  'republican',
  'general',
  'chief',
  'leader',
  'director',
  'chair',
  'vice',
  'deputy',
  'acting',
  'former',
  'prime',
  'attorney',
  'justice',
  'speaker',
  'manager',
  'coach',
  'commander',
  'captain',
  'lord',
  'lady',
  'miss',
  'king',
  'queen',
  'prince',
  'princess',
]);

type Lexicon = Readonly<Record<string, string | readonly string[] | undefined>>;
const LEXICON: Lexicon = (nlp.model() as { one: { lexicon: Lexicon } }).one.lexicon;

/** What compromise's lexicon says a word is out of context ([] when it does not know the word). */
function lexicalTags(lower: string): readonly string[] {
  const entry = LEXICON[lower];
  if (entry === undefined) return [];
  return typeof entry === 'string' ? [entry] : entry;
}

const NATIONALITY_WORDS = nationalityTable((lower) => lexicalTags(lower).includes('Country'));

/**
 * The country a nationality word or its plural names, as markup links it ("Ukrainian",
 * "Ukrainians" → "Ukraine"); undefined for other words. The plural names the people: news of them is
 * news of the country as surely as the adjective's is.
 */
export function countryOfNationality(word: string): string | undefined {
  const key = word.replace(/\s+/g, ' ').trim().toLowerCase();
  return NATIONALITY_WORDS.get(key) ?? (key.endsWith('s') ? NATIONALITY_WORDS.get(key.slice(0, -1)) : undefined);
}

/** Entity mentions of text, non-overlapping and in text order. */
export function recognizeEntities(text: string): EntitySpan[] {
  const words = readWords(text);
  const knownNames = namesSeenMidSentence(words);
  const spans: EntitySpan[] = [];
  let i = 0;
  while (i < words.length) {
    const event = yearLedEvent(words, i);
    if (event !== undefined) {
      spans.push(span(text, words[i]!.start, words[event]!.end, 'EVENT'));
      i = event + 1;
      continue;
    }
    const organization = dateNamedOrganization(words, i);
    if (organization !== undefined) {
      spans.push(span(text, words[i]!.start, words[organization]!.end, 'ORGANIZATION'));
      i = organization + 1;
      continue;
    }
    const end = runEnd(words, i);
    if (end === undefined) {
      i++;
      continue;
    }
    for (const piece of splitTitles(words, i, end)) {
      if (isNamePrefix(words[piece.from]!) && piece.to === piece.from + 1) piece.from += 1;
      const plain = pieceMention(text, words, piece, knownNames);
      const chosen = piece.beforeTitle ? plain : (armedForces(text, words, piece, plain) ?? plain);
      if (chosen !== undefined) spans.push(chosen);
    }
    i = end + 1;
  }
  return spans;
}

/** The mention one piece of a capitalised run makes, if any. */
function pieceMention(
  text: string,
  words: readonly Word[],
  piece: Piece,
  knownNames: ReadonlySet<string>,
): EntitySpan | undefined {
  const office = piece.beforeTitle ? countryOfOffice(text, words, piece, knownNames) : undefined;
  if (office !== undefined) return office;
  const mention = toMention(text, words, piece.from, piece.to, knownNames);
  // What precedes a title is a qualifier unless it names a place or an institution ("U.S.").
  if (piece.beforeTitle && mention?.type !== 'LOCATION' && mention?.type !== 'ORGANIZATION') {
    return placeOfOffice(text, words, piece);
  }
  if (mention === undefined) {
    // "Paris mayor Anne Hidalgo" opening a sentence: a lower-case title ends the run.
    const next = words[piece.to + 1];
    return next !== undefined && TITLE_WORDS.has(next.lower) ? placeOfOffice(text, words, piece) : undefined;
  }
  return mention;
}

/**
 * compromise's analysis steps minus two whose output nothing here reads: `typeahead` (completing
 * half-typed words) and `chunks` (noun and verb phrases). Together some 15% of the tagging time on
 * news articles; every tag and match read below is the same without them
 * (test/unit/markup-tagger-sweep.test.ts).
 */
const MARKUP_HOOKS: string[] = (nlp.world() as { hooks: string[] }).hooks.filter(
  (hook) => hook !== 'typeahead' && hook !== 'chunks',
);
let skipUnreadHooks = true;

/** Runs every compromise hook (off) or skips the two nothing reads (on, the default): for the equality test. */
export function useMarkupHooks(on: boolean): void {
  skipUnreadHooks = on;
}

/** `nlp(text)` with MARKUP_HOOKS: the hooks are compromise's global list, swapped for this one synchronous call. */
function tag(text: string): ReturnType<typeof nlp> {
  if (!skipUnreadHooks) return nlp(text);
  const world = nlp.world() as { hooks: string[] };
  const all = world.hooks;
  world.hooks = MARKUP_HOOKS; // compromise only reads the list
  try {
    return nlp(text);
  } finally {
    world.hooks = all;
  }
}

function readWords(text: string): Word[] {
  const doc = tag(text);
  const matches = new Map<string, { type: EntityType; index: number }>();
  const typed: readonly [EntityType, { docs: readonly (readonly { id?: string }[])[] }][] = [
    ['PERSON', doc.people()],
    ['LOCATION', doc.places()],
    ['ORGANIZATION', doc.organizations()],
  ];
  let matchIndex = 0;
  for (const [type, view] of typed) {
    for (const phrase of view.docs) {
      for (const term of phrase)
        if (term.id !== undefined && !matches.has(term.id)) matches.set(term.id, { type, index: matchIndex });
      matchIndex++;
    }
  }
  const sentences = doc.json({ offset: true, terms: { offset: true } }) as CompromiseSentence[];
  const words: Word[] = [];
  for (const sentence of sentences) {
    let initial = true;
    for (const [k, term] of sentence.terms.entries()) {
      const start = term.offset.start;
      let end = start + term.offset.length;
      const next = sentence.terms[k + 1];
      // compromise's offsets are trusted only where they point at the term's own text.
      if (term.text.length === 0 || text.slice(start, end) !== term.text) {
        initial = true;
        continue;
      }
      const possessive = POSSESSIVE.test(term.text) && term.text.length > 2;
      if (possessive) end -= term.text.endsWith('s') ? 2 : 1;
      const prefix = PREFIXED_NAME.exec(term.text);
      const nameStart = prefix !== null && NAME_PREFIXES.has(prefix[1]!) ? start + prefix[0].length : start;
      const modified = MODIFIED_NAME.exec(term.text);
      if (modified !== null) end = start + modified[1]!.length;
      const core = text.slice(nameStart, end);
      // "Iran-backed": the name before a hyphenated participle ends where the hyphen is.
      const beforeModifier =
        modified !== null ||
        (/^[-‐]$/u.test(term.post) && next !== undefined && next.pre === '' && HYPHEN_MODIFIER.test(next.text));
      const gap = modified !== null ? ' ' : next === undefined ? '\n' : beforeModifier ? ' ' : term.post + next.pre;
      words.push({
        text: core,
        lower: core.toLowerCase(),
        start: nameStart,
        end,
        gap,
        // compromise's tags are the prefixed or modified word's ("pro-Trump", "Iran-backed":
        // Adjective); a capitalised word there is a name, typed by what the lexicon knows of it.
        tags: new Set(
          nameStart !== start
            ? ['ProperNoun', ...lexicalTags(core.toLowerCase())]
            : beforeModifier && UPPER_START.test(core)
              ? [
                  'ProperNoun',
                  ...term.tags.filter((t) => !MODIFIER_TAGS.has(t)),
                  ...lexicalNameTags(core.toLowerCase()),
                ]
              : term.tags,
        ),
        match: matches.get(term.id),
        possessive,
        initial: nameStart === start && (initial || /["“‘(\n]/.test(term.pre)),
      });
      initial = /[:\n]|[.!?]["”’)]*\s+$|["“‘]\s*$/u.test(term.post);
    }
  }
  return words;
}

/**
 * "Anti-" in "Anti-Erdoğan protests" at a sentence start, which compromise splits off: a prefix
 * before a single name word. Before more of a name it is the name's own ("Anti-Defamation League",
 * "Non-Aligned Movement").
 */
function isNamePrefix(word: Word): boolean {
  return NAME_PREFIXES.has(word.lower) && (word.gap === '-' || word.gap === '‐');
}

/** Keys of capitalised words seen away from a sentence start: evidence a sentence-initial one is a name. */
function namesSeenMidSentence(words: readonly Word[]): ReadonlySet<string> {
  const seen = new Set<string>();
  for (const word of words) if (!word.initial && isNameWord(word)) seen.add(word.lower);
  return seen;
}

function isNameWord(word: Word): boolean {
  if (!UPPER_START.test(word.text)) return false;
  if (FUNCTION_TAGS.some((tag) => word.tags.has(tag)) && word.match === undefined) return false;
  if ((word.tags.has('Month') || word.tags.has('WeekDay')) && !word.tags.has('Person')) return false;
  return true;
}

function joins(word: Word): boolean {
  if (word.possessive) return NAME_POSSESSIVES.has(word.lower) && ONLY_SPACES.test(word.gap);
  if (ONLY_SPACES.test(word.gap)) return true;
  if (word.gap === '-') return true;
  // Initials and name-internal abbreviations keep their period: "J. K. Rowling", "St. Louis".
  return /^\.[^\S\n]+$/u.test(word.gap) && /^(?:\p{Lu}|St|Mt|Ft)$/u.test(word.text);
}

/** Index of the last word of the capitalised run starting at i, or undefined when none starts there. */
function runEnd(words: readonly Word[], i: number): number | undefined {
  const first = words[i];
  if (first === undefined || !isNameWord(first)) return undefined;
  let end = i;
  for (;;) {
    const next = words[end + 1];
    if (next === undefined) break;
    if (words[end]!.gap === ', ' && next.text === 'D.C.') {
      end++;
      continue;
    }
    if (!joins(words[end]!)) break;
    if (isNameWord(next) && !(words[end]!.gap === '-' && bothCountries(words[end]!, next))) {
      end++;
      continue;
    }
    if (isRomanNumeral(next) || (/^\d+$/.test(next.text) && EVENT_HEADS.has(words[end]!.lower))) {
      end++;
      continue;
    }
    const connectorEnd = connectorSpan(words, end);
    if (connectorEnd === undefined) break;
    end = connectorEnd;
  }
  return end;
}

function bothCountries(a: Word, b: Word): boolean {
  return a.tags.has('Country') && b.tags.has('Country');
}

function isRomanNumeral(word: Word): boolean {
  return ROMAN.test(word.text) && word.text !== 'I' && (word.tags.has('RomanNumeral') || word.text.length > 1);
}

/**
 * "of", "the", "and", "&", "de", "von"… inside a name: the words after the connector must be
 * capitalised, and the restricted ones ("of", "and") need an institution or title before them or a
 * compromise match that spans the whole stretch. Returns the last connector index, or undefined.
 */
function connectorSpan(words: readonly Word[], end: number): number | undefined {
  const before = words[end]!;
  let k = end + 1;
  while (k < words.length && NAME_CONNECTORS.has(words[k]!.lower) && !UPPER_START.test(words[k]!.text)) {
    if (!joins(words[k - 1]!) || k - end > 2) return undefined;
    k++;
  }
  if (k === end + 1) return undefined;
  const after = words[k];
  if (after === undefined || !joins(words[k - 1]!) || !isNameWord(after)) return undefined;
  const connectors = words.slice(end + 1, k);
  if (connectors.every((c) => !RESTRICTED_CONNECTORS.has(c.lower))) return k - 1;
  const sameMatch = before.match !== undefined && before.match.index === after.match?.index;
  const institution = ORGANIZATION_HEADS.has(before.lower) || LOCATION_HEADS.has(before.lower);
  const ofPhrase = connectors[0]?.lower === 'of' || connectors[0]?.lower === 'for';
  if (sameMatch) return k - 1;
  if (ofPhrase && (institution || TITLE_WORDS.has(before.lower) || EVENT_PREFIXES.has(before.lower))) return k - 1;
  // "Syrian Observatory for Human Rights": "for" between capitalised words, unless it follows a
  // person or a country ("Canada for Canadians").
  const forPhrase = connectors.length === 1 && connectors[0]!.lower === 'for';
  if (forPhrase && !isPersonWord(before) && !before.tags.has('Country')) return k - 1;
  return undefined;
}

interface Piece {
  from: number;
  to: number;
  /** Ends right before a title ("Israeli Defense" in "Israeli Defense Minister Israel Katz"). */
  beforeTitle: boolean;
}

/**
 * Titles are not part of names: "U.S. President Donald Trump" gives "U.S." and "Donald Trump",
 * "Secretary of State Marco Rubio" gives "Marco Rubio". A title that also names institutions
 * ("General" in "General Motors") only splits before a person's name or another title.
 */
function splitTitles(words: readonly Word[], from: number, to: number): Piece[] {
  const pieces: Piece[] = [];
  let start = from;
  let k = from;
  while (k <= to) {
    const word = words[k]!;
    const next = words[k + 1];
    if (k > start && startsPersonAfterPlace(words[k - 1]!, word)) {
      pieces.push({ from: start, to: k - 1, beforeTitle: false });
      start = k;
    }
    // "Hassan Sheikh Mohamud": after a first name a title word is part of the name.
    const insideName = k > start && (words[k - 1]!.tags.has('FirstName') || words[k - 1]!.tags.has('LastName'));
    // Hyphenated titles are one title: "Under-Secretary-General", "Attorney-General", "Vice-President".
    const previous = k > start ? words[k - 1]! : undefined;
    const hyphenatedTitle =
      previous !== undefined && previous.gap === '-' && (TITLE_WORDS.has(previous.lower) || previous.lower === 'under');
    const title =
      !insideName &&
      (TITLE_WORDS.has(word.lower) || word.tags.has('Honorific')) &&
      (!AMBIGUOUS_TITLES.has(word.lower) ||
        hyphenatedTitle ||
        (k < to && next !== undefined && (isPersonWord(next) || TITLE_WORDS.has(next.lower))));
    if (title && previous?.lower === 'under' && previous.gap === '-' && k - 1 > start) {
      // "Under-" belongs to the title that follows it, not to the name before it.
      pieces.push({ from: start, to: k - 2, beforeTitle: true });
      start = k;
      k++;
      continue;
    }
    if (!title) {
      k++;
      continue;
    }
    if (k > start) pieces.push({ from: start, to: k - 1, beforeTitle: true });
    k++;
    if (k <= to && (words[k]!.lower === 'of' || words[k]!.lower === 'for')) {
      k++;
      while (k <= to && OFFICE_DOMAINS.has(words[k]!.lower) && !isPersonWord(words[k]!)) k++;
    }
    start = k;
  }
  if (start <= to) pieces.push({ from: start, to, beforeTitle: false });
  return pieces.map((piece) => trimConnectors(words, piece)).filter((piece) => piece.from <= piece.to);
}

/**
 * "President of Switzerland Karin Keller-Sutter": a first name right after a word the lexicon knows
 * as a place or institution starts a name of its own.
 */
function startsPersonAfterPlace(previous: Word, word: Word): boolean {
  if (!(word.tags.has('FirstName') || word.match?.type === 'PERSON')) return false;
  if (previous.tags.has('FirstName') || previous.tags.has('LastName') || NAME_CONNECTORS.has(previous.lower))
    return false;
  if (PLACE_ACRONYMS.has(previous.lower.replace(/\./g, ''))) return true;
  // "The leader of the Houthis Abdul-Malik al-Houthi": names do not go on after a plural.
  if (previous.tags.has('Plural') || (word.tags.has('FirstName') && /\p{Ll}s$/u.test(previous.text))) return true;
  const known = lexicalTags(previous.lower);
  return ['Country', 'City', 'Region', 'Place', 'Organization'].some((t) => known.includes(t));
}

function isPersonWord(word: Word): boolean {
  return word.tags.has('FirstName') || word.tags.has('LastName') || word.match?.type === 'PERSON';
}

function trimConnectors(words: readonly Word[], piece: Piece): Piece {
  let { from, to } = piece;
  const isConnector = (w: Word): boolean => NAME_CONNECTORS.has(w.lower) && !UPPER_START.test(w.text);
  while (from <= to && (isConnector(words[from]!) || words[from]!.text === '&')) from++;
  while (to >= from && (isConnector(words[to]!) || words[to]!.text === '&')) to--;
  return { from, to, beforeTitle: piece.beforeTitle };
}

/** Type and filter one run; undefined when it is not a name. */
function toMention(
  text: string,
  words: readonly Word[],
  from: number,
  to: number,
  knownNames: ReadonlySet<string>,
): EntitySpan | undefined {
  if (isBoilerplate(words.slice(from, to + 1))) return undefined;
  let start = from;
  const first = words[from]!;
  if (first.initial && from < to && !plausibleInitialWord(first, knownNames, words.slice(from + 1, to + 1))) start++;
  const run = words.slice(start, to + 1);
  const only = run[0];
  if (only === undefined) return undefined;
  const nationality = nationalityMention(text, run);
  if (nationality !== undefined) return nationality;
  let onlyIfKnown = false;
  if (run.length === 1) {
    const verdict = singleWordName(only, knownNames, words[to + 1]);
    if (verdict === false) return undefined;
    onlyIfKnown = verdict === 'if-known';
  }
  if (run.every((w) => (isDemonym(w) && !isGroupName(w)) || TITLE_WORDS.has(w.lower))) return undefined;
  if (modifiesNoun(run, words[to + 1])) return undefined;
  if (run.every((w) => w.tags.has('Value') || w.tags.has('Date'))) return undefined;
  const last = run.at(-1)!;
  // "Inc." and "Jr." keep their period; a sentence's final period is not part of a name.
  const end = ABBREVIATED_SUFFIX.test(last.text) && last.gap.startsWith('.') ? last.end + 1 : last.end;
  const after = words[to + 1];
  const type = personLedThing(run, after) ? 'PERSON' : governmentLeader(run, after) ? 'OTHER' : typeOf(run);
  const mention = span(text, only.start, end, type);
  return onlyIfKnown ? { ...mention, onlyIfKnown: { name: mention.surface } } : mention;
}

/**
 * A nationality word ("Israeli", "South Korean") or its plural ("Israelis"), which modifies or names
 * a people, as a mention of its country; undefined for one that names no single country
 * ("Congolese", "Kurdish").
 */
function nationalityMention(text: string, run: readonly Word[]): EntitySpan | undefined {
  const words = run.filter((w) => !TITLE_WORDS.has(w.lower));
  if (words.length === 0 || words.length > 3 || words.some((w) => w.possessive)) return undefined;
  const country = countryOfNationality(words.map((w) => w.lower).join(' '));
  if (country === undefined) return undefined;
  return { ...span(text, words[0]!.start, words.at(-1)!.end, 'LOCATION'), name: country };
}

/**
 * The country of an office named before its holder: "Chinese" in "Chinese Foreign Minister Wang
 * Yi", "U.S." in "U.S. Defense Secretary …" — a nationality word or a place followed only by the
 * office's domain. The office is news about the country as surely as "Chinese President" is.
 */
function countryOfOffice(
  text: string,
  words: readonly Word[],
  piece: Piece,
  knownNames: ReadonlySet<string>,
): EntitySpan | undefined {
  for (let last = piece.from; last < piece.to && last < piece.from + 3; last++) {
    const domain = words.slice(last + 1, piece.to + 1);
    if (!domain.every((w) => OFFICE_DOMAINS.has(w.lower) && w.lower !== 'the' && w.lower !== 'and')) continue;
    const country = words.slice(piece.from, last + 1);
    const mention = nationalityMention(text, country) ?? toMention(text, words, piece.from, last, knownNames);
    // "United Nations Human Rights Commissioner Volker Türk": an institution's office too.
    if (mention?.type === 'LOCATION' || mention?.type === 'ORGANIZATION') return mention;
  }
  return undefined;
}

const PLACE_TAGS = ['Country', 'City', 'Region', 'Place'];

/**
 * "Istanbul mayor Ekrem İmamoğlu", "Paris mayor Anne Hidalgo": a name before a title that the
 * lexicon knows, out of context, as a place is the office's place. Read in context, compromise
 * takes a sentence's first word before a title for a person ("Actor") and the name would be lost.
 */
function placeOfOffice(text: string, words: readonly Word[], piece: Piece): EntitySpan | undefined {
  const run = words.slice(piece.from, piece.to + 1);
  if (run.length === 0 || run.length > 3 || !run.every((w) => UPPER_START.test(w.text))) return undefined;
  const name = run.map((w) => w.lower).join(' ');
  if (!PLACE_TAGS.some((t) => lexicalTags(name).includes(t))) return undefined;
  return span(text, run[0]!.start, run.at(-1)!.end, 'LOCATION');
}

/**
 * Nouns for what a person leads or belongs to. Before one of them a lone name is the person's ("the
 * Trump administration", "the Assad regime"), though compromise tags it an organisation there.
 */
const PERSON_LED_NOUNS: ReadonlySet<string> = new Set([
  'administration',
  'presidency',
  'campaign',
  'regime',
  'era',
  'cabinet',
  'family',
]);

/**
 * "The Netanyahu government", "the Hamas government": compromise reads any lone name before
 * "government" as an organisation, but it is as often the person who leads it. Untyped (OTHER), the
 * mention links to whichever entity the name is known as — Benjamin Netanyahu's last name, Hamas
 * itself — instead of starting an organisation of its own.
 */
function governmentLeader(run: readonly Word[], after: Word | undefined): boolean {
  const name = run[0]!;
  if (run.length !== 1 || after?.lower !== 'government' || name.possessive || isAcronym(name)) return false;
  return name.tags.has('Organization') && !lexicalTags(name.lower).includes('Organization') && /^\s+$/.test(name.gap);
}

/** A lone name read as an organisation only because a person-led noun follows it, and not known as one. */
function personLedThing(run: readonly Word[], after: Word | undefined): boolean {
  const name = run[0]!;
  if (run.length !== 1 || after === undefined || name.possessive || isAcronym(name)) return false;
  if (!PERSON_LED_NOUNS.has(after.lower) || !/^\s+$/.test(name.gap)) return false;
  if (!name.tags.has('Organization') || lexicalTags(name.lower).includes('Organization')) return false;
  return true;
}

/** The first word of a multi-word run at a sentence start is dropped when it reads as a common word. */
function plausibleInitialWord(word: Word, knownNames: ReadonlySet<string>, rest: readonly Word[]): boolean {
  if (COMMON_CAPITALISED.has(word.lower)) return false;
  if (knownNames.has(word.lower) || word.match !== undefined) return true;
  if (NAME_TAGS.some((t) => word.tags.has(t))) return true;
  if (word.tags.has('Adjective')) {
    // "Rapid Support Forces" opens with its adjective; "Behind Moscow" only puts one before a name
    // complete without it ("Northern Ireland" keeps its compass word).
    const restIsName = rest.length === 1 && ['Place', 'Person', 'Organization'].some((t) => rest[0]!.tags.has(t));
    return !restIsName || COMPASS_ADJECTIVES.has(word.lower);
  }
  return !COMMON_WORD_TAGS.some((t) => word.tags.has(t));
}

/** Whether one word is a name: yes, no, or only if it is known as one already (`EntitySpan.onlyIfKnown`). */
function singleWordName(word: Word, knownNames: ReadonlySet<string>, after: Word | undefined): boolean | 'if-known' {
  if (/^.$/u.test(word.text)) return false;
  if (TITLE_WORDS.has(word.lower)) return false;
  if (COMMON_CAPITALISED.has(word.lower)) return false;
  const nameTagged = NAME_TAGS.some((t) => word.tags.has(t)) || word.match !== undefined;
  if (!nameTagged && NON_NAME_TAGS.some((t) => word.tags.has(t))) return false;
  if (isDemonym(word)) return isGroupName(word);
  if (!word.initial) {
    if (NAME_TAGS.some((t) => word.tags.has(t)) || word.match !== undefined) return true;
    // "Islamic", "Catholic": a capitalised adjective on its own modifies, it does not name.
    return !word.tags.has('Verb') && !(word.tags.has('Adjective') && !word.tags.has('Noun'));
  }
  if (knownNames.has(word.lower) || word.match !== undefined || NAME_TAGS.slice(1).some((t) => word.tags.has(t)))
    return true;
  if (CODE_NAME.test(word.text)) return true;
  // A sentence-initial word compromise's lexicon does not know, and that does not look like a verb,
  // plural or modifier, is most often a name ("Hamas said", "SpaceX launches"), unless a noun
  // follows it ("Security forces", "Hotel costs").
  if (lexicalTags(word.lower).length > 0 || COMMON_WORD_TAGS.some((t) => word.tags.has(t))) return false;
  if (/ly$/.test(word.lower)) return false;
  const modifies =
    after !== undefined && /^\p{Ll}/u.test(after.text) && after.tags.has('Noun') && !after.tags.has('Verb');
  if (!modifies) return true;
  // A head word ("Council members", "Ministry officials") stays a common noun however often it is
  // part of a name.
  const head = ORGANIZATION_HEADS.has(word.lower) || LOCATION_HEADS.has(word.lower) || EVENT_HEADS.has(word.lower);
  return head ? false : 'if-known';
}

/**
 * "Moldovan president", "Turkish forces", "South Korean troops": a nationality word compromise does
 * not know, recognised by its ending and the noun it modifies.
 */
function modifiesNoun(run: readonly Word[], after: Word | undefined): boolean {
  const last = run.at(-1)!;
  if (run.length > 2 || (run.length === 2 && !/^(?:north|south|east|west)$/.test(run[0]!.lower))) return false;
  const known = lexicalTags(last.lower);
  const name = ['Country', 'City', 'Region', 'Place', 'FirstName', 'LastName', 'Person', 'Organization'];
  if (name.some((t) => known.includes(t))) return false;
  // "-ish" and "-ese" ("Turkish", "Congolese") are nationalities whatever follows.
  if (/(?:ish|ese)$/.test(last.lower)) return true;
  if (!/an$/.test(last.lower) || after === undefined || !ONLY_SPACES.test(last.gap)) return false;
  // English nationality words are written in plain Latin letters; "Erdoğan government" is a name's.
  if (/[^\p{ASCII}]/u.test(last.text)) return false;
  return /^\p{Ll}/u.test(after.text) && after.tags.has('Noun') && !after.tags.has('Verb');
}

function isDemonym(word: Word): boolean {
  return word.tags.has('Demonym') || lexicalTags(word.lower).includes('Demonym');
}

/** Plural demonyms name groups ("Palestinians", "Kurds"); singular ones ("Israeli") are modifiers. */
function isGroupName(word: Word): boolean {
  return word.tags.has('Plural') || PLURAL_PLACES.has(word.lower);
}

function isBoilerplate(run: readonly Word[]): boolean {
  const allCaps = run.every((w) => !/\p{Ll}/u.test(w.text));
  if (!allCaps) return false;
  if (run.length === 1) return BOILERPLATE_WORDS.has(run[0]!.lower) || run[0]!.tags.has('Verb');
  return !run.some((w) => w.match?.type === 'ORGANIZATION');
}

function typeOf(run: readonly Word[]): EntityType {
  const last = run.at(-1)!;
  const lastWord = [...run].reverse().find((w) => !isRomanNumeral(w) && !/^\d+$/.test(w.text)) ?? last;
  const ofIndex = run.findIndex((w) => w.lower === 'of' || w.lower === 'for');
  const head = ofIndex > 0 ? run[ofIndex - 1]! : lastWord;
  if (EVENT_PREFIXES.has(run[0]!.lower) && run.length > 1) return 'EVENT';
  if (EVENT_HEADS.has(head.lower)) return 'EVENT';
  if (ORGANIZATION_HEADS.has(head.lower) && run.length > 1) return 'ORGANIZATION';
  if (LOCATION_HEADS.has(head.lower) && run.length > 1) return 'LOCATION';
  if (run.length === 1 && isAcronym(last))
    return PLACE_ACRONYMS.has(last.lower.replace(/\./g, '')) ? 'LOCATION' : 'ORGANIZATION';
  if (run.length === 1 && PLURAL_PLACES.has(last.lower)) return 'LOCATION';
  // What the lexicon knows out of context beats compromise's reading of one sentence.
  const known = lexicalTags(run.map((w) => w.lower).join(' '));
  if (['Country', 'City', 'Region', 'Place'].some((t) => known.includes(t))) return 'LOCATION';
  if (known.includes('Organization')) return 'ORGANIZATION';
  const match = run[0]!.match;
  if (match !== undefined && run.every((w) => w.match?.index === match.index || NAME_CONNECTORS.has(w.lower)))
    return match.type;
  // "Benjamin Netanyahu's office": compromise reads a possessive before "office" as an organisation;
  // a first name and a possessive last word are a person's.
  if (run.length > 1 && run[0]!.tags.has('FirstName') && lastWord.possessive) return 'PERSON';
  for (const [tag, type] of TYPE_TAGS) if (lastWord.tags.has(tag)) return type;
  if (run.length > 1 && run[0]!.tags.has('FirstName')) return 'PERSON';
  return 'OTHER';
}

function isAcronym(word: Word): boolean {
  return word.tags.has('Acronym') || /^(?:\p{Lu}\.?){2,6}$/u.test(word.text);
}

/**
 * "2025 New Orleans truck attack", "January 2025 Southern California wildfires", "the 2024
 * presidential election": a year (optionally after a month), at least two more words, and a closing
 * event noun. Returns the index of the closing word.
 */
function yearLedEvent(words: readonly Word[], i: number): number | undefined {
  let k = i;
  if (words[k]?.tags.has('Month') && joins(words[k]!) && YEAR.test(words[k + 1]?.text ?? '')) k++;
  const year = words[k];
  if (year === undefined || !YEAR.test(year.text) || !joins(year)) return undefined;
  let end: number | undefined;
  let count = 0;
  for (let j = k + 1; j < words.length && count < 6; j++) {
    const word = words[j]!;
    const capitalised = isNameWord(word);
    const lowerNoun =
      !capitalised &&
      /^\p{Ll}/u.test(word.text) &&
      !FUNCTION_TAGS.some((t) => word.tags.has(t)) &&
      !word.tags.has('Verb') &&
      !word.tags.has('Adverb');
    if (!capitalised && !lowerNoun) break;
    count++;
    if (lowerNoun && EVENT_NOUNS.has(word.lower) && count >= 2) end = j;
    if (!joins(word)) break;
  }
  return end;
}

/** Nouns for a country's or a territory's armed forces after its name or nationality word. */
const FORCE_NOUNS: ReadonlySet<string> = new Set(['forces', 'troops', 'military', 'army', 'soldiers']);

/**
 * "Israeli forces", "Russian troops", "Congolese military", "Puntland forces": a nationality word or
 * a place before a force noun names the armed forces, as editors link it (the Israel Defense Forces,
 * not Israel). The mention is named "<modifier> forces" whichever force noun was written, so the
 * troops and the military of one country are one entity; the registry links it to the named force
 * of the same country ("Israel Defense Forces", "Russian Armed Forces") when it knows one. A name the
 * lexicon does not know as a place ("Puntland") is read so only when the registry knows it as a
 * location, else as it was ("Hamas forces": Hamas; "Security forces" opening a sentence: nothing).
 * Not after a prefix: "pro-Russian forces" are not Russia's.
 */
function armedForces(
  text: string,
  words: readonly Word[],
  piece: Piece,
  plain: EntitySpan | undefined,
): EntitySpan | undefined {
  const last = words[piece.to]!;
  const noun = words[piece.to + 1];
  if (noun === undefined || !FORCE_NOUNS.has(noun.text)) return undefined;
  if (last.possessive || !ONLY_SPACES.test(last.gap) || /[-‐]$/u.test(text.slice(0, words[piece.from]!.start)))
    return undefined;
  const force = (start: number): EntitySpan => ({
    ...span(text, start, noun.end, 'ORGANIZATION'),
    name: `${text.slice(start, last.end)} forces`,
  });
  if (plain === undefined) {
    // "Congolese", "Kurdish": a nationality word of no single country, which markup leaves unmarked.
    const run = words.slice(piece.from, piece.to + 1);
    const strong = /(?:ish|ese)$/.test(last.lower);
    return modifiesNoun(run, noun) && (strong || !run[0]!.initial) ? force(run[0]!.start) : undefined;
  }
  if (plain.end !== last.end || plain.type === 'PERSON' || plain.type === 'EVENT') return undefined;
  if (plain.name !== undefined || plain.type === 'LOCATION') return force(plain.start);
  return { ...force(plain.start), onlyIfKnown: { name: plain.surface, type: 'LOCATION' }, otherwise: plain };
}

/**
 * "March 23 Movement", "April 6 Youth Movement": a date naming an organisation, a month and a day
 * before a capitalised run that ends in an organisation's head. Read as a date, the name would be
 * left as "Movement". Returns the index of the run's last word.
 */
function dateNamedOrganization(words: readonly Word[], i: number): number | undefined {
  const month = words[i];
  const day = words[i + 1];
  if (month === undefined || day === undefined || !month.tags.has('Month') || !UPPER_START.test(month.text))
    return undefined;
  if (!/^\d{1,2}$/.test(day.text) || !ONLY_SPACES.test(month.gap) || !ONLY_SPACES.test(day.gap)) return undefined;
  const end = runEnd(words, i + 2);
  if (end === undefined || words.slice(i + 2, end + 1).some((w) => w.tags.has('Month'))) return undefined;
  return ORGANIZATION_HEADS.has(words[end]!.lower) ? end : undefined;
}

function span(text: string, start: number, end: number, type: EntityType): EntitySpan {
  return { start, end, type, surface: text.slice(start, end) };
}

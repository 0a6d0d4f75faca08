/**
 * What kind of answer a question asks for, read from its question word: who → a person or an
 * organisation, when → a date, how many → a number, where → a place, which <noun> → a name (a place
 * or a person when the noun says so), why → a reason. The composer prefers sentences that hold such
 * an answer the question does not already name.
 *
 * Quiz questions often set the scene first ("Sue Bird played her final game this week. Which team
 * did she play for?") or put the question word in the middle ("… announced his bid on which
 * platform?"): the last sentence with a question word decides, and a "who" or "which" after a comma
 * or a noun is read as a relative pronoun, not as the question.
 */
import { words } from './question-terms.js';

export type AnswerType = 'person' | 'name' | 'place' | 'date' | 'number' | 'reason' | 'other';

const PLACE_NOUNS: ReadonlySet<string> = new Set(
  (
    'country countries nation nations city cities state states province provinces county counties region ' +
    'regions continent island islands capital town towns village villages park parks place places location ' +
    'locations venue venues site sites area areas district neighborhood neighbourhood airport stadium ' +
    'territory territories border sea ocean river lake mountain volcano beach port'
  ).split(' '),
);

const PERSON_NOUNS: ReadonlySet<string> = new Set(
  (
    'person people man woman men women player players star stars actor actress actors singer rapper musician ' +
    'artist celebrity politician senator senators president leader leaders ceo executive official officials ' +
    'athlete author writer candidate candidates judge justice coach quarterback director billionaire founder ' +
    'lawmaker governor mayor minister prime chancellor king queen prince princess pope host anchor journalist ' +
    'comedian scientist astronaut golfer tennis footballer pitcher driver boxer champion winner former legendary'
  ).split(' '),
);

/** Words after "which"/"what" that make it a question about the clause, not about a named thing. */
const CLAUSE_WORDS: ReadonlySet<string> = new Set(
  (
    'is are was were be been do does did has have had will would can could should may might must happened ' +
    'happens happen caused causes led made makes a an the this that these those it its they he she we you'
  ).split(' '),
);

const PREPOSITIONS: ReadonlySet<string> = new Set(
  'of on in at by for from with to into onto against about under over during and or'.split(' '),
);

const NUMBER_QUESTION =
  /\bhow (?:many|much|old|long|far|high|big|large|tall|fast|deep|heavy|low|often|wide)\b|\b(?:what|which) (?:percentage|percent|proportion|share|fraction|number|amount|sum|age|rate|price|cost|total)\b|\bat what age\b|\bby how\b/;
const DATE_QUESTION = /\bwhen\b|\b(?:what|which) (?:year|date|day|month|decade|century|time)\b/;
const NAME_QUESTION =
  /\bwhat(?:'s| is| was| are| were) (?:the |his |her |their |its )?(?:name|title)s?\b|\b(?:called|named|known as)\s*\??$/;

/** The sentence of the question that asks: the last one holding a question word (or the last one). */
export function askingSentence(question: string): string {
  const sentences = question
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const asking = sentences.filter((s) => /\b(?:who|whom|whose|what|which|when|where|why|how)\b/i.test(s));
  return asking.at(-1) ?? sentences.at(-1) ?? '';
}

/**
 * Whether the question word at `index` asks: "which" does unless it follows a comma (", which is
 * …"); "who" only at the start or after a preposition ("to whom") — after a noun it is a relative
 * pronoun ("the player who scored").
 */
function isInterrogative(sentence: string, word: string, index: number): boolean {
  if (index === 0) return true;
  const before = sentence.slice(0, index).trimEnd();
  if (before.endsWith(',')) return false;
  if (word === 'which') return true;
  const previous = words(before).at(-1) ?? '';
  return PREPOSITIONS.has(previous) || /[:;(]$/.test(before);
}

function typeOfNounPhrase(following: string[]): AnswerType {
  let phrase = following;
  if (phrase[0] === 'of' && ['these', 'the', 'those'].includes(phrase[1] ?? '')) {
    phrase = phrase.slice(2);
    if (phrase[0] === 'following') phrase = phrase.slice(1);
  }
  const first = phrase[0];
  if (first === undefined || CLAUSE_WORDS.has(first)) return 'other';
  // The noun is the head of a short phrase: "which social media platform", "which former NFL star".
  for (const word of phrase.slice(0, 4)) {
    if (PLACE_NOUNS.has(word)) return 'place';
    if (PERSON_NOUNS.has(word)) return 'person';
    if (CLAUSE_WORDS.has(word)) break;
  }
  return 'name';
}

/** Words of a "which <noun>" phrase that are no noun of it. */
const PHRASE_FILLERS: ReadonlySet<string> = new Set('of these the those following one ones'.split(' '));

/**
 * The nouns of the question's "which/what <noun phrase>" ("which city" → city, "which social media
 * platform" → social, media, platform): a sentence that puts one of them right before a name
 * ("the city of Goma", "the streaming platform Netflix", "rapper Drake") names the answer.
 * Empty when the question asks no such phrase.
 */
export function askedNouns(question: string): string[] {
  const asking = askingSentence(question).replace(/’/g, "'").toLowerCase();
  for (const match of asking.matchAll(/\b(which|what)\b/g)) {
    const word = match[1]!;
    if (word === 'which' && !isInterrogative(asking, word, match.index)) continue;
    const phrase: string[] = [];
    for (const w of words(asking.slice(match.index + word.length)).slice(0, 5)) {
      if (CLAUSE_WORDS.has(w) || PREPOSITIONS.has(w)) {
        if (phrase.length > 0 || !PHRASE_FILLERS.has(w)) break;
        continue;
      }
      if (!PHRASE_FILLERS.has(w)) phrase.push(w);
      if (phrase.length === 3) break;
    }
    if (phrase.length > 0) return phrase;
  }
  return [];
}

export function expectedAnswerType(question: string): AnswerType {
  const asking = askingSentence(question).replace(/’/g, "'").toLowerCase();
  if (NUMBER_QUESTION.test(asking)) return 'number';
  if (DATE_QUESTION.test(asking)) return 'date';
  if (NAME_QUESTION.test(asking)) return 'name';
  for (const match of asking.matchAll(/\b(who|whom|whose|which|what|where|why)\b/g)) {
    const word = match[1]!;
    const at = match.index;
    if (word === 'where') return 'place';
    if (word === 'why') return 'reason';
    if (word !== 'what' && !isInterrogative(asking, word, at)) continue;
    if (word === 'who' || word === 'whom' || word === 'whose') return 'person';
    return typeOfNounPhrase(words(asking.slice(at + word.length)));
  }
  return 'other';
}

/**
 * The words a question and a sentence are compared by: lower case, accents folded, possessive "'s"
 * dropped, function words, question words and time words removed (what a question asks *about*, not
 * how or when it asks), and a light suffix stemming so "ferries" meets "ferry" and "voted" meets
 * "vote". Deliberately small: it only has to make the same word look the same on both sides.
 */

/** English function words: they say nothing about what a sentence is about. */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an the and or but nor so yet if then than that this these those there here of to in on at by for from ' +
    'with without into onto over under about above below between among through during before after since until ' +
    'against along around across behind beyond near off out up down upon via per as is are was were be been being ' +
    'am do does did doing done have has had having will would shall should can could may might must ought it its ' +
    'itself he him his himself she her hers herself they them their theirs themselves we us our ours ourselves you ' +
    'your yours yourself i me my mine myself not no nor only also just very too more most much many some any each ' +
    'every all both either neither other another such own same few less least lot lots one ones s t get got ' +
    'according reportedly said says say told report reports reported'
  ).split(' '),
);

/** Words that pose the question rather than name its topic. */
export const QUESTION_WORDS: ReadonlySet<string> = new Set([
  'who',
  'whom',
  'whose',
  'what',
  'which',
  'when',
  'where',
  'why',
  'how',
  'whatever',
  'whichever',
  'name',
  'named',
]);

/**
 * Time words: the question's time is the as-of date, which retrieval already applied; "this week" in
 * a question must not make a sentence that says "this week" look like the answer.
 */
const TIME_WORDS: ReadonlySet<string> = new Set(
  (
    'today yesterday tomorrow tonight now currently current recent recently latest last past ago next week weeks ' +
    'weekend month months year years day days daily weekly monthly annual annually ' +
    'monday tuesday wednesday thursday friday saturday sunday ' +
    'january february march april may june july august september october november december ' +
    'jan feb mar apr jun jul aug sep sept oct nov dec news update updates happen happened happening'
  ).split(' '),
);

/** Irregular forms news questions and answers use for the same event ("won" / "wins"). */
const IRREGULAR: ReadonlyMap<string, string> = new Map([
  ['won', 'win'],
  ['lost', 'lose'],
  ['died', 'die'],
  ['dead', 'die'],
  ['death', 'die'],
  ['chose', 'choose'],
  ['chosen', 'choose'],
  ['sold', 'sell'],
  ['bought', 'buy'],
  ['made', 'make'],
  ['took', 'take'],
  ['taken', 'take'],
  ['held', 'hold'],
  ['became', 'become'],
  ['fell', 'fall'],
  ['fallen', 'fall'],
  ['rose', 'rise'],
  ['risen', 'rise'],
  ['ran', 'run'],
  ['gave', 'give'],
  ['given', 'give'],
  ['struck', 'strike'],
  ['found', 'find'],
  ['left', 'leave'],
  ['met', 'meet'],
  ['led', 'lead'],
  ['wrote', 'write'],
  ['written', 'write'],
  ['went', 'go'],
  ['gone', 'go'],
  ['began', 'begin'],
  ['begun', 'begin'],
  ['men', 'man'],
  ['women', 'woman'],
  ['children', 'child'],
  ['people', 'person'],
]);

const MAY_NEED_FOLDING = /[^\t\n\r\x20-\x7e\u2000-\u206f]/;

/** Folds accents and case, drops possessive endings and splits into words (letters and digits). */
export function words(text: string): string[] {
  // Most news text is ASCII and general punctuation (curly quotes, dashes), where the costly
  // normalisation would change no letter or digit: it is skipped there.
  const folded = MAY_NEED_FOLDING.test(text) ? text.normalize('NFKD').replace(/\p{M}/gu, '') : text;
  // Every maximal run of letters and digits: what splitting on the rest and dropping empties gives.
  return (
    folded
      .toLowerCase()
      .replace(/['’]s\b/g, '')
      .match(WORD_RUN) ?? []
  );
}

const WORD_RUN = /[\p{L}\p{N}]+/gu;

/**
 * A light stemmer: plural and -ed/-ing endings and a final "e" go, and a doubled final consonant is
 * undoubled ("winning" → "win"); numbers stay as they are.
 */
export function stem(word: string): string {
  let stemmed = STEMS.get(word);
  if (stemmed === undefined) {
    if (STEMS.size >= STEM_CACHE_SIZE) STEMS.clear();
    stemmed = stemUncached(word);
    STEMS.set(word, stemmed);
  }
  return stemmed;
}

/** News vocabulary repeats: stems are remembered (bounded: forgotten all at once when full). */
const STEMS = new Map<string, string>();
const STEM_CACHE_SIZE = 50_000;

function stemUncached(word: string): string {
  const irregular = IRREGULAR.get(word);
  if (irregular !== undefined) return stem(irregular);
  if (/\p{N}/u.test(word)) return word;
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  if (/([b-df-hj-km-np-rtv-z])\1$/.test(w) && !/(?:ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  return w;
}

/** Whether a (lower-case) word carries content: not a function, question or time word, not one letter. */
export function isContentWord(word: string): boolean {
  if (word.length < 2 && !/\p{N}/u.test(word)) return false;
  return !NOT_CONTENT.has(word);
}

/** Function, question and time words in one set: every word of every retrieved sentence is looked up. */
const NOT_CONTENT: ReadonlySet<string> = new Set([...STOP_WORDS, ...QUESTION_WORDS, ...TIME_WORDS]);

/** The content words of a text as written (lower case, not stemmed), without repeats: what a question is about. */
export function contentWords(text: string): string[] {
  return [...new Set(words(text).filter(isContentWord))];
}

/**
 * The words lexical search looks for: the content words, and every word written as an acronym
 * ("US", "WHO", "IT"), which lower case would take for a function or question word.
 */
export function searchWords(text: string): string[] {
  const acronyms = new Set((text.match(ACRONYM) ?? []).map((word) => word.toLowerCase()));
  return [...new Set(words(text).filter((word) => isContentWord(word) || acronyms.has(word)))];
}

/** Two or more capitals standing as a word of their own. */
const ACRONYM = /(?<![\p{L}\p{N}])\p{Lu}{2,}(?![\p{L}\p{N}])/gu;

/** The stemmed content words of a text, in order, repeats kept. */
export function contentTerms(text: string): string[] {
  return words(text).filter(isContentWord).map(stem);
}

/** Every stemmed word of a text, function words included: what "already named by the question" is checked against. */
export function allTerms(text: string): Set<string> {
  return new Set(words(text).map(stem));
}

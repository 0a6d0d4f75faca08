/**
 * Words as Elasticsearch's `standard` analyser cuts them (Unicode word boundaries, lower-cased, no
 * stemming, no stop words): letters and digits, with the inner marks that keep a word whole
 * ("women's", "U.S.", "20.8", "1,000"). The embedded datastore's inverted index uses it, so BM25
 * ranks the same documents on both datastores, and the ranking reads questions and documents with it.
 */
import { stemmer } from 'stemmer';

const WORD = /[\p{L}\p{M}\p{N}_]+(?:(?:['’.:][\p{L}\p{M}]+)|(?:[.,'’;][\p{N}]+))*/gu;

export function analyseWords(text: string): string[] {
  return (text.match(WORD) ?? []).map((w) => w.toLowerCase());
}

/**
 * Words that say what kind of question it is or hold a sentence together, not what it is about:
 * left out when judging how much of a question a document covers.
 */
const FUNCTION_WORDS = new Set(
  (
    'a an the and or nor but if then than so as of in on at to for from by with without about into onto over ' +
    'under after before between during since until upon via per is are was were be been being am do does did ' +
    'done doing has have had having will would shall should can could may might must not no yes it its it’s ' +
    "it's this that these those there here their they them he she his her him we us our you your i me my who " +
    'whom whose what which when where why how whatever whoever much many more most some any all each every ' +
    'other such own same just also very too only new news latest recent recently current currently now today ' +
    'yesterday week month year happen happened happening say said says tell told get got according'
  ).split(' '),
);

/** The words of a question that name what it is about (its content words), without repeats. */
export function contentWords(text: string): string[] {
  return [...new Set(analyseWords(text).filter((w) => !FUNCTION_WORDS.has(w) && !/^\d{1,2}$/.test(w)))];
}

/**
 * A word's stem for matching a question's words in a document's ("reported" and "report", "results"
 * and "result"): the possessive dropped, then Porter's stemmer. Only for judging coverage; lexical
 * search itself matches whole words, as Elasticsearch's standard analyser does.
 */
export function stem(word: string): string {
  return stemmer(word.replace(/['’]s?$/u, ''));
}

/** The stems of a question's content words, without repeats. */
export function contentStems(text: string): string[] {
  return [...new Set(contentWords(text).map(stem))];
}

/** The stems of every word of a text. */
export function stemsOf(text: string): Set<string> {
  return new Set(analyseWords(text).map(stem));
}

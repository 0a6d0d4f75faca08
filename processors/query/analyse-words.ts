/**
 * Words as Elasticsearch's `standard` analyser cuts them (Unicode word boundaries, lower-cased, no
 * stemming, no stop words): letters and digits, with the inner marks that keep a word whole
 * ("women's", "U.S.", "20.8", "1,000"). The embedded datastore's inverted index uses it, so BM25
 * ranks the same documents on both datastores, and the ranking reads questions and documents with it.
 */
const WORD = /[\p{L}\p{M}\p{N}_]+(?:(?:['’.:][\p{L}\p{M}]+)|(?:[.,'’;][\p{N}]+))*/gu;

export function analyseWords(text: string): string[] {
  return (text.match(WORD) ?? []).map((w) => w.toLowerCase());
}

/**
 * Where a sentence's finite verbs are: the words that can be its predicate ("visits", "won", "will",
 * "was", "says"), not gerunds ("including"), participles ("taken") or "to" + infinitive ("to
 * elect"). A statement needs one; a cut-out such as "NEOS party in Austria" has none.
 *
 * compromise tags the words with its lexicon and word-shape rules (`preTagger`), without the
 * contextual pass (`postTagger`) markup runs: on 3,000 RealTime QA sentences the first finite verb
 * was the same as with the full tagger in 98% of them, and whether there is one in 99.5%, at a third
 * of the time (0.6-0.9 against 1.9-2.1 ms a sentence, shared 2-core machine). Each sentence is
 * tagged once: overlapping chunks share sentences, and every subject of a chunk asks for the same
 * ones, so the last few thousand sentences' answers are remembered by their text.
 */
import nlp from 'compromise';

export interface WordRange {
  /** UTF-16 offsets into the sentence, end exclusive. */
  start: number;
  end: number;
}

interface Term {
  text: string;
  pre: string;
  post: string;
  normal?: string;
  tags: Set<string>;
}

/** compromise's analysis steps up to its lexical tagging: no contextual pass, no typeahead, no phrase chunks. */
const TAGGING_HOOKS: string[] = (nlp.world() as { hooks: string[] }).hooks.filter(
  (hook) => hook !== 'typeahead' && hook !== 'postTagger' && hook !== 'chunks',
);
const FINITE_TAGS = ['PastTense', 'PresentTense', 'Modal', 'Copula', 'Auxiliary', 'Infinitive'];

/** compromise's terms of a text, tagged by TAGGING_HOOKS alone (swapped in for this one synchronous call). */
function termsOf(text: string): Term[][] {
  const world = nlp.world() as { hooks: string[] };
  const all = world.hooks;
  world.hooks = TAGGING_HOOKS; // compromise only reads the list
  try {
    return (nlp(text) as unknown as { docs: Term[][] }).docs;
  } finally {
    world.hooks = all;
  }
}

function isFinite(term: Term, previous: Term | undefined): boolean {
  const { tags } = term;
  if (!tags.has('Verb') || tags.has('Gerund') || tags.has('Participle') || tags.has('Particle')) return false;
  // "being", "having" are tagged auxiliaries, but head no clause of their own.
  if (/ing$/i.test(term.text)) return false;
  // A stray comma standing as a word gets the tags of whatever compromise guessed for it.
  if (term.text.length > 0 && !/\p{L}/u.test(term.text)) return false;
  // "president-elect" is a title; "re-elected" and "co-founded" are verbs.
  if (term.text.includes('-') && !/^(?:re|co|pre|out|over|under|mis|de|un)-/i.test(term.text)) return false;
  if (tags.has('Infinitive') && !tags.has('Modal') && previous?.text.toLowerCase() === 'to') return false;
  return FINITE_TAGS.some((tag) => tags.has(tag));
}

function findFiniteVerbs(sentence: string): WordRange[] {
  const verbs: WordRange[] = [];
  let at = 0;
  let word: WordRange | undefined;
  for (const terms of termsOf(sentence)) {
    terms.forEach((term, i) => {
      at += term.pre.length;
      if (term.text.length > 0) word = { start: at, end: at + term.text.length };
      // A contraction's verb ("They'll", "That's") is a term of no text of its own: the word is the verb's place.
      if (word !== undefined && isFinite(term, terms[i - 1]) && verbs.at(-1)?.start !== word.start) verbs.push(word);
      at += term.text.length + term.post.length;
    });
  }
  // compromise's pieces add up to its input; should they ever not, no offset can be trusted.
  return at === sentence.length ? verbs : [];
}

const remembered = new Map<string, readonly WordRange[]>();
const REMEMBERED = 4096;

/** The finite verbs of one sentence, in order. */
export function finiteVerbs(sentence: string): readonly WordRange[] {
  const known = remembered.get(sentence);
  if (known !== undefined) {
    // Most recently used last, so the oldest is dropped first.
    remembered.delete(sentence);
    remembered.set(sentence, known);
    return known;
  }
  const found = findFiniteVerbs(sentence);
  remembered.set(sentence, found);
  if (remembered.size > REMEMBERED) remembered.delete(remembered.keys().next().value!);
  return found;
}

/**
 * Which retrieved sentences answer a question, best first — the extractive answer's choice, with no
 * model: every item is split into sentences (`markup/split-sentences.ts`) and each sentence is scored
 *
 *   relevance     BM25 of the question's content words against the sentence, IDF taken from the
 *                 sentences at hand, normalised by the question's total IDF (≈ the IDF-weighted share
 *                 of the question the sentence covers); plus a bonus when it names, whole, an
 *                 entity the question names;
 * + context       the same share for the sentence's whole item (with its title and entity names): a
 *                 chunk sentence that says "He won 28.5%" belongs to a passage about the question;
 * + answer type   the sentence holds an answer of the kind the question asks for (a name for who /
 *                 which <noun>, a date for when, a number for how many, a place for where, a cause
 *                 for why) that the question does not already name;
 * + prior         the item's retrieval rank (retrieval already weighed similarity and time);
 * − form          a question or a quoted question, a headline or caption, no verb, a fragment.
 *
 * + recency       a little for the later news, so it wins near ties: retrieval has already ranked
 *                 by time, so recency only decides between sentences the question cannot tell apart.
 *
 * For a question that asks for a name, the lead is then the best sentence giving the name most of
 * the best sentences' sources give, when it scores nearly as well as the best (`corroboratedLead`):
 * between near ties, the answer several reports agree on.
 *
 * Boilerplate (newsletter sign-ups, ad prompts, credits) is never chosen. Exact ties go to the more
 * recent sentence, then to the better-ranked item. The same sentence in two items (chunks overlap,
 * an interaction repeats its chunk) is one candidate, kept with the first item.
 *
 * Pure: no I/O. Cost: some 13 ms for 10 chunks of 5 sentences on one core, most of it splitting.
 */
import { splitSentences } from '../markup/split-sentences.js';
import {
  asksSomething,
  datesIn,
  hasGluedHeadline,
  isBoilerplate,
  lexicalTags,
  looksLikeHeadline,
  namesIn,
  namesSeenMidSentence,
  numbersIn,
  withoutDateline,
} from './answer-candidates.js';
import { askedNouns, askingSentence, expectedAnswerType, type AnswerType } from './answer-type.js';
import { allTerms, contentTerms, isContentWord, stem, words } from './question-terms.js';

/** What the chooser reads of a retrieved item. */
export interface SentenceSource {
  kind: 'interaction' | 'chunk';
  text: string;
  /** ISO 8601. */
  published_at: string;
  /** The article's title, for a chunk. */
  title?: string | undefined;
  /** Entity names of the item (an interaction's subject and object, a chunk's marked entities). */
  entities?: readonly string[] | undefined;
  /**
   * An interaction's source passage (the chunk it was extracted from): its sentences are the item's
   * too, so that the sentence next to the one the statement restates can answer.
   */
  passage?: string | undefined;
}

export interface ScoredSentence {
  /** Index of the item it comes from (0-based, in the order given). */
  item: number;
  /** The sentence, verbatim from the item's text or its passage. */
  text: string;
  score: number;
  /** The answers of the expected type it holds that the question does not name, in order. */
  answers: string[];
  /** The sentence just before it in the same text (its item's, or its passage), when it has one. */
  before?: string;
}

export interface AnswerChoice {
  type: AnswerType;
  /** The sentence that best answers the question; null when no sentence shares a word with it. */
  lead: ScoredSentence | null;
  /** A few further distinct sentences that bear on the question, best first. */
  support: ScoredSentence[];
  /**
   * For a question asking for a name (who, where, which <noun>): the one name the lead gives that the
   * question does not; null when it gives none or several.
   */
  leadName: string | null;
}

export interface ChooseOptions {
  /** How many supporting sentences at most. Default 3. */
  support?: number;
  /** The time the question is asked as of (ms): recency is counted back from it. Default: the newest item's. */
  asOf?: number;
  /** Lead with the best-corroborated name's sentence when it nearly ties the best (`corroboratedLead`). Default true. */
  corroborate?: boolean;
}

const K1 = 1.2;
const B = 0.75;
/**
 * What each part of a sentence's score weighs, relevance counting 1 (about 0–1.5). Chosen by hand
 * and checked on the RealTime QA development questions (`eval/answer-sentences.ts`), where moving
 * any one of them by half changed the share of answers holding the correct choice by less than its
 * noise, except the answer type (without it, 0.600 → 0.578 on 547 questions).
 */
const WEIGHTS = {
  /** The sentence names, whole, a multi-word entity the question names. */
  entityPhrase: 0.15,
  /** Times the share of the question its whole item covers. */
  context: 0.3,
  /** It holds an answer of the kind asked for (times 1, or 0.6 for a place not after "in", "at"…). */
  answerType: 0.35,
  /** Times 1 for the first item, ⅔ for the second, ½ for the third… */
  prior: 0.2,
  /**
   * Times 1 for a sentence published as of the question's time, ½ a week before, ⅓ two weeks
   * before…: retrieval has already weighed time into the rank, so this only settles near ties
   * between sentences the question cannot tell apart, for the later news.
   */
  recency: 0.05,
  /** Penalties: a question or quoted question, a headline or caption, no verb, a fragment of under
   * five words, a sentence of over fifty, a headline run into the text. */
  question: 0.4,
  headline: 0.2,
  noVerb: 0.25,
  fragment: 0.15,
  long: 0.1,
  glued: 0.2,
  /** A sentence that only says what the question says ("Germany held a federal election on Sunday"). */
  restates: 0.3,
  /**
   * A sentence of an interaction's source passage rather than its statement: the statement is what
   * was retrieved, so it keeps near ties; a passage sentence that answers better still leads.
   */
  passage: 0.1,
  /** A question term that only sets the scene counts this much of one in the asking sentence. */
  scene: 0.5,
  /**
   * The sentence holds the verb a "who <verb> …?" question asks about ("who won": "CDU/CSU wins a
   * plurality"): it states the fact asked, where a sentence sharing only the question's nouns
   * ("Germans vote to elect the Bundestag") sets its scene.
   */
  predicate: 0.3,
};
/** Words after "who" that are no predicate of their own. */
const AUXILIARIES: ReadonlySet<string> = new Set(
  'is was are were be been has have had does did do will would can could should may might must'.split(' '),
);

/** The stemmed verb of a "who <verb> …?" question, if it asks one ("who won" → "win"). */
function askedPredicate(question: string): string | undefined {
  const asking = words(askingSentence(question));
  const at = asking.indexOf('who');
  const verb = at < 0 ? undefined : asking[at + 1];
  if (verb === undefined || AUXILIARIES.has(verb) || !isContentWord(verb)) return undefined;
  return stem(verb);
}
/** A supporting sentence scores at least this share of the lead's score. */
const SUPPORT_SHARE = 0.5;
/** A second sentence from an item already quoted counts this much: other sources and dates first. */
const SAME_ITEM_FACTOR = 0.85;
/** A sentence whose words are this much inside an already chosen sentence's words repeats it. */
const REPEAT_CONTAINMENT = 0.8;
const NAME_CONNECTORS: ReadonlySet<string> = new Set(['of', 'for', 'the', 'and', 'de', 'del', 'la', 'von', 'van']);
/** Titles before a name, which do not make a name the question gives a new one ("President Joe Biden"). */
const TITLES: ReadonlySet<string> = new Set(
  'president sen senator rep gov governor mr mrs ms dr judge justice lt lieutenant gen general secretary minister chancellor mayor ceo coach'.split(
    ' ',
  ),
);
const LOCATIVE = /\b(?:in|at|near|from|to|across|outside|inside|into|within|throughout)\s+(?:the\s+)?$/i;
const CAUSE =
  /\b(?:because|due to|after|amid|over concerns|since|as a result|following|citing|caused by|blamed|in response to|in order to|so that)\b/i;

interface Candidate {
  item: number;
  position: number;
  /** From the item's source passage, not its own text. */
  fromPassage: boolean;
  text: string;
  /** The sentence just before it in the same text, as written (collapsed only when it is returned). */
  before: string | undefined;
  key: string;
  words: Set<string>;
  terms: Map<string, number>;
  length: number;
  publishedAt: number;
  answers: string[];
  fit: number;
  form: number;
  score: number;
}

export function chooseAnswerSentences(
  question: string,
  items: readonly SentenceSource[],
  options: ChooseOptions = {},
): AnswerChoice {
  const { type, ranked } = rankCandidates(question, items, options.asOf);
  const lead = options.corroborate === false ? ranked[0] : corroboratedLead(type, ranked);
  if (lead === undefined) return { type, lead: null, support: [], leadName: null };
  const support = chooseSupport(
    lead,
    ranked.filter((c) => c !== lead),
    options.support ?? 3,
  );
  return {
    type,
    lead: scored(lead),
    support: support.map(scored),
    leadName: nameOfLead(type, lead),
  };
}

/**
 * How a name question's lead is corroborated. Each name the best sentences give (those scoring at
 * least `voterShare` of the best, at most `voters` of them, reported within `withinMs` of the best
 * sentence: reports of the same news) is backed by their scores, one sentence
 * per item, a short form backing the longer names that hold it ("Chiefs" for "Kansas City
 * Chiefs"). When the best sentence does not give the best-backed name, the best sentence that does
 * leads instead if it scores at least `leadShare` of the best and is of the same news. Checked on the RealTime QA
 * development questions (`eval/answer-sentences.ts`, 1,098 answerable, the search's first 10 items
 * as chunks): the answer's first line held the correct choice for 0.407 against 0.390 without it
 * (+0.017, 95% interval 0.006–0.028; name questions 0.439 against 0.410), on both halves of the
 * questions (0.417 against 0.402, 0.397 against 0.377), the answer as a whole holding it as often
 * (0.592). Without the same-news rule every setting tried gained about as much (voter share
 * 0.3–0.7, 5–20 voters, lead share 0.85–0.95: 0.400–0.408); a lead share of 0.6 or 0.8, letting
 * weaker sentences lead, gained 0 and 0.012. These settings sit in the middle of that flat range.
 * Through the product's own retrieval, which already ranks items by their answer sentences, the
 * gain is smaller (500 questions, 246 answerable, tempralm over chunks: first line 0.419 against
 * 0.411, 5 won and 3 lost; the whole answer 0.622 against 0.618).
 */
const CORROBORATION = { voterShare: 0.5, voters: 10, leadShare: 0.9, withinMs: 3 * 24 * 60 * 60 * 1000 };

/** The lead: the best sentence, or for a name question the best one giving the best-backed name when it nearly ties. */
function corroboratedLead(type: AnswerType, ranked: readonly Candidate[]): Candidate | undefined {
  const best = ranked[0];
  if (best === undefined || best.score <= 0 || (type !== 'person' && type !== 'name' && type !== 'place')) return best;
  // Only reports of the same days vote or lead: last year's report of a recurring event naming its
  // winner, or an old name repeated by many, must not outvote the latest news.
  const sameNews = (c: Candidate): boolean => Math.abs(c.publishedAt - best.publishedAt) <= CORROBORATION.withinMs;
  const voters = ranked
    .filter((c) => c.score >= best.score * CORROBORATION.voterShare && sameNews(c))
    .slice(0, CORROBORATION.voters);
  const backing = new Map<string, number>();
  const itemsOf = new Map<string, Set<number>>();
  for (const c of voters) {
    for (const name of new Set(c.answers.map(nameKey))) {
      const items = itemsOf.get(name) ?? new Set<number>();
      if (name === '' || items.has(c.item)) continue;
      items.add(c.item);
      itemsOf.set(name, items);
      backing.set(name, (backing.get(name) ?? 0) + c.score);
    }
  }
  // Each name's backing with its short forms' ("chiefs" counts for "kansas city chiefs"), read once.
  const totals = new Map(
    [...backing.keys()].map((name) => [
      name,
      [...backing].reduce((sum, [other, score]) => sum + (holdsName(name, other) ? score : 0), 0),
    ]),
  );
  const backed = [...totals.keys()].sort(
    (a, b) => totals.get(b)! - totals.get(a)! || b.length - a.length || a.localeCompare(b),
  )[0];
  if (backed === undefined) return best;
  const gives = (c: Candidate): boolean => c.answers.some((answer) => holdsName(backed, nameKey(answer)));
  if (gives(best)) return best;
  return ranked.find((c) => gives(c) && sameNews(c) && c.score >= best.score * CORROBORATION.leadShare) ?? best;
}

const nameKey = (name: string): string => words(name).join(' ');

/** Whether a name (as its words) holds another whole: "kansas city chiefs" holds "chiefs". */
function holdsName(name: string, part: string): boolean {
  return part !== '' && ` ${name} `.includes(` ${part} `);
}

/** Every sentence that shares a word with the question (any, when it has none), best first, scored. */
export function rankAnswerSentences(
  question: string,
  items: readonly SentenceSource[],
  asOf?: number,
): { type: AnswerType; ranked: ScoredSentence[] } {
  const { type, ranked } = rankCandidates(question, items, asOf);
  return { type, ranked: ranked.map(scored) };
}

/**
 * The items that hold a sentence sharing a word with the question, best first by their best
 * sentence's score: a reader's ranking of retrieved passages, fused with the dense and lexical
 * rankings (`fuseRankings`). A passage is ranked by the sentence that answers, not by its words
 * spread over five sentences: the question's words together in one sentence (BM25 over sentences),
 * the verb a who-question asks about, an answer of the kind asked for that the question does not
 * name, a whole sentence rather than a headline or a caption. Nothing of the item's place in the
 * list given or its date counts here: the other rankings and the strategy weigh those.
 */
export function rankItemsByAnswerSentence(
  question: string,
  items: readonly SentenceSource[],
): { item: number; score: number }[] {
  // Without a content word to match, every sentence would be "relevant": no opinion to give.
  if (contentTerms(question).length === 0) return [];
  const { ranked } = rankCandidates(question, items, undefined, false);
  const best = new Map<number, number>();
  for (const c of ranked) if (!best.has(c.item)) best.set(c.item, c.score);
  return [...best].map(([item, score]) => ({ item, score }));
}

function rankCandidates(
  question: string,
  items: readonly SentenceSource[],
  asOf: number | undefined,
  /** Weigh the item's place among the items and its date (the answer's chooser does; a ranking of the items must not). */
  placeAndDate = true,
): { type: AnswerType; ranked: Candidate[] } {
  const type = expectedAnswerType(question);
  const candidates = sentencesOf(items);
  if (candidates.length === 0) return { type, ranked: [] };

  const weights = questionTermWeights(question);
  const questionTerms = [...weights.keys()];
  const vocabulary = new Set<string>();
  for (const c of candidates) for (const term of c.terms.keys()) vocabulary.add(term);
  const variants = termVariants(questionTerms, vocabulary);
  for (const c of candidates) c.terms = foldVariants(c.terms, variants);
  // Each question term's weight: its IDF over the sentences at hand, halved for scene-setting words.
  const idf = new Map(
    [...inverseDocumentFrequencies(candidates, questionTerms)].map(([t, v]) => [t, v * weights.get(t)!]),
  );
  const totalIdf = questionTerms.reduce((sum, t) => sum + idf.get(t)!, 0);
  const averageLength = candidates.reduce((sum, c) => sum + c.length, 0) / candidates.length;
  const relevance = new Map<Candidate, number>();
  for (const c of candidates) {
    relevance.set(c, totalIdf > 0 ? bm25(c, questionTerms, idf, averageLength) / totalIdf : 0);
  }
  const context = items.map((item) => coverage(foldedTerms(itemText(item), variants), questionTerms, idf, totalIdf));
  // Only sentences that share a word with the question can answer it (any, when it has no content words).
  const relevant = candidates.filter((c) => questionTerms.length === 0 || relevance.get(c)! > 0);
  const now = asOf ?? Math.max(...candidates.map((c) => c.publishedAt));
  const seen = namesSeenMidSentence(candidates.map((c) => c.text));
  const known = [...new Set(items.flatMap((item) => item.entities ?? []))];
  const questionWords = [...allTerms(question)];
  const foldedQuestion = ` ${words(question).join(' ')} `;
  const questionNames = [...namesIn(question, seen, known), ...known]
    .map((name) => words(name).join(' '))
    .filter((key, i, all) => key.includes(' ') && foldedQuestion.includes(` ${key} `) && all.indexOf(key) === i);
  // An answer the question already gives answers nothing: "Bird" for a question about Sue Bird,
  // "Germany" for one about the German election, "Primetime Emmy Awards" for one about the Emmys.
  // A name is new when at least half of its words (titles and connectors aside) are.
  const isNew = (answer: string): boolean => {
    const own = words(answer).filter((w) => !NAME_CONNECTORS.has(w) && !TITLES.has(w));
    const fresh = own.filter((w) => {
      const term = stem(w);
      return !questionWords.some((q) => q === term || sameWordFamily(q, term));
    });
    return fresh.length > 0 && fresh.length * 2 >= own.length;
  };

  const asked = new Set(questionTerms);
  const predicate = askedPredicate(question);
  const nouns = askedNouns(question);
  for (const c of relevant) {
    const phrase = questionNames.some((name) => ` ${c.key} `.includes(` ${name} `)) ? 1 : 0;
    const { answers, fit } = answerFit(
      withoutDateline(c.text),
      type,
      seen,
      items[c.item]!.entities ?? [],
      isNew,
      nouns,
    );
    c.answers = answers;
    c.fit = fit;
    c.form =
      formPenalty(c, c.fromPassage ? 'chunk' : items[c.item]!.kind) +
      (restates(c, asked) ? WEIGHTS.restates : 0) +
      (c.fromPassage ? WEIGHTS.passage : 0);
    c.score =
      relevance.get(c)! +
      WEIGHTS.entityPhrase * phrase +
      (predicate !== undefined && (c.terms.get(predicate) ?? 0) > 0 ? WEIGHTS.predicate : 0) +
      WEIGHTS.context * context[c.item]! +
      WEIGHTS.answerType * fit +
      (placeAndDate ? WEIGHTS.prior * prior(c.item) + WEIGHTS.recency * recency(now - c.publishedAt) : 0) -
      c.form;
  }
  return { type, ranked: relevant.sort(byScore) };
}

const collapsed = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** Every sentence of every item, in item order, the same sentence kept once (with its first item). */
function sentencesOf(items: readonly SentenceSource[]): Candidate[] {
  const byKey = new Map<string, Candidate>();
  const candidates: Candidate[] = [];
  items.forEach((item, index) => {
    const sentencesOfText = (text: string, fromPassage: boolean) =>
      splitSentences(text).map((range, i, all) => ({
        raw: text.slice(range.start, range.end),
        before: i === 0 ? undefined : text.slice(all[i - 1]!.start, all[i - 1]!.end),
        fromPassage,
      }));
    const sentences = [
      ...sentencesOfText(item.text, false),
      ...(item.passage ? sentencesOfText(item.passage, true) : []),
    ];
    sentences.forEach(({ raw, before, fromPassage }, position) => {
      const sentence = collapsed(raw);
      const all = words(sentence);
      const key = all.join(' ');
      const seen = byKey.get(key);
      if (seen !== undefined) {
        // A statement is often its passage's sentence word for word: the passage says what came before it.
        if (seen.item === index && seen.before === undefined && before) seen.before = before;
        return;
      }
      if (key === '' || isBoilerplate(sentence)) return;
      const terms = countTerms(all);
      const candidate: Candidate = {
        item: index,
        position,
        fromPassage,
        text: sentence,
        before,
        key,
        words: new Set(all),

        terms,
        length: Math.max(
          1,
          [...terms.values()].reduce((a, b) => a + b, 0),
        ),
        publishedAt: Number.isFinite(Date.parse(item.published_at)) ? Date.parse(item.published_at) : 0,
        answers: [],
        fit: 0,
        form: 0,
        score: 0,
      };
      byKey.set(key, candidate);
      candidates.push(candidate);
    });
  });
  return candidates;
}

/**
 * The question's stemmed content words, each weighted 1, or `WEIGHTS.scene` when it only appears in
 * a sentence that sets the scene before the one that asks ("The first images from the James Webb
 * Telescope were released… How much did the telescope cost?": "cost" and "telescope" count fully).
 */
function questionTermWeights(question: string): Map<string, number> {
  const asking = new Set(contentTerms(askingSentence(question)));
  return new Map(contentTerms(question).map((t) => [t, asking.has(t) || asking.size === 0 ? 1 : WEIGHTS.scene]));
}

function itemText(item: SentenceSource): string {
  return [item.title ?? '', item.text, item.passage ?? '', ...(item.entities ?? [])].join('\n');
}

/** The stemmed content words of a text, each word of a question term's family as that term. */
function foldedTerms(text: string, variants: ReadonlyMap<string, string>): Set<string> {
  const terms = new Set<string>();
  for (const word of words(text)) {
    if (!isContentWord(word)) continue;
    const term = stem(word);
    terms.add(variants.get(term) ?? term);
  }
  return terms;
}

/** Stemmed content words and how often each occurs, from a text's words. */
function countTerms(textWords: readonly string[]): Map<string, number> {
  const terms = new Map<string, number>();
  for (const word of textWords) {
    if (!isContentWord(word)) continue;
    const term = stem(word);
    terms.set(term, (terms.get(term) ?? 0) + 1);
  }
  return terms;
}

/**
 * Two stems of one word family beyond what the stemmer folds: one is the other plus at most three
 * letters, the shorter five letters or more ("german" / "germany", "russia" / "russian", "elect" /
 * "election"). Names and their adjectives matter most here; a stray pair ("polic" / "policy") costs
 * little next to missing "Germany" in a question about the German election.
 */
export function sameWordFamily(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return short.length >= 5 && long.length - short.length <= 3 && long.startsWith(short) && !/\p{N}/u.test(long);
}

/** Each word of the sentences that belongs to a question term's family, mapped to that term. */
function termVariants(questionTerms: readonly string[], vocabulary: ReadonlySet<string>): Map<string, string> {
  const variants = new Map<string, string>();
  for (const word of vocabulary) {
    if (questionTerms.includes(word)) continue;
    const family = questionTerms.find((term) => sameWordFamily(term, word));
    if (family !== undefined) variants.set(word, family);
  }
  return variants;
}

function foldVariants(terms: ReadonlyMap<string, number>, variants: ReadonlyMap<string, string>): Map<string, number> {
  const folded = new Map<string, number>();
  for (const [term, count] of terms) {
    const key = variants.get(term) ?? term;
    folded.set(key, (folded.get(key) ?? 0) + count);
  }
  return folded;
}

function inverseDocumentFrequencies(candidates: readonly Candidate[], terms: readonly string[]): Map<string, number> {
  const n = candidates.length;
  return new Map(
    terms.map((term) => {
      const df = candidates.filter((c) => c.terms.has(term)).length;
      return [term, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
    }),
  );
}

function bm25(c: Candidate, terms: readonly string[], idf: ReadonlyMap<string, number>, averageLength: number): number {
  let score = 0;
  for (const term of terms) {
    const tf = c.terms.get(term) ?? 0;
    if (tf === 0) continue;
    score += (idf.get(term)! * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * c.length) / averageLength));
  }
  return score;
}

/** The IDF-weighted share of the question's terms a set of terms holds. */
function coverage(
  held: ReadonlySet<string>,
  terms: readonly string[],
  idf: ReadonlyMap<string, number>,
  totalIdf: number,
): number {
  if (totalIdf === 0) return 0;
  return terms.reduce((sum, t) => sum + (held.has(t) ? idf.get(t)! : 0), 0) / totalIdf;
}

/** 1 for the first item, ⅔ for the second, ½ for the third… */
function prior(rank: number): number {
  return 1 / (1 + rank / 2);
}

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

/** 1 for no age, ½ for a week, ⅓ for two… (a date in the future counts as none). */
function recency(ageMs: number): number {
  return 1 / (1 + Math.max(0, ageMs) / WEEK_MS);
}

function answerFit(
  sentence: string,
  type: AnswerType,
  seen: ReadonlySet<string>,
  known: readonly string[],
  isNew: (answer: string) => boolean,
  nouns: readonly string[],
): { answers: string[]; fit: number } {
  const named = (names: string[]) => names.filter((name) => namedBy(sentence, name, nouns));
  switch (type) {
    case 'person':
    case 'name': {
      const answers = namesIn(sentence, seen, known).filter(isNew);
      const apposed = named(answers);
      return { answers: apposed.length > 0 ? apposed : answers, fit: answers.length > 0 ? 1 : 0 };
    }
    case 'place': {
      const names = namesIn(sentence, seen, known).filter(isNew);
      const apposed = named(names);
      if (apposed.length > 0) return { answers: apposed, fit: 1 };
      const placed = names.filter((name) => LOCATIVE.test(sentence.slice(0, sentence.indexOf(name))));
      if (placed.length > 0) return { answers: placed, fit: 1 };
      return { answers: names, fit: names.length > 0 ? 0.6 : 0 };
    }
    case 'date': {
      const answers = datesIn(sentence).filter(isNew);
      return { answers, fit: answers.length > 0 ? 1 : 0 };
    }
    case 'number': {
      const answers = numbersIn(sentence).filter(isNew);
      return { answers, fit: answers.length > 0 ? 1 : 0 };
    }
    case 'reason':
      return { answers: [], fit: CAUSE.test(sentence) ? 1 : 0 };
    case 'other':
      return { answers: [], fit: 0 };
  }
}

/**
 * Whether the sentence puts one of the question's "which <noun>" nouns right before the name, as its
 * apposition: "the city of Goma", "the company Amazon", "rapper Drake" for "which city / company /
 * rapper …?" — the name the question asks for, among the others the sentence holds.
 */
function namedBy(sentence: string, name: string, nouns: readonly string[]): boolean {
  if (nouns.length === 0) return false;
  const at = sentence.indexOf(name);
  if (at <= 0) return false;
  const before = words(sentence.slice(Math.max(0, at - 40), at));
  const last = before.at(-1) === 'of' ? before.at(-2) : before.at(-1);
  if (last === undefined) return false;
  const singular = (word: string) => word.replace(/ies$/, 'y').replace(/(?<=[^s])s$/, '');
  return nouns.some((noun) => singular(last) === singular(noun));
}

/** Whether a sentence adds at most one content word to the question's. */
function restates(c: Candidate, asked: ReadonlySet<string>): boolean {
  let added = 0;
  for (const term of c.terms.keys()) if (!asked.has(term)) added++;
  return added <= 1;
}

function formPenalty(c: Candidate, kind: SentenceSource['kind']): number {
  let penalty = 0;
  if (asksSomething(c.text)) penalty += WEIGHTS.question;
  // An interaction is a statement by construction, written without a full stop.
  if (kind === 'chunk' && looksLikeHeadline(c.text)) penalty += WEIGHTS.headline;
  const count = c.words.size;
  if (count < 5) penalty += WEIGHTS.fragment;
  if (count > 50) penalty += WEIGHTS.long;
  if (!hasVerb(c.text)) penalty += WEIGHTS.noVerb;
  if (hasGluedHeadline(c.text)) penalty += WEIGHTS.glued;
  return penalty;
}

const VERB_TAGS = /^(?:Verb|PastTense|PresentTense|Infinitive|Gerund|Participle|Copula|Modal|Auxiliary|PhrasalVerb)$/;

/**
 * Whether a sentence has a verb, by looking its words up in compromise's lexicon (plus a regular
 * "-ed" past): tagging a sentence in context costs milliseconds, a lookup next to nothing, and this
 * only has to tell a statement from a headline, caption or list of names. It errs towards finding a
 * verb ("seats" is listed as one), so a real sentence is not penalised.
 */
export function hasVerb(sentence: string): boolean {
  return sentence
    .split(/[^\p{L}'’-]+/u)
    .slice(1)
    .some((word) => {
      if (word === '' || /^\p{Lu}/u.test(word)) return false;
      const tags = lexicalTags(word.toLowerCase());
      return tags.some((tag) => VERB_TAGS.test(tag)) || (tags.length === 0 && /\p{L}{3}ed$/u.test(word));
    });
}

function byScore(a: Candidate, b: Candidate): number {
  return b.score - a.score || b.publishedAt - a.publishedAt || a.item - b.item || a.position - b.position;
}

/**
 * Whether a sentence repeats one already chosen: its words lie mostly inside the other's and it
 * gives no answer the other does not ("The club appointed Jones as coach" does not repeat "The club
 * appointed Smith as coach").
 */
function repeats(c: Candidate, chosen: readonly Candidate[]): boolean {
  return chosen.some((other) => {
    const [small, large] = c.words.size <= other.words.size ? [c.words, other.words] : [other.words, c.words];
    let shared = 0;
    for (const word of small) if (large.has(word)) shared++;
    if (shared / Math.max(1, small.size) < REPEAT_CONTAINMENT) return false;
    return c.answers.every((answer) => ` ${other.key} `.includes(` ${words(answer).join(' ')} `));
  });
}

/** Greedy: the best remaining sentence that does not repeat one chosen, other items before the same one again. */
function chooseSupport(lead: Candidate, rest: readonly Candidate[], limit: number): Candidate[] {
  const chosen: Candidate[] = [lead];
  const threshold = lead.score > 0 ? lead.score * SUPPORT_SHARE : lead.score;
  let pool = rest.filter((c) => c.score >= threshold && !repeats(c, chosen));
  while (chosen.length - 1 < limit && pool.length > 0) {
    const quoted = new Set(chosen.map((c) => c.item));
    const adjusted = (c: Candidate): number => c.score * (quoted.has(c.item) ? SAME_ITEM_FACTOR : 1);
    const next = pool.reduce((best, c) => (adjusted(c) > adjusted(best) ? c : best));
    if (adjusted(next) < threshold) break;
    chosen.push(next);
    pool = pool.filter((c) => c !== next && !repeats(c, chosen));
  }
  return chosen.slice(1);
}

/**
 * The name a name question's lead answers with: the one name of the expected kind it gives that the
 * question does not. With two or more, choosing one would be a guess the sentence does not make.
 */
function nameOfLead(type: AnswerType, lead: Candidate): string | null {
  if (type !== 'person' && type !== 'name' && type !== 'place') return null;
  return lead.answers.length === 1 ? lead.answers[0]! : null;
}

function scored(c: Candidate): ScoredSentence {
  return {
    item: c.item,
    text: c.text,
    score: Math.round(c.score * 1000) / 1000,
    answers: c.answers,
    ...(c.before === undefined || collapsed(c.before) === '' ? {} : { before: collapsed(c.before) }),
  };
}

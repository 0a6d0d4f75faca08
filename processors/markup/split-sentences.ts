/**
 * Sentence boundaries of an article text, as offsets (UTF-16 code units, end exclusive).
 *
 * compromise's tokenizer does the splitting: on a set of hard news sentences it handles honorifics,
 * initials, "U.S.", "Jan.", "St.", "Inc." and decimals, where Intl.Segmenter splits after nearly
 * every abbreviation (compromise 16/20, Intl.Segmenter 11/20 before fixes; see the unit tests). Three
 * fixes on top: a blank line always ends a sentence, a terminal mark inside a closing quote followed
 * by a capitalised word starts a new one (`"It is over." Then…`), and a piece that starts in lower
 * case or with a digit after an abbreviation (`No. 1`) is glued back to the sentence before it.
 */
import nlp from 'compromise';

export interface TextRange {
  start: number;
  end: number;
}

interface TokenizedTerm {
  pre: string;
  offset: { start: number };
}
interface TokenizedSentence {
  terms: TokenizedTerm[];
}

const BLANK_LINE = /\n[^\S\n]*\n\s*/g;
const QUOTED_SENTENCE_END = /[.!?]["”’')]\s+(?=["“‘(]?\p{Lu})/gu;
const ABBREVIATION_BEFORE_NUMBER = /\b(?:No|Nos|Nr|Art|Fig|Vol|pp?|approx|ca|vs?|Sec|Ch)\.$/;

/** Non-overlapping, in order, trimmed, and together covering every non-space character of text. */
export function splitSentences(text: string): TextRange[] {
  const sentences: TextRange[] = [];
  for (const paragraph of paragraphs(text)) {
    const cuts = splitQuotedEnds(text, paragraph, compromiseCuts(text.slice(paragraph.start, paragraph.end)));
    let pieces = rangesFromCuts(text, paragraph, cuts);
    pieces = glueContinuations(text, pieces);
    sentences.push(...pieces);
  }
  return sentences;
}

/** Ranges between blank lines, trimmed; empty ones dropped. */
function paragraphs(text: string): TextRange[] {
  const ranges: TextRange[] = [];
  let start = 0;
  for (const match of text.matchAll(BLANK_LINE)) {
    pushTrimmed(text, start, match.index, ranges);
    start = match.index + match[0].length;
  }
  pushTrimmed(text, start, text.length, ranges);
  return ranges;
}

type SentenceSplitter = (text: string, world: unknown) => string[];

/**
 * compromise's own sentence splitter, the first step of its tokenizer: the sentences as strings that
 * together are the text (whitespace between two sentences ends the first). Calling it alone skips
 * splitting every sentence into terms, which is nearly all of nlp.tokenize's time and reads nothing
 * here needs.
 */
const splitIntoSentenceStrings = (
  nlp.methods() as unknown as { one: { tokenize: { splitSentences: SentenceSplitter } } }
).one.tokenize.splitSentences;

/** Offsets (relative to the paragraph) where compromise starts a new sentence, the first excluded. */
export function compromiseCuts(paragraph: string): number[] {
  const cuts: number[] = [];
  let at = 0;
  for (const piece of splitIntoSentenceStrings(paragraph, nlp.world())) {
    if (at > 0 && at < paragraph.length) cuts.push(at);
    at += piece.length;
  }
  // The splitter only moves whitespace between its pieces; should they ever not add up to the
  // paragraph, the offsets would be wrong, so the tokenizer decides.
  return at === paragraph.length ? cuts : tokenizerCuts(paragraph);
}

/** The same cuts through the full tokenizer: only for a text the splitter did not return whole. */
export function tokenizerCuts(paragraph: string): number[] {
  const sentences = nlp.tokenize(paragraph).json({ offset: true, terms: { offset: true } }) as TokenizedSentence[];
  const cuts: number[] = [];
  for (const sentence of sentences.slice(1)) {
    const first = sentence.terms[0];
    if (first === undefined) continue;
    const cut = first.offset.start - first.pre.length;
    if (cut > 0 && cut < paragraph.length) cuts.push(cut);
  }
  return cuts;
}

function splitQuotedEnds(text: string, paragraph: TextRange, cuts: number[]): number[] {
  const all = new Set(cuts);
  const body = text.slice(paragraph.start, paragraph.end);
  for (const match of body.matchAll(QUOTED_SENTENCE_END)) {
    all.add(match.index + match[0].length);
  }
  return [...all].sort((a, b) => a - b);
}

function rangesFromCuts(text: string, paragraph: TextRange, cuts: number[]): TextRange[] {
  const ranges: TextRange[] = [];
  let start = paragraph.start;
  for (const cut of cuts) {
    pushTrimmed(text, start, paragraph.start + cut, ranges);
    start = paragraph.start + cut;
  }
  pushTrimmed(text, start, paragraph.end, ranges);
  return ranges;
}

/** A sentence does not begin in lower case, nor with a number right after "No." and the like. */
function glueContinuations(text: string, pieces: TextRange[]): TextRange[] {
  const glued: TextRange[] = [];
  for (const piece of pieces) {
    const previous = glued.at(-1);
    if (previous !== undefined && continuesPrevious(text, previous, piece)) {
      previous.end = piece.end;
    } else {
      glued.push({ ...piece });
    }
  }
  return glued;
}

function continuesPrevious(text: string, previous: TextRange, piece: TextRange): boolean {
  const first = text.slice(piece.start, piece.start + 1);
  if (/\p{Ll}/u.test(first)) return !/[!?]["”’')]*$/.test(text.slice(previous.start, previous.end));
  if (/\p{N}/u.test(first)) return ABBREVIATION_BEFORE_NUMBER.test(text.slice(previous.start, previous.end));
  return false;
}

function pushTrimmed(text: string, start: number, end: number, into: TextRange[]): void {
  let s = start;
  let e = end;
  while (s < e && /\s/.test(text.charAt(s))) s++;
  while (e > s && /\s/.test(text.charAt(e - 1))) e--;
  if (e > s) into.push({ start: s, end: e });
}

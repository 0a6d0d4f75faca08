/**
 * One sentence → at most one statement: the sentence itself, with the entity it is about as subject
 * and the entity it most concerns as object (NEON's interaction "between a subject and the marked
 * entities", written openIE-style as words of the news).
 *
 * A statement is the whole sentence, so it keeps what makes it true — who, the verb, whom, when,
 * where, how many, the result — and only what does not change the fact is cut:
 * - a bracketed aside without a number ("(her first ever!)", "(AfD)"; "(up 3%)" stays);
 * - a dateline ("WASHINGTON (AP) — ", "(CNN)");
 * - a leading "According to …," when an entity follows it, and a trailing ", officials said" that
 *   names no entity, when the sentence has its own predicate before it.
 * Compression is by cutting, never by writing: the only words not in the sentence are the subject's
 * canonical name where the sentence uses a short form of it ("Merz" → "Friedrich Merz").
 *
 * Nothing is made of a question, of a sentence without a finite verb (a headline, a byline, a photo
 * credit), of publishing boilerplate, or of a sentence with no marked entity.
 *
 * Subject: the marked entity the main clause's verb follows — the last one before the main verb
 * (the head of its phrase: "the NEOS party in Austria agree" → NEOS; the first of a coordination:
 * "Doja Cat and Jared Leto paid …" → Doja Cat), where the main verb is the first finite verb that
 * is not inside quotes, a leading subordinate clause ("After …,") or a relative clause (", who …,").
 * With no entity before it ("… says Brett Alan Nelson"), the first entity after it. Object: the most
 * salient other entity, preferring the predicate (after the main verb) to what precedes it, and
 * participants to places ("met Macron in Paris" → Macron): a place is usually the setting, not the
 * other party.
 */
import type { ChunkEntity } from '../../schemas/records.generated.js';
import { finiteVerbs, type WordRange } from './finite-verbs.js';

export interface SentenceMention extends WordRange {
  entity: ChunkEntity;
}

export interface SentenceStatement {
  subject: ChunkEntity;
  object: ChunkEntity | null;
  text: string;
}

export interface StatementOptions {
  /** Fewest words a statement has. */
  minWords: number;
  /** Most words: a longer sentence is cut after the clause that holds its object. */
  maxWords: number;
}

export const DEFAULT_STATEMENT_OPTIONS: StatementOptions = { minWords: 4, maxWords: 80 };

/** Ends as a question does, quotes and brackets aside. */
const QUESTION = /\?[\s"”’')\]]*$/u;
/**
 * Publishing furniture, not news: phrases a news sentence has no reason to use ("a copyright
 * lawsuit" is news, "Copyright 2022" is not).
 */
const BOILERPLATE =
  /\b(?:sign up (?:for|to|here|now)|subscribe (?:now|here|today)|click here|^read more\b|read more:|all rights reserved|copyright (?:©\s*)?\d{4}|©\s*\d{4}|contributed (?:reporting )?to this (?:report|story)|follow (?:us|him|her|them) on|(?:this|the) (?:story|article|post) (?:has been|was) (?:updated|originally published)|download (?:the|our) app|photo credit|image (?:caption|source)|how relevant is this ad|just watched|must watch|replay more videos|hide caption|caption \d+ of \d+)\b/i;
/** An invitation to the reader: "Learn how to support … here." */
const READER_PROMPT = /^(?:learn|find out|see|read|watch|listen|click|tap|sign up|subscribe)\b.*\bhere\b/i;
const SUBORDINATE_LEAD =
  /^["“‘(]?(?:after|although|even though|even as|even if|though|as|because|before|if|once|since|unless|until|when|whenever|where|whereas|while|despite|following|amid|with|without|in addition to)\b/i;
const RELATIVE_START = /,\s*(?:who|whom|whose|which|where)\b/gi;
const ASIDE = /\s*\(([^()]*)\)/g;
/** "WASHINGTON (AP) — ", "KYIV, Ukraine (AP) — ", "LONDON − ", "London (CNN)", "(CNN)". */
const DATELINE =
  /^(?:\p{Lu}[\p{Lu}.'’ -]+\p{Lu}\.?(?:,\s*[\p{L}.' ]{2,30}?)?\s*(?:\([^()]{1,30}\))?\s*[—–−-]{1,2}\s+|(?:\p{Lu}[\p{L}.'’-]*(?:\s\p{Lu}[\p{L}.'’-]*){0,3},?\s*)?\((?:CNN|AP|AFP|Reuters)[^()]{0,20}\)\s*[—–−-]{0,2}\s*)/u;
/** A page's "Skip advert" left before a sentence. */
const ADVERT = /^(?:skip advert|advertisement)\s+/i;
const LEADING_ATTRIBUTION = /^according to [^,;"“”]{1,80},\s*/i;
/** ", officials said." / ", the ministry told reporters" at the end of a sentence; not after a quote. */
const TRAILING_ATTRIBUTION =
  /(?<!["”’]),\s+(?:[^,;"“”]{1,40}?\s)?(?:said|says|told [^,;.]{1,30}|added|reported|according to [^,;.]{1,40})\s*\.?$/i;
const PLACE: ChunkEntity['type'] = 'LOCATION';
/** What joins two entities of one subject phrase: a preposition ("party in"), a coordination, a list comma. */
const PREPOSITION_LINK = /^[^,;"“”]{0,30}\s(?:in|of|at|from|for|on)\s+(?:the\s+)?$/i;
const AND_LINK = /^\s*,?\s*(?:and|or|&)\s+(?:the\s+)?$/i;
const COMMA_LINK = /^\s*,\s*(?:the\s+)?$/i;

const wordCount = (text: string): number => (text.match(/\S+/g) ?? []).length;
const inside = (range: WordRange, within: readonly WordRange[]): boolean =>
  within.some((w) => range.start >= w.start && range.end <= w.end);
const overlaps = (range: WordRange, within: readonly WordRange[]): boolean =>
  within.some((w) => range.start < w.end && range.end > w.start);

/** Quoted stretches: “…” pairs and straight double quotes taken two by two. */
function quotedRanges(sentence: string): WordRange[] {
  const ranges: WordRange[] = [];
  let open: number | undefined;
  for (const match of sentence.matchAll(/["“”]/g)) {
    const at = match.index;
    if (open === undefined) {
      if (match[0] !== '”') open = at;
    } else if (match[0] !== '“') {
      ranges.push({ start: open, end: at + 1 });
      open = undefined;
    }
  }
  // A quote that runs on past the sentence (a paragraph of speech) is quoted to the end.
  if (open !== undefined) ranges.push({ start: open, end: sentence.length });
  return ranges;
}

/** The stretches of the sentence cut before anything else: asides without numbers and the dateline. */
function asidesAndDateline(sentence: string): WordRange[] {
  const cuts: WordRange[] = [];
  const dateline = DATELINE.exec(sentence) ?? ADVERT.exec(sentence);
  if (dateline) cuts.push({ start: 0, end: dateline[0].length });
  for (const match of sentence.matchAll(ASIDE)) {
    if (/\p{N}/u.test(match[1]!)) continue;
    cuts.push({ start: match.index, end: match.index + match[0].length });
  }
  return cuts;
}

/** Where verbs are not the main clause's: a leading subordinate clause ("After …,") and relative clauses (", who …"). */
function subordinateRanges(sentence: string, from: number): { lead: WordRange[]; relatives: WordRange[] } {
  const lead: WordRange[] = [];
  const rest = sentence.slice(from);
  if (SUBORDINATE_LEAD.test(rest)) {
    const comma = rest.indexOf(',');
    if (comma > 0) lead.push({ start: from, end: from + comma });
  }
  const relatives: WordRange[] = [];
  for (const match of sentence.matchAll(RELATIVE_START)) {
    const start = match.index;
    const next = sentence.slice(start + match[0].length).search(/[,;]/);
    relatives.push({ start, end: next < 0 ? sentence.length : start + match[0].length + next });
  }
  return { lead, relatives };
}

/**
 * The verb that heads the main clause, from the most to the least particular reading; none when
 * every finite verb is in a relative clause ("White House official X, who …": no predicate).
 */
function mainVerb(verbs: readonly WordRange[], quoted: WordRange[], lead: WordRange[]): WordRange | undefined {
  const unquoted = verbs.filter((v) => !inside(v, quoted));
  return unquoted.find((v) => !inside(v, lead)) ?? unquoted[0] ?? verbs.find((v) => !inside(v, lead)) ?? verbs[0];
}

/** Participants before places; then the given order. */
function bySalience(mentions: readonly SentenceMention[]): SentenceMention[] {
  return [...mentions].sort((a, b) => Number(a.entity.type === PLACE) - Number(b.entity.type === PLACE));
}

function chooseSubject(
  sentence: string,
  mentions: readonly SentenceMention[],
  verb: WordRange,
  quoted: WordRange[],
  subordinate: WordRange[],
): SentenceMention {
  const before = mentions.filter((m) => m.end <= verb.start && !inside(m, quoted) && !inside(m, subordinate));
  // None in the subject's place ("… says Brett Alan Nelson", "The agreement ends Austria's …"): the
  // first entity of the predicate, else the first of the sentence.
  if (before.length === 0) return mentions.find((m) => m.start >= verb.end) ?? mentions[0]!;
  let index = before.length - 1;
  const link = (i: number) => sentence.slice(before[i - 1]!.end, before[i]!.start);
  // The last entity may only qualify the head of the phrase: "the NEOS party in Austria agree",
  // "Russia's invasion of Ukraine caused" — the head is the entity before the preposition.
  if (index > 0 && PREPOSITION_LINK.test(link(index))) index -= 1;
  // Back over a coordination ("X and Y", "X, the Y and the Z"): its first member leads. A comma
  // alone is an apposition ("A delegate from Virginia Beach, Miyares highlighted …") unless an
  // "and" follows it.
  if (index > 0 && AND_LINK.test(link(index))) {
    index -= 1;
    while (index > 0 && COMMA_LINK.test(link(index))) index -= 1;
  }
  return before[index]!;
}

function chooseObject(
  mentions: readonly SentenceMention[],
  subject: SentenceMention,
  verb: WordRange,
): SentenceMention | undefined {
  const others = mentions.filter((m) => m.entity.id !== subject.entity.id);
  const after = others.filter((m) => m.start >= verb.end);
  const before = others.filter((m) => m.start < verb.end).reverse();
  return bySalience(after)[0] ?? bySalience(before)[0];
}

/** The sentence without the cut stretches, the subject named canonically, spaces and stray punctuation tidied. */
function render(sentence: string, cuts: readonly WordRange[], subject: SentenceMention): string {
  const edits = [
    ...cuts.map((c) => ({ ...c, text: ' ' })),
    ...(subject.entity.name === sentence.slice(subject.start, subject.end)
      ? []
      : [{ start: subject.start, end: subject.end, text: subject.entity.name }]),
  ].sort((a, b) => a.start - b.start);
  let text = '';
  let at = 0;
  for (const edit of edits) {
    if (edit.start < at) continue;
    text += sentence.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  text += sentence.slice(at);
  return text
    .replace(/\s+/g, ' ')
    .replace(/\s+([,;:.!?])/g, '$1')
    .replace(/([,;:])(?=[,;:.!?])/g, '')
    .replace(/^[\s,;:—–-]+/, '')
    .replace(/[\s,;:—–-]+$/, '')
    .trim();
}

/**
 * Where a sentence longer than maxWords is cut: at the first clause break after the subject, the
 * main verb and the object, so what links them stays whole and only trailing clauses go.
 */
function clauseEnd(sentence: string, through: number): number | undefined {
  const stop = sentence.slice(through).search(/[,;:]\s|\s[—–]\s/);
  return stop < 0 ? undefined : through + stop;
}

/**
 * The statement a sentence makes, or undefined when it makes none. `mentions` are the sentence's
 * resolved entity mentions, offsets into `sentence`, in order.
 */
export function sentenceStatement(
  sentence: string,
  mentions: readonly SentenceMention[],
  options: StatementOptions = DEFAULT_STATEMENT_OPTIONS,
): SentenceStatement | undefined {
  if (mentions.length === 0 || QUESTION.test(sentence) || BOILERPLATE.test(sentence) || READER_PROMPT.test(sentence)) {
    return undefined;
  }
  const cuts = asidesAndDateline(sentence);
  const lead = cuts[0]?.start === 0 ? cuts[0].end : 0;
  const attribution = LEADING_ATTRIBUTION.exec(sentence.slice(lead));
  if (attribution && mentions.some((m) => m.start >= lead + attribution[0].length)) {
    cuts.push({ start: lead, end: lead + attribution[0].length });
  }
  const bodyStart = Math.max(0, ...cuts.filter((c) => c.start <= lead).map((c) => c.end));
  const { lead: leadClause, relatives } = subordinateRanges(sentence, bodyStart);
  const verbs = finiteVerbs(sentence).filter((v) => !overlaps(v, cuts) && !inside(v, relatives));
  const quoted = quotedRanges(sentence);
  const verb = mainVerb(verbs, quoted, leadClause);
  if (verb === undefined) return undefined;
  const subordinate = [...leadClause, ...relatives];

  const trailing = TRAILING_ATTRIBUTION.exec(sentence);
  if (trailing && trailing.index > verb.end && !mentions.some((m) => m.end > trailing.index)) {
    cuts.push({ start: trailing.index, end: sentence.length });
  }
  const kept = mentions.filter((m) => !overlaps(m, cuts));
  if (kept.length === 0) return undefined;
  const subject = chooseSubject(sentence, kept, verb, quoted, subordinate);
  const object = chooseObject(kept, subject, verb);
  let text = render(sentence, cuts, subject);
  if (wordCount(text) > options.maxWords) {
    const end = clauseEnd(sentence, Math.max(subject.end, verb.end, object?.end ?? 0));
    if (end !== undefined) text = render(sentence, [...cuts, { start: end, end: sentence.length }], subject);
  }
  if (wordCount(text) < options.minWords) return undefined;
  return { subject: subject.entity, object: object?.entity ?? null, text };
}

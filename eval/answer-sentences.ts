/**
 * `npx tsx eval/answer-sentences.ts [--questions N] [--window 5] [--settings chunks@10,…] [--show N]`:
 * does the extractive answer contain the answer? On RealTime QA (read at run time from the
 * development data, never copied; skipped with a message when absent), each answerable question
 * (`derived/answerable_question_ids.json`) is answered from its own search-result documents,
 * published on or before the question date, taken in the order the search gave them — no
 * retrieval, so the figure is the composer's alone:
 *
 * - `chunks`: each document's sentences (the product's splitter) in windows of `--window`, as chunk
 *   items with the article title; `statements`: each sentence an item, as interactions are;
 * - `@10`: the first 10 items, what the composer reads by default; `@all`: every item;
 * - `sentences`: the composed answer's text contains the correct choice (`answer_in_answer`,
 *   normalised as in the RealTime QA evaluation: accents, case, quotes and spaces folded);
 *   `first line`: the answer's first line does; `ceiling`: the items given do at all;
 * - `uncorroborated`: the same composer with `corroborate: false` (the best sentence always leads,
 *   see `corroboratedLead`): its first line, the paired difference (corroborated − not) and its
 *   answer anywhere;
 * - `same length`: the date-first answer cut to the new answer's length does (what a reader of that
 *   many characters would find); `chars`: mean answer length; `ms/q`: composing time per question,
 *   sentence splitting included.
 *
 * The sentence-choosing composer (`extractiveAnswer`) is compared with the date-first composer it
 * replaced (every item's whole text, grouped by day, newest day first), on the same items: 95%
 * Wilson intervals, and the paired difference (sentences − date-first) with its 95% interval, in
 * full and at the same length. The date-first answer also spells dates, so it can hold a date
 * choice no item text holds (its figure can pass the ceiling). Questions are split in two halves
 * by a hash of their id: the composer's weights were looked at on half A only, so half B is the
 * held-out figure. The `chunks@10` rows are also broken down by the expected answer type; `--show`
 * prints that many answers (chunks@all).
 *
 * Measured on all 1,098 answerable questions (2-core shared machine): chunks@10 0.588 [0.559,
 * 0.617] in 756 characters against the date-first answer's 0.764 in 5,900 (it holds every item's
 * text: the ceiling is 0.758), and 0.508 for the date-first answer cut to the same length (paired
 * difference +0.080 [0.055, 0.105]); held-out half B 0.572 [0.530, 0.612]; statements@10 0.511;
 * chunks@all 0.635 in 781 characters. With corroboration (later, same questions): chunks@10 first
 * line 0.407 against 0.390 uncorroborated (+0.017 [0.006, 0.028]; half A +0.015, half B +0.020;
 * name questions +0.029), the answer anywhere unchanged (0.592); statements@10 +0.003.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { splitSentences } from '../processors/markup/split-sentences.js';
import { expectedAnswerType } from '../processors/query/answer-type.js';
import { extractiveAnswer, type AnswerItem } from '../processors/query/compose-answer.js';
import { spellDate } from '../processors/query/reformulate-query.js';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';

const DATASET = 'realtimeqa';
const { values: args } = parseArgs({
  options: {
    questions: { type: 'string' },
    window: { type: 'string', default: '5' },
    show: { type: 'string' },
    settings: { type: 'string' },
  },
});
const WINDOW = Number(args.window);
const SHOW = args.show === undefined ? 0 : Number(args.show);

interface Question {
  question_id: string;
  question_date: string;
  question_sentence: string;
  choices: string[];
  answer: string[];
}
interface SearchDoc {
  url: string;
  title?: string | null;
  text?: string | null;
  publish_date?: string | null;
}

function readJsonl<T>(path: string): T[] {
  const raw = path.endsWith('.gz') ? gunzipSync(readFileSync(path)).toString('utf8') : readFileSync(path, 'utf8');
  return raw
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

function filesUnder(dir: string, suffix: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(suffix))
    .sort()
    .map((name) => join(dir, name));
}

function normaliseText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[“”"‘’']/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

const dayOf = (date: string): string => date.replace(/\//g, '-').slice(0, 10);

/** The composer this one replaced: every item's text, one line per day, newest day first. */
function dateFirstAnswer(tq: number, items: readonly AnswerItem[]): string {
  const byDay = new Map<string, string[]>();
  const said = new Set<string>();
  items.forEach((item, i) => {
    const day = item.published_at.slice(0, 10);
    const text = item.text.trim().replace(/[.\s]+$/, '');
    if (said.has(`${day} ${text.toLowerCase()}`)) return;
    said.add(`${day} ${text.toLowerCase()}`);
    byDay.set(day, [...(byDay.get(day) ?? []), `${text} [${i + 1}]`]);
  });
  const lines = [...byDay.entries()]
    .sort(([a], [b]) => b.localeCompare(a))
    .map(([day, texts]) => `${spellDate(Date.parse(`${day}T00:00:00Z`))}: ${texts.join('; ')}.`);
  return [`As of ${spellDate(tq)}:`, ...lines].join('\n');
}

/** Items from the question's documents published by its date, in the search's order. */
function itemsOf(docs: readonly SearchDoc[], questionDay: string, window: number): AnswerItem[] {
  const items: AnswerItem[] = [];
  docs.forEach((doc, d) => {
    if (!doc.publish_date || !doc.text || dayOf(doc.publish_date) > questionDay) return;
    const text = doc.text;
    const sentences = splitSentences(text).map((r) => text.slice(r.start, r.end));
    for (let i = 0; i < sentences.length; i += window) {
      items.push({
        id: `${d}-${i}`,
        kind: window === 1 ? 'interaction' : 'chunk',
        text: sentences.slice(i, i + window).join(' '),
        published_at: `${dayOf(doc.publish_date)}T12:00:00.000Z`,
        url: doc.url,
        ...(window > 1 && doc.title ? { title: doc.title } : {}),
      });
    }
  });
  return items;
}

/** 95% Wilson interval. */
function wilson(successes: number, n: number): [number, number] {
  if (n === 0) return [0, 1];
  const z = 1.959964;
  const p = successes / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

function fnv(text: string): number {
  let h = 0x811c9dc5;
  for (const c of text) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

interface Tally {
  n: number;
  ceiling: number;
  sentences: number;
  /** The answer's first line holds the correct choice. */
  lead: number;
  /** The same without corroboration (`corroborate: false`), and the questions only one of the two gets. */
  leadUncorroborated: number;
  leadOnlyCorroborated: number;
  leadOnlyUncorroborated: number;
  /** The uncorroborated answer holds the correct choice anywhere. */
  sentencesUncorroborated: number;
  dateFirst: number;
  sentencesOnly: number;
  dateFirstOnly: number;
  sentenceChars: number;
  dateFirstChars: number;
  /** The date-first answer cut to the sentence answer's length holds the correct choice. */
  dateFirstSameLength: number;
  sentencesOnlyAtSameLength: number;
  dateFirstOnlyAtSameLength: number;
  ms: number;
}
const emptyTally = (): Tally => ({
  n: 0,
  ceiling: 0,
  sentences: 0,
  lead: 0,
  leadUncorroborated: 0,
  leadOnlyCorroborated: 0,
  leadOnlyUncorroborated: 0,
  sentencesUncorroborated: 0,
  dateFirst: 0,
  sentencesOnly: 0,
  dateFirstOnly: 0,
  sentenceChars: 0,
  dateFirstChars: 0,
  dateFirstSameLength: 0,
  sentencesOnlyAtSameLength: 0,
  dateFirstOnlyAtSameLength: 0,
  ms: 0,
});

function main(): void {
  const base = devDataPath(DATASET);
  if (base === undefined) {
    console.log(missingDevDataMessage(DATASET));
    return;
  }
  const questions = new Map<string, Question>();
  for (const year of ['2022', '2023']) {
    for (const file of filesUnder(join(base, 'qa', year), '_qa.jsonl')) {
      for (const q of readJsonl<Question>(file)) if (!questions.has(q.question_id)) questions.set(q.question_id, q);
    }
  }
  const answerable = JSON.parse(
    readFileSync(join(base, 'derived', 'answerable_question_ids.json'), 'utf8'),
  ) as string[];
  const limit = args.questions === undefined ? answerable.length : Number(args.questions);
  const wanted = new Set(answerable.filter((id) => questions.has(id)).slice(0, limit));
  const docsOf = new Map<string, SearchDoc[]>();
  for (const year of ['2022', '2023']) {
    for (const file of filesUnder(join(base, 'docs', year), '.jsonl.gz')) {
      for (const line of readJsonl<{ question_id: string; search_result: SearchDoc[] }>(file)) {
        if (wanted.has(line.question_id) && !docsOf.has(line.question_id)) {
          docsOf.set(line.question_id, line.search_result);
        }
      }
    }
  }

  const settings = [
    { name: 'chunks@10', window: WINDOW, maxItems: 10 },
    { name: 'chunks@all', window: WINDOW, maxItems: Infinity },
    { name: 'statements@10', window: 1, maxItems: 10 },
    { name: 'statements@all', window: 1, maxItems: Infinity },
  ].filter((s) => args.settings === undefined || args.settings.split(',').includes(s.name));
  const tallies = new Map<string, Tally>();
  const tally = (key: string): Tally => {
    const found = tallies.get(key);
    if (found) return found;
    const fresh = emptyTally();
    tallies.set(key, fresh);
    return fresh;
  };
  let shown = 0;
  for (const id of wanted) {
    const question = questions.get(id)!;
    const docs = docsOf.get(id);
    if (docs === undefined) continue;
    const choice = question.choices[Number(question.answer[0])];
    if (choice === undefined || choice.trim() === '') continue;
    const needle = normaliseText(choice);
    const day = dayOf(question.question_date);
    const tq = Date.parse(`${day}T23:59:59.999Z`);
    const half = fnv(id) % 2 === 0 ? 'A' : 'B';
    const type = expectedAnswerType(question.question_sentence);
    for (const setting of settings) {
      const items = itemsOf(docs, day, setting.window);
      const maxItems = Math.min(setting.maxItems, items.length);
      const used = items.slice(0, maxItems);
      const started = performance.now();
      const composed = extractiveAnswer(question.question_sentence, tq, items, maxItems).answer;
      const ms = performance.now() - started;
      const plain = extractiveAnswer(question.question_sentence, tq, items, maxItems, { corroborate: false }).answer;
      const plainHit = normaliseText(plain).includes(needle);
      const plainLeadHit = normaliseText(plain.split('\n')[0] ?? '').includes(needle);
      const old = dateFirstAnswer(tq, used);
      const hit = normaliseText(composed).includes(needle);
      const leadHit = normaliseText(composed.split('\n')[0] ?? '').includes(needle);
      const oldHit = normaliseText(old).includes(needle);
      const oldShortHit = normaliseText(old.slice(0, composed.length)).includes(needle);
      const ceiling = used.some((item) => normaliseText(item.text).includes(needle));
      const keys = [setting.name, `${setting.name} half ${half}`];
      if (setting.name === 'chunks@10') keys.push(`${setting.name} ${type}`);
      for (const key of keys) {
        const t = tally(key);
        t.n++;
        t.ceiling += Number(ceiling);
        t.sentences += Number(hit);
        t.lead += Number(leadHit);
        t.leadUncorroborated += Number(plainLeadHit);
        t.leadOnlyCorroborated += Number(leadHit && !plainLeadHit);
        t.leadOnlyUncorroborated += Number(plainLeadHit && !leadHit);
        t.sentencesUncorroborated += Number(plainHit);
        t.dateFirst += Number(oldHit);
        t.sentencesOnly += Number(hit && !oldHit);
        t.dateFirstOnly += Number(oldHit && !hit);
        t.sentenceChars += composed.length;
        t.dateFirstChars += old.length;
        t.dateFirstSameLength += Number(oldShortHit);
        t.sentencesOnlyAtSameLength += Number(hit && !oldShortHit);
        t.dateFirstOnlyAtSameLength += Number(oldShortHit && !hit);
        t.ms += ms;
      }
      if (shown < SHOW && setting.name === 'chunks@all' && fnv(`${id}show`) % 7 === 0) {
        shown++;
        console.log(
          `\n[${type}] ${question.question_sentence}\n  correct: ${choice} (${hit ? 'in' : 'NOT in'} answer)`,
        );
        console.log(composed.replace(/^/gm, '  | '));
      }
    }
  }
  const f = (x: number): string => x.toFixed(3);
  const interval = ([low, high]: [number, number]): string => `[${f(low)}, ${f(high)}]`;
  console.log(
    [
      'setting'.padEnd(24),
      'n'.padStart(5),
      'ceiling',
      'sentences [95% CI]      ',
      'first line',
      'uncorroborated: first line, difference [95% CI], anywhere',
      'date-first [95% CI]     ',
      'difference [95% CI]       ',
      'same length',
      'difference [95% CI]       ',
      'chars s / d',
      'ms/q',
    ].join('  '),
  );
  /** Paired difference of two proportions on the same questions (from the discordant pairs), normal approximation. */
  const paired = (onlyFirst: number, onlySecond: number, n: number): string => {
    const diff = (onlyFirst - onlySecond) / n;
    const se = Math.sqrt(onlyFirst + onlySecond - (onlyFirst - onlySecond) ** 2 / n) / n;
    return `${diff >= 0 ? '+' : ''}${f(diff)} [${f(diff - 1.96 * se)}, ${f(diff + 1.96 * se)}]`.padEnd(26);
  };
  for (const [key, t] of [...tallies.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(
      [
        key.padEnd(24),
        String(t.n).padStart(5),
        f(t.ceiling / t.n).padStart(7),
        `${f(t.sentences / t.n)} ${interval(wilson(t.sentences, t.n))}`,
        f(t.lead / t.n).padStart(10),
        `${f(t.leadUncorroborated / t.n)} ${paired(t.leadOnlyCorroborated, t.leadOnlyUncorroborated, t.n)} ${f(t.sentencesUncorroborated / t.n)}`.padEnd(
          56,
        ),
        `${f(t.dateFirst / t.n)} ${interval(wilson(t.dateFirst, t.n))}`,
        paired(t.sentencesOnly, t.dateFirstOnly, t.n),
        f(t.dateFirstSameLength / t.n).padStart(11),
        paired(t.sentencesOnlyAtSameLength, t.dateFirstOnlyAtSameLength, t.n),
        `${Math.round(t.sentenceChars / t.n)} / ${Math.round(t.dateFirstChars / t.n)}`.padStart(11),
        (t.ms / t.n).toFixed(1).padStart(4),
      ].join('  '),
    );
  }
}

main();

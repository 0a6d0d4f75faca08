/**
 * RealTime QA 2022–2023 as the evaluations read it (from the development data at run time, never
 * copied): the questions, spread over their dates; the documents retrieved for them and the 2022
 * gold articles; the questions whose answer occurs in some document (the answerable subset).
 * See `../shared/data/realtimeqa/README.md`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { IntakeRejection } from '../processors/intake/article-input.js';
import { canonicalUrl } from '../processors/intake/canonical-url.js';
import { normalizeArticle } from '../processors/intake/normalize-article.js';
import type { Article } from '../schemas/records.generated.js';

export interface Question {
  question_id: string;
  question_date: string;
  question_sentence: string;
  choices: string[];
  answer: string[];
}

export interface SearchDoc {
  url: string;
  title?: string | null;
  text?: string | null;
  publish_date?: string | null;
}

export interface RealtimeQaSet {
  /** Every question (deduplicated by id; "none of the above" variants left out). */
  all: number;
  /** The questions evaluated, in date order. */
  evaluated: Question[];
  /** Question id → canonical URLs of its gold articles (2022 gold questions only). */
  gold: Map<string, Set<string>>;
  /** Ids of the questions whose correct choice occurs in a document published by the question date. */
  answerable: Set<string>;
  /** The evaluated questions' documents (and gold articles), by canonical URL. */
  docs: Map<string, SearchDoc>;
}

/**
 * `count` questions spread evenly over the question dates (all of them when `count` is larger), so a
 * subset covers 2022 and 2023 alike instead of the first weeks only.
 */
export function spreadOverTime<Q extends Pick<Question, 'question_date' | 'question_id'>>(
  all: readonly Q[],
  count: number,
): Q[] {
  const byDate = [...all].sort(
    (a, b) => a.question_date.localeCompare(b.question_date) || a.question_id.localeCompare(b.question_id),
  );
  if (count >= byDate.length) return byDate;
  return Array.from({ length: count }, (_, i) => byDate[Math.floor((i * byDate.length) / count)]!);
}

/** End of the question's day, UTC (dates come as YYYY/MM/DD or YYYY-MM-DD). */
export function questionTime(date: string): number {
  return Date.parse(`${date.replace(/\//g, '-')}T23:59:59.999Z`);
}

/** Case, accents, quotes and spacing folded away, for "does this text contain the answer". */
export function normaliseText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[“”"‘’']/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The correct choice's text, or undefined when the record names none. */
export function correctChoice(question: Question): string | undefined {
  const index = Number(question.answer[0]);
  const choice = Number.isInteger(index) ? question.choices[index] : undefined;
  return choice === undefined || choice.trim() === '' ? undefined : choice;
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

/** The questions (`limit` of them spread over the dates, or all), their documents and gold articles. */
export function loadRealtimeQa(base: string, limit: number | undefined): RealtimeQaSet {
  const questions = new Map<string, Question>();
  for (const year of ['2022', '2023']) {
    for (const file of filesUnder(join(base, 'qa', year), '_qa.jsonl')) {
      for (const q of readJsonl<Question>(file)) if (!questions.has(q.question_id)) questions.set(q.question_id, q);
    }
  }
  const evaluated = spreadOverTime([...questions.values()], limit ?? questions.size);
  const wanted = new Set(evaluated.map((q) => q.question_id));
  const answerable = new Set(
    JSON.parse(readFileSync(join(base, 'derived', 'answerable_question_ids.json'), 'utf8')) as string[],
  );
  const docs = new Map<string, SearchDoc>();
  const gold = new Map<string, Set<string>>();
  for (const year of ['2022', '2023']) {
    for (const file of filesUnder(join(base, 'docs', year), '.jsonl.gz')) {
      for (const line of readJsonl<{ question_id: string; search_result: SearchDoc[] }>(file)) {
        if (!wanted.has(line.question_id)) continue;
        for (const doc of line.search_result) docs.set(canonicalUrl(doc.url), doc);
      }
    }
  }
  for (const file of filesUnder(join(base, 'gold', '2022'), '.jsonl')) {
    for (const line of readJsonl<{ question_id: string; search_result?: SearchDoc[] } & SearchDoc>(file)) {
      if (!wanted.has(line.question_id)) continue;
      for (const doc of line.search_result ?? [line]) {
        if (!doc.url) continue;
        const url = canonicalUrl(doc.url);
        docs.set(url, doc);
        gold.set(line.question_id, new Set([...(gold.get(line.question_id) ?? []), url]));
      }
    }
  }
  return { all: questions.size, evaluated, gold, answerable, docs };
}

/**
 * The documents through the product's intake normalisation (found at `now`), in publication order
 * as a replay would deliver them; what intake refuses is counted by reason.
 */
export function intakeDocuments(
  docs: Iterable<SearchDoc>,
  now: number,
): { articles: Article[]; refused: Map<string, number> } {
  const articles: Article[] = [];
  const refused = new Map<string, number>();
  for (const doc of docs) {
    try {
      articles.push(
        normalizeArticle(
          {
            url: doc.url,
            title: doc.title ?? '',
            text: doc.text ?? '',
            ...(doc.publish_date ? { published_at: doc.publish_date.replace(/\//g, '-') } : {}),
            source: new URL(doc.url).hostname.replace(/^www\./, ''),
          },
          now,
        ),
      );
    } catch (error) {
      if (!(error instanceof IntakeRejection)) throw error;
      refused.set(error.reason, (refused.get(error.reason) ?? 0) + 1);
    }
  }
  articles.sort((a, b) => a.published_at - b.published_at);
  return { articles, refused };
}

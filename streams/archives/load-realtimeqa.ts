/**
 * The RealTime QA search-result documents (`<dir>/docs/{2022,2023}/*.jsonl.gz`) as ArticleInputs,
 * for replays and benchmarks. Read at run time from the caller's path; nothing is copied.
 *
 * Each line is `{question_id, search_time, search_result: [{url, title, text, authors, publish_date}]}`
 * and the same article is retrieved for many questions, so documents are deduplicated by canonical
 * URL (the first seen wins; files are read in name order). `publish_date` (`YYYY/MM/DD`) is passed
 * through as `published_at`; a document without one stays without one, so normalisation dead-letters
 * it as `missing_date` instead of the loader inventing a date. `source` is the URL's host without `www.`.
 *
 * Items with an `error` (never a crash): `invalid_utf8`, `invalid_json` for a bad line,
 * `invalid_input` for a line or document of the wrong shape.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { z } from 'zod';
import { IntakeRejection, type ArticleInput } from '../../processors/intake/article-input.js';
import { canonicalUrl } from '../../processors/intake/canonical-url.js';
import { describeZodIssues } from '../../processors/intake/article-line.js';
import { readJsonLines } from './read-jsonl-articles.js';
import type { DatasetLoad, ReplayItem } from '../../processors/intake/replay-articles.js';

export interface RealtimeQaStats {
  files: number;
  lines: number;
  /** Lines that were not JSON or not a search-result record. */
  badLines: number;
  /** Documents in all search results, duplicates included. */
  documents: number;
  /** Documents whose canonical URL was seen before (skipped). */
  duplicates: number;
  /** Unique documents handed out (`input` or `error`). */
  yielded: number;
  /** Unique documents without a publish date. */
  undated: number;
}

const YEARS = ['2022', '2023'];

const lineSchema = z.object({ search_result: z.array(z.unknown()) });
const documentSchema = z.object({
  url: z.string().min(1),
  title: z.string().nullish(),
  text: z.string().nullish(),
  publish_date: z.string().nullish(),
});

/** The search-result documents under `dir`, or an error message when `dir/docs` holds none. */
export function loadRealtimeQaDocs(dir: string): DatasetLoad<RealtimeQaStats> {
  const docsDir = join(dir, 'docs');
  if (!existsSync(docsDir)) return { ok: false, error: `RealTime QA documents not found: ${docsDir} does not exist` };
  const files = YEARS.flatMap((year) => {
    const yearDir = join(docsDir, year);
    if (!existsSync(yearDir)) return [];
    return readdirSync(yearDir)
      .filter((name) => name.endsWith('.jsonl.gz'))
      .sort()
      .map((name) => join(yearDir, name));
  });
  if (files.length === 0) {
    return { ok: false, error: `RealTime QA documents not found: no ${YEARS.join('/')}/*.jsonl.gz under ${docsDir}` };
  }
  const stats: RealtimeQaStats = {
    files: files.length,
    lines: 0,
    badLines: 0,
    documents: 0,
    duplicates: 0,
    yielded: 0,
    undated: 0,
  };
  return { ok: true, items: documents(dir, files, stats), stats };
}

async function* documents(dir: string, files: string[], stats: RealtimeQaStats): AsyncGenerator<ReplayItem> {
  const seen = new Set<string>();
  for (const file of files) {
    const name = relative(dir, file);
    for await (const line of readJsonLines(file)) {
      stats.lines += 1;
      const origin = `${name}:${line.line}`;
      if (line.error !== undefined) {
        stats.badLines += 1;
        yield { raw: line.raw, error: line.error, origin };
        continue;
      }
      const record = lineSchema.safeParse(line.value);
      if (!record.success) {
        stats.badLines += 1;
        const error = new IntakeRejection(
          'invalid_input',
          `not a search-result line: ${describeZodIssues(record.error)}`,
        );
        yield { raw: line.raw, error, origin };
        continue;
      }
      for (const [index, value] of record.data.search_result.entries()) {
        stats.documents += 1;
        const raw = Buffer.from(JSON.stringify(value), 'utf8');
        const docOrigin = `${origin}#${index}`;
        const doc = documentSchema.safeParse(value);
        if (!doc.success) {
          stats.yielded += 1;
          const error = new IntakeRejection('invalid_input', `not a search result: ${describeZodIssues(doc.error)}`);
          yield { raw, error, origin: docOrigin };
          continue;
        }
        const key = dedupeKey(doc.data.url);
        if (seen.has(key)) {
          stats.duplicates += 1;
          continue;
        }
        seen.add(key);
        stats.yielded += 1;
        const input: ArticleInput = { url: doc.data.url };
        if (doc.data.title != null) input.title = doc.data.title;
        if (doc.data.text != null) input.text = doc.data.text;
        const date = doc.data.publish_date?.trim() ?? '';
        if (date === '') stats.undated += 1;
        else input.published_at = date;
        const source = hostSource(doc.data.url);
        if (source !== undefined) input.source = source;
        yield { raw, input, origin: docOrigin };
      }
    }
  }
}

/** Canonical URL when there is one; otherwise the URL itself (normalisation will refuse it). */
function dedupeKey(url: string): string {
  try {
    return canonicalUrl(url);
  } catch (err) {
    if (err instanceof IntakeRejection) return url;
    throw err;
  }
}

function hostSource(url: string): string | undefined {
  try {
    const host = new URL(url).hostname.toLowerCase();
    if (host === '') return undefined;
    return host.startsWith('www.') ? host.slice(4) : host;
  } catch {
    return undefined;
  }
}

/**
 * How intake normalisation treats the RealTime QA retrieval documents: how many distinct
 * articles hide behind the raw URLs, how many are accepted, and why the rest are rejected.
 *
 *   npx tsx eval/intake-report.ts
 *
 * Reads `realtimeqa/docs/<year>/*.jsonl.gz` from the development data (one line per question:
 * `{question_id, search_time, search_result: [{url, title, text, authors, publish_date}]}`);
 * skips with a message when the data is absent. Prints counts only, never article text.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { IntakeRejection, type ArticleInput } from '../processors/intake/article-input.js';
import { canonicalUrl, siteName } from '../processors/intake/canonical-url.js';
import { normalizeArticle } from '../processors/intake/normalize-article.js';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';

interface SearchResult {
  url?: unknown;
  title?: unknown;
  text?: unknown;
  publish_date?: unknown;
}

function docsFiles(root: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) files.push(...docsFiles(path));
    else if (entry.name.endsWith('.jsonl.gz')) files.push(path);
  }
  return files.sort();
}

async function* searchResults(file: string): AsyncGenerator<SearchResult> {
  const lines = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const question = JSON.parse(line) as { search_result?: unknown };
    if (!Array.isArray(question.search_result)) continue;
    for (const result of question.search_result) {
      if (typeof result === 'object' && result !== null) yield result as SearchResult;
    }
  }
}

function toInput(doc: SearchResult & { url: string }): ArticleInput {
  const input: ArticleInput = { url: doc.url };
  if (typeof doc.title === 'string') input.title = doc.title;
  if (typeof doc.text === 'string') input.text = doc.text;
  if (typeof doc.publish_date === 'string') input.published_at = doc.publish_date;
  try {
    input.source = siteName(doc.url);
  } catch {
    // An invalid URL is reported by normalisation itself.
  }
  return input;
}

function increment(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function printCounts(label: string, counts: Map<string, number>): void {
  console.log(label);
  for (const [key, count] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  ${key.padEnd(28)} ${count}`);
}

async function main(): Promise<void> {
  const root = devDataPath(join('realtimeqa', 'docs'));
  if (root === undefined) {
    console.log(missingDevDataMessage('realtimeqa/docs'));
    return;
  }
  const files = docsFiles(root);
  let docs = 0;
  const rawUrls = new Set<string>();
  const byCanonical = new Map<string, SearchResult & { url: string }>();
  const invalidUrls: (SearchResult & { url: string })[] = [];
  for (const file of files) {
    for await (const doc of searchResults(file)) {
      docs++;
      const url = typeof doc.url === 'string' ? doc.url : '';
      rawUrls.add(url);
      const withUrl = { ...doc, url };
      try {
        const canonical = canonicalUrl(url);
        if (!byCanonical.has(canonical)) byCanonical.set(canonical, withUrl);
      } catch {
        invalidUrls.push(withUrl);
      }
    }
  }

  const now = Date.now();
  const rejected = new Map<string, number>();
  const boilerplate = new Map<string, number>();
  let accepted = 0;
  const inputs = [...byCanonical.values(), ...invalidUrls].map(toInput);
  const started = process.hrtime.bigint();
  for (const input of inputs) {
    try {
      normalizeArticle(input, now);
      accepted++;
    } catch (error) {
      if (!(error instanceof IntakeRejection)) throw error;
      increment(rejected, error.reason);
      if (error.reason === 'boilerplate') increment(boilerplate, error.message.split(':')[0] ?? '');
    }
  }
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;

  console.log(`files                        ${files.length}`);
  console.log(`docs                         ${docs}`);
  console.log(`distinct raw URLs            ${rawUrls.size}`);
  console.log(`unique canonical URLs        ${byCanonical.size}`);
  console.log(`invalid URLs                 ${invalidUrls.length}`);
  console.log(`normalised                   ${inputs.length}`);
  console.log(`accepted                     ${accepted}`);
  printCounts('rejected by reason', rejected);
  printCounts('boilerplate by kind', boilerplate);
  console.log(
    `time                         ${elapsedMs.toFixed(0)} ms total, ${(elapsedMs / Math.max(inputs.length, 1)).toFixed(3)} ms per article`,
  );
}

await main();

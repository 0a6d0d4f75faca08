/**
 * The RealTime QA search-result documents as the development data stores them, read at run time
 * (`eval/dedupe-quality.ts` compares near-duplicates among them with the derived labels,
 * `bench/dedupe.ts` times the similarity joins on them).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

export interface RealtimeQaDoc {
  url: string;
  title: string;
  text: string;
  /** `YYYY/MM/DD` as given, or null for the few undated documents. */
  publishDate: string | null;
}

function stringField(value: Record<string, unknown>, key: string): string | null {
  const v = value[key];
  return typeof v === 'string' ? v : null;
}

/**
 * The search-result documents under `dir/docs/<year>/*.jsonl.gz`, each URL once (the first seen;
 * files in name order). Lines that are not JSON or not search results are skipped and counted.
 * Not processors/intake/load-realtimeqa.ts: that loader keeps one document per canonical URL,
 * while the labelled pairs name raw URLs, and every one of them must resolve to a document here.
 */
export function readRealtimeQaDocs(dir: string): { docs: RealtimeQaDoc[]; badLines: number; files: number } {
  const docsDir = join(dir, 'docs');
  const files = existsSync(docsDir)
    ? readdirSync(docsDir)
        .sort()
        .flatMap((year) =>
          readdirSync(join(docsDir, year))
            .filter((name) => name.endsWith('.jsonl.gz'))
            .sort()
            .map((name) => join(docsDir, year, name)),
        )
    : [];
  const byUrl = new Map<string, RealtimeQaDoc>();
  let badLines = 0;
  for (const file of files) {
    for (const line of gunzipSync(readFileSync(file)).toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        badLines++;
        continue;
      }
      const results = (record as { search_result?: unknown } | null)?.search_result;
      if (!Array.isArray(results)) {
        badLines++;
        continue;
      }
      for (const item of results as unknown[]) {
        if (typeof item !== 'object' || item === null) continue;
        const doc = item as Record<string, unknown>;
        const url = stringField(doc, 'url');
        if (url === null || byUrl.has(url)) continue;
        byUrl.set(url, {
          url,
          title: stringField(doc, 'title') ?? '',
          text: stringField(doc, 'text') ?? '',
          publishDate: stringField(doc, 'publish_date'),
        });
      }
    }
  }
  return { docs: [...byUrl.values()], badLines, files: files.length };
}

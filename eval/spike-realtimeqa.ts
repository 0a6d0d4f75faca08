/**
 * RealTime QA's search-result documents for the spike evaluation's alert volume on full-length
 * news (no human links): the product's own loader (deduplicated by canonical URL, undated ones
 * left undated for intake to refuse), the `limit` most recently published kept, since the older
 * documents scatter over many years a few at a time.
 */
import { loadRealtimeQaDocs } from '../streams/archives/load-realtimeqa.js';
import type { ArticleInput } from '../processors/intake/article-input.js';
import { devDataPath } from '../devkit/dev-data.js';

export async function loadRealtimeQaDocuments(limit: number): Promise<ArticleInput[] | undefined> {
  const base = devDataPath('realtimeqa');
  if (base === undefined) return undefined;
  const load = loadRealtimeQaDocs(base);
  if (!load.ok) return undefined;
  const inputs: ArticleInput[] = [];
  for await (const item of load.items) if (item.input) inputs.push(item.input);
  const dated = inputs.filter((i) => typeof i.published_at === 'string' && i.published_at.trim() !== '');
  const day = (i: ArticleInput): string => String(i.published_at).replace(/\//g, '-').slice(0, 10);
  return dated.sort((a, b) => day(b).localeCompare(day(a))).slice(0, limit);
}

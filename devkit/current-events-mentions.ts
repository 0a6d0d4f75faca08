/**
 * Wikipedia Current Events 2025 Q1 (development data, read at run time) through the product's own
 * intake normalisation, markup, chunking and dedupe, in publication order: the entity mentions the
 * spike detector would receive. Shared by the spike report and the real-data spike test.
 */
import { join } from 'node:path';
import { IntakeRejection } from '../processors/intake/article-input.js';
import {
  currentEventArticleInput,
  loadWikipediaCurrentEvents,
} from '../streams/archives/load-wikipedia-current-events.js';
import { normalizeArticle } from '../processors/intake/normalize-article.js';
import type { Article, Mention } from '../schemas/records.generated.js';
import { markChunkDedupe } from './process-articles.js';
import { devDataPath } from './dev-data.js';

export const CURRENT_EVENTS_DATASET = 'samples/wikipedia-current-events-2025q1';

/** After the last day of the sample, so no item is refused as coming from the future. */
export const CURRENT_EVENTS_NOW = Date.UTC(2025, 3, 2);

export interface CurrentEventsMentions {
  items: number;
  articles: Map<string, Article>;
  refused: Map<string, number>;
  mentions: Mention[];
}

/** Undefined when the development data is absent. */
export function currentEventsMentions(): CurrentEventsMentions | undefined {
  const base = devDataPath(CURRENT_EVENTS_DATASET);
  if (base === undefined) return undefined;
  const items = loadWikipediaCurrentEvents(join(base, 'daily_markdown'));
  const articles = new Map<string, Article>();
  const refused = new Map<string, number>();
  for (const item of items) {
    try {
      const article = normalizeArticle(currentEventArticleInput(item), CURRENT_EVENTS_NOW);
      articles.set(article.id, article);
    } catch (error) {
      // Intake's own rules apply (e.g. a one-line summary under 80 characters is `no_text`).
      if (!(error instanceof IntakeRejection)) throw error;
      refused.set(error.reason, (refused.get(error.reason) ?? 0) + 1);
    }
  }
  const ordered = [...articles.values()].sort((a, b) => a.published_at - b.published_at);
  const { mentions } = markChunkDedupe(ordered);
  return { items: items.length, articles, refused, mentions };
}

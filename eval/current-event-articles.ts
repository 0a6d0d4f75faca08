/**
 * Wikipedia Current Events items as the articles markup reads: each item's text, dated at the start
 * of its day. For the evaluations that mark the quarter directly, without intake.
 */
import { currentEventArticleInput, type CurrentEventItem } from '../streams/archives/load-wikipedia-current-events.js';
import type { Article } from '../schemas/records.generated.js';

export function currentEventArticle(item: CurrentEventItem): Article {
  const input = currentEventArticleInput(item);
  const publishedAt = Date.parse(`${item.date}T00:00:00Z`);
  return {
    id: input.id ?? input.url,
    url: input.url,
    canonical_url: input.url,
    source: input.source ?? '',
    title: input.title ?? '',
    text: item.text,
    published_at: publishedAt,
    fetched_at: publishedAt,
    language: 'en',
    version: 1,
  };
}

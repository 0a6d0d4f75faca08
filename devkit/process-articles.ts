import { chunkArticle } from '../processors/chunk/chunk-article.js';
import { NearDuplicateFilter } from '../processors/dedupe/drop-near-duplicates.js';
import { EntityRegistry } from '../processors/markup/entity-registry.js';
import { markArticle } from '../processors/markup/mark-article.js';
import type { Article, Chunk, Mention } from '../schemas/records.generated.js';

/**
 * Articles through the product's own markup, chunking and dedupe, in the order given (publication
 * order, as a replay would): the unique chunks and the mentions the stages would write, and the
 * registry markup built. What the evaluations feed the later stages with.
 */
export function markChunkDedupe(articles: readonly Article[]): {
  registry: EntityRegistry;
  chunks: Chunk[];
  mentions: Mention[];
} {
  const registry = new EntityRegistry();
  const dedupe = new NearDuplicateFilter();
  const chunks: Chunk[] = [];
  const mentions: Mention[] = [];
  for (const article of articles) {
    for (const chunk of chunkArticle(markArticle(article, registry))) {
      const decision = dedupe.offer(chunk);
      if (decision.kind !== 'unique') continue;
      chunks.push(decision.chunk);
      mentions.push(...decision.mentions);
    }
  }
  return { registry, chunks, mentions };
}

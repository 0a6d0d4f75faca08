import { afterEach, describe, expect, it } from 'vitest';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import { analyseText } from '../../processors/markup/analyse-text.js';
import { EntityRegistry } from '../../processors/markup/entity-registry.js';
import { markArticle } from '../../processors/markup/mark-article.js';
import { MarkupWorkerError, MarkupWorkers } from '../../processors/markup/markup-workers.js';
import { NEWS_STORIES } from '../fixtures/news-stories.js';

const pools: MarkupWorkers[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});
const pool = (size: number, options?: ConstructorParameters<typeof MarkupWorkers>[1]) => {
  const workers = new MarkupWorkers(size, options);
  pools.push(workers);
  return workers;
};

const articles = NEWS_STORIES.map((story) => normalizeArticle(story, Date.UTC(2026, 0, 1)));

describe('markup on worker threads', () => {
  it('marks every article exactly as on the stage’s own thread', async () => {
    const workers = pool(2);
    const analyses = await Promise.all(articles.map((a) => workers.analyse(a.text, a.published_at)));
    for (const [i, article] of articles.entries()) {
      expect(analyses[i]).toEqual(analyseText(article.text, article.published_at));
    }
    const inThread = new EntityRegistry();
    const onWorkers = new EntityRegistry();
    for (const [i, article] of articles.entries()) {
      expect(markArticle(article, onWorkers, {}, analyses[i])).toEqual(markArticle(article, inThread));
    }
  }, 60_000);

  it('does not hold a short article up behind a long one', async () => {
    const workers = pool(2);
    const long = articles
      .map((a) => a.text)
      .join('\n\n')
      .repeat(4);
    const finished: string[] = [];
    const longJob = workers.analyse(long, Date.UTC(2026, 0, 1)).then(() => finished.push('long'));
    const shortJob = workers
      .analyse('Joe Biden met Emmanuel Macron in Paris.', Date.UTC(2026, 0, 1))
      .then(() => finished.push('short'));
    await Promise.all([longJob, shortJob]);
    expect(finished).toEqual(['short', 'long']);
  }, 60_000);

  it('refuses an article whose worker dies on it twice, and goes on with fresh workers', async () => {
    // A heap too small for the tagger's view of a huge text, ample for an ordinary one.
    const workers = pool(1, { resourceLimits: { maxOldGenerationSizeMb: 96 } });
    const huge = 'Joe Biden met Emmanuel Macron in Paris on Monday. '.repeat(60_000);
    const refused = await workers.analyse(huge, Date.UTC(2026, 0, 1)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MarkupWorkerError);
    expect((refused as MarkupWorkerError).message).toMatch(/died twice/);
    expect((refused as MarkupWorkerError).broken).toBe(false);
    const after = await workers.analyse('Joe Biden met Emmanuel Macron in Paris.', Date.UTC(2026, 0, 1));
    expect(after.spans.map((s) => s.surface)).toEqual(['Joe Biden', 'Emmanuel Macron', 'Paris']);
  }, 120_000);

  it('gives up, as broken, when no worker can start', async () => {
    const workers = pool(1, { resourceLimits: { maxOldGenerationSizeMb: 2 } });
    const refused = await workers.analyse('Joe Biden spoke.', Date.UTC(2026, 0, 1)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MarkupWorkerError);
    expect((refused as MarkupWorkerError).broken).toBe(true);
    expect((refused as MarkupWorkerError).message).toMatch(/cannot start/);
    await expect(workers.analyse('Again.', 0)).rejects.toMatchObject({ broken: true });
  }, 60_000);
});

import { describe, expect, it } from 'vitest';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import { entityIdFor } from '../../processors/markup/entity-id.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { startMarkupStage } from '../../streams/stages/markup-stage.js';
import { localTopicSpecs } from '../../streams/pipeline/topics.js';

const DAY = 86_400_000;

describe('markup stage registry retention', () => {
  it('forgets a rarely mentioned entity once the news has moved on past the idle time', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics(localTopicSpecs(1));
    const stage = await startMarkupStage(transport, {
      registryRetention: { keepMentions: 2, idleMs: 30 * DAY, everyArticles: 1 },
    });
    const publisher = new TransportArticlePublisher(transport.producer());
    const article = (day: number, text: string) =>
      normalizeArticle(
        {
          url: `https://news.example/${day}`,
          title: `Day ${day}`,
          text,
          published_at: new Date(Date.UTC(2025, 0, 1) + day * DAY).toISOString(),
        },
        Date.UTC(2026, 0, 1),
      );
    await publisher.publish(
      article(0, 'Numbeo published its cost-of-living index for Bermuda and the Cayman Islands on Monday.'),
    );
    const numbeo = entityIdFor('Numbeo');
    const until = async (done: () => boolean): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await until(() => stage.registry.has(numbeo));
    expect(stage.registry.has(numbeo)).toBe(true);
    await publisher.publish(
      article(45, 'Maria Lindqvist opened the new harbour bridge in Gothenburg on Monday morning, six years late.'),
    );
    await until(() => !stage.registry.has(numbeo));
    expect(stage.registry.has(numbeo)).toBe(false);
    expect(stage.registry.has(entityIdFor('Maria Lindqvist'))).toBe(true);
    await stage.stop();
  });
});

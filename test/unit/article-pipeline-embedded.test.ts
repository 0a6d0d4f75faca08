import { describe, expect, it } from 'vitest';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import { decodeRecord } from '../../schemas/avro-codec.js';
import type { RecordName, RecordTypes } from '../../schemas/records.generated.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { startArticlePipeline } from '../harness/article-pipeline.js';
import { localTopicSpecs, TOPICS } from '../../streams/pipeline/topics.js';
import { NEWS_STORIES } from '../fixtures/news-stories.js';

const NOW = Date.UTC(2025, 3, 1);

describe('article pipeline on the embedded transport', () => {
  it('runs the same stages with no broker: every article marked, chunked and deduplicated', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics(localTopicSpecs(3));
    const all = <N extends RecordName>(topic: string, name: N): RecordTypes[N][] =>
      [0, 1, 2].flatMap((p) => transport.broker.read(topic, p, 0n).map((r) => decodeRecord(name, r.value, r.headers)));
    const pipeline = await startArticlePipeline(transport);
    const publisher = new TransportArticlePublisher(transport.producer());
    for (const input of NEWS_STORIES) await publisher.publish(normalizeArticle(input, NOW));

    const deadline = Date.now() + 20_000;
    const settled = (): boolean => {
      const chunks = all(TOPICS.chunks, 'Chunk').length;
      return (
        all(TOPICS.marked, 'MarkedArticle').length === NEWS_STORIES.length &&
        chunks > 0 &&
        pipeline.dedupe.stats().completed === chunks
      );
    };
    while (!settled() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await pipeline.stop();

    expect(all(TOPICS.marked, 'MarkedArticle')).toHaveLength(NEWS_STORIES.length);
    const chunks = all(TOPICS.chunks, 'Chunk');
    const uniqueIds = new Set(all(TOPICS.uniqueChunks, 'Chunk').map((c) => c.id));
    // Two of the seven inputs are near-copies of two others: of each pair, one article's chunks
    // survive (whichever was seen first) and the other's are merged into them.
    const articleOf = new Map(chunks.map((c) => [c.id, c.provenance[0]!.url]));
    const survivingUrls = new Set([...uniqueIds].map((id) => articleOf.get(id)));
    for (const pair of [/gbg-tribune|nordic-wire/, /weather-desk|coast-news/]) {
      expect([...survivingUrls].filter((url) => pair.test(url ?? ''))).toHaveLength(1);
    }
    expect(survivingUrls.size).toBe(NEWS_STORIES.length - 2);
    const perArticle = new Map<string, number>();
    for (const c of chunks) perArticle.set(c.provenance[0]!.url, (perArticle.get(c.provenance[0]!.url) ?? 0) + 1);
    expect(uniqueIds.size).toBe([...survivingUrls].reduce((n, url) => n + (perArticle.get(url!) ?? 0), 0));
    expect(all(TOPICS.mentions, 'Mention').length).toBeGreaterThan(uniqueIds.size);
    expect(all(TOPICS.registry, 'RegistryEntity').some((e) => e.name === 'Maria Lindqvist')).toBe(true);
  });
});

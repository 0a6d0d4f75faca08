import { describe, expect, it } from 'vitest';
import { markArticle } from '../../processors/markup/mark-article.js';
import { EntityRegistry } from '../../processors/markup/entity-registry.js';
import { encodeRecord } from '../../schemas/avro-codec.js';
import type { Article } from '../../schemas/records.generated.js';
import { MAX_ARTICLE_TEXT_BYTES, TOPIC_MAX_MESSAGE_BYTES } from '../../schemas/record-size-limits.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { DLQ_HEADERS } from '../../streams/runtime/dead-letter-writer.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { startMarkupStage } from '../../streams/stages/markup-stage.js';
import { localTopicSpecs, TOPICS } from '../../streams/pipeline/topics.js';
import { readRawTopic, readTopicRecords } from '../harness/topic-contents.js';

/**
 * Markup's output carries the text twice, escaped and tagged: an article whose marked version
 * cannot fit a Kafka record is dead-lettered at markup as `record_too_large`, and the stage goes on.
 * Ordinary prose at intake's byte bound fits with room to spare.
 */

const PUBLISHED = Date.UTC(2025, 1, 20, 9);

function article(id: string, text: string): Article {
  return {
    id,
    url: `https://news.example.org/${id}`,
    canonical_url: `https://news.example.org/${id}`,
    source: 'news.example.org',
    title: `Story ${id}`,
    text,
    published_at: PUBLISHED,
    fetched_at: PUBLISHED + 1000,
    language: 'en',
    version: 1,
  };
}

describe('markup and the record size limit', () => {
  it('dead-letters an article whose marked version is too large, and marks the next one', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics(localTopicSpecs(1));
    const stage = await startMarkupStage(transport, { log: () => undefined });
    const publisher = new TransportArticlePublisher(transport.producer());
    // 250,000 ampersands: within intake's bounds, but escaped as &amp; the marked text is 1.25 MB.
    await publisher.publish(article('escapes', `R&D ${'&'.repeat(250_000)} ends here.`));
    await publisher.publish(article('after', 'Maria Lindqvist opened the new harbour bridge in Gothenburg on Monday.'));
    const deadline = Date.now() + 30_000;
    let marked: string[] = [];
    while (Date.now() < deadline) {
      marked = (await readTopicRecords(transport, TOPICS.marked, 'MarkedArticle')).map((r) => r.value.article.id);
      if (marked.includes('after')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await stage.stop();
    expect(marked).toEqual(['after']);
    const dead = await readRawTopic(transport, TOPICS.deadLetters);
    expect(dead.map((d) => [d.key, d.headers[DLQ_HEADERS.errorCode]])).toEqual([['escapes', 'record_too_large']]);
  }, 60_000);

  it('fits ordinary prose at the intake bound into a record with room to spare', () => {
    const paragraph =
      'Maria Lindqvist, the mayor of Gothenburg, opened the new harbour bridge on Monday, six years after ' +
      'the city council approved it. Engineers from Skanska said the bridge would carry 40,000 vehicles a day. ' +
      'Prime Minister Ulf Kristersson, who attended with the Volvo chairman, praised the project. ';
    const text = paragraph.repeat(Math.floor(MAX_ARTICLE_TEXT_BYTES / Buffer.byteLength(paragraph)));
    const result = markArticle(article('long', text), new EntityRegistry());
    const bytes = encodeRecord('MarkedArticle', result).value.length;
    process.stderr.write(
      `[markup size] text ${Buffer.byteLength(text)} B, ${result.mentions.length} mentions, ${result.sentences.length} sentences → MarkedArticle ${bytes} B (${(bytes / Buffer.byteLength(text)).toFixed(2)}×)\n`,
    );
    expect(bytes).toBeLessThan(0.9 * TOPIC_MAX_MESSAGE_BYTES);
  }, 120_000);
});

import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createFeedPoller } from '../../streams/feeds/feed-poller.js';
import { JsonFileFeedStateStore } from '../../streams/feeds/feed-state-store.js';
import { parseFetchAllowList } from '../../schemas/outbound-address-policy.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { DLQ_HEADERS } from '../../streams/runtime/dead-letter-writer.js';
import { createGuardedFetch } from '../../streams/http/guarded-fetch.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { NEWS_STORIES } from '../fixtures/news-stories.js';
import { freshTopic } from '../../devkit/fresh-names.js';
import { useLiveClients } from '../harness/live-clients.js';
import { readRawTopic, readTopicRecords } from '../harness/topic-contents.js';

const live = useLiveClients();

/** An RSS 2.0 feed of the first `count` written stories, full text in content:encoded. */
function rss(count: number): string {
  const items = NEWS_STORIES.slice(0, count).map(
    (story, i) => `<item>
  <guid>story-${i}</guid>
  <title>${story.title ?? ''}</title>
  <link>${story.url.replace(/&/g, '&amp;')}</link>
  <pubDate>${new Date(String(story.published_at)).toUTCString()}</pubDate>
  <content:encoded><![CDATA[<p>${story.text ?? ''}</p>]]></content:encoded>
</item>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel><title>Written stories</title><link>https://stories.example/</link>
${items.join('\n')}
</channel></rss>`;
}

describe('feed intake on real Kafka', () => {
  let server: Server;
  let base: string;
  let itemCount = 3;
  const seen = { requests: 0, notModified: 0 };

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.requests += 1;
      if (req.url === '/broken.xml') {
        res.writeHead(200, { 'content-type': 'application/rss+xml' }).end('<rss><channel><item>');
        return;
      }
      const etag = `"v${itemCount}"`;
      if (req.headers['if-none-match'] === etag) {
        seen.notModified += 1;
        res.writeHead(304).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8', etag }).end(rss(itemCount));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('publishes new items once across restarts, uses conditional GET, and dead-letters a broken feed', async () => {
    const transport = createKafkaTransport(
      createKafkaClient({ clientId: 'feed-intake', brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING }),
    );
    const articlesTopic = freshTopic('feeds.articles');
    const deadLetterTopic = freshTopic('feeds.dlq');
    await transport.ensureTopics([
      { topic: articlesTopic, partitions: 3 },
      { topic: deadLetterTopic, partitions: 1 },
    ]);
    live.cleanup.topics.push(articlesTopic, deadLetterTopic);
    const stateDir = mkdtempSync(join(tmpdir(), 'neon-feed-state-'));
    const feeds = [
      { url: `${base}/stories.xml`, intervalSeconds: 60 },
      { url: `${base}/broken.xml`, intervalSeconds: 60 },
    ];
    const poller = () =>
      createFeedPoller({
        feeds,
        publisher: new TransportArticlePublisher(transport.producer(), { articlesTopic, deadLetterTopic }),
        stateStore: new JsonFileFeedStateStore(stateDir),
        fetchArticlePages: false,
        fetch: createGuardedFetch({ allow: parseFetchAllowList('127.0.0.1') }),
      });

    const first = poller();
    const reports = await first.pollOnce();
    await first.stop();
    expect(reports.find((r) => r.feedUrl.endsWith('stories.xml'))).toMatchObject({
      outcome: 'delivered',
      published: 3,
    });
    expect(reports.find((r) => r.feedUrl.endsWith('broken.xml'))).toMatchObject({
      outcome: 'failed',
      error: 'unparseable_feed',
    });

    // A restart: the same feed is not modified (304), then gains one item; only that one is new.
    const second = poller();
    expect((await second.pollOnce(`${base}/stories.xml`))[0]).toMatchObject({ outcome: 'not_modified' });
    itemCount = 4;
    expect((await second.pollOnce(`${base}/stories.xml`))[0]).toMatchObject({ newEntries: 1, published: 1 });
    await second.stop();
    expect(seen.notModified).toBe(1);

    const articles = await readTopicRecords(transport, articlesTopic, 'Article');
    expect(articles.map((a) => a.value.title).sort()).toEqual(
      NEWS_STORIES.slice(0, 4)
        .map((s) => s.title)
        .sort(),
    );
    for (const a of articles) expect(a.key).toBe(a.value.id);
    const deadLetters = await readRawTopic(transport, deadLetterTopic);
    expect(deadLetters.map((d) => d.headers[DLQ_HEADERS.errorCode])).toEqual(['unparseable_feed']);
    expect(deadLetters[0]!.value?.toString()).toBe('<rss><channel><item>');
    await transport.close();
  });
});

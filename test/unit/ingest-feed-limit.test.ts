import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeedPoller } from '../../streams/feeds/feed-poller.js';
import { MemoryFeedStateStore } from '../../streams/feeds/feed-state-store.js';
import { parseFetchAllowList } from '../../schemas/outbound-address-policy.js';
import { createGuardedFetch } from '../../streams/http/guarded-fetch.js';
import { runNeon } from '../../devkit/cli-process.js';
import { MemoryPublisher } from './intake-memory-publisher.js';

/**
 * `neon ingest <feed URL> --limit n` takes at most n entries of the feed: a local feed of five
 * stories, and a local stand-in for a running neon-stream's POST /v1/articles that counts what
 * arrives.
 */
const STORIES = 5;
const TEXT =
  'The river authority opened the new flood barrier on the east bank on Monday morning. Engineers said ' +
  'the barrier would protect about four thousand homes in the old town, which flooded twice in the last ' +
  'ten years. Residents who had waited for the project since the storms of the last decade gathered on the ' +
  'bridge to watch the first test, and the mayor thanked the workers who finished the job ahead of the ' +
  'winter season. The barrier cost less than planned, according to the authority, and a second section ' +
  'on the west bank is due to be built next year after the council approves the budget.';

/** Newest first, as feeds list them: story 5 (5 March) down to story 1 (1 March). */
function feed(): string {
  const items = Array.from({ length: STORIES }, (_, i) => STORIES - i)
    .map(
      (n) =>
        `<item><guid isPermaLink="false">story-${n}</guid><title>Story ${n}</title>` +
        `<link>https://news.example.org/story/${n}</link><description><![CDATA[<p>${TEXT}</p>]]></description>` +
        `<pubDate>Tue, 0${n} Mar 2024 09:00:00 GMT</pubDate></item>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Example</title><link>https://news.example.org/</link><description>x</description>${items}</channel></rss>`;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
const urlOf = (server: Server): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

let feedServer: Server;
let service: Server;
const received: { url: string }[] = [];
const dir = mkdtempSync(join(tmpdir(), 'neon-ingest-limit-'));

beforeAll(async () => {
  feedServer = await listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' });
    res.end(feed());
  });
  service = await listen((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { articles } = JSON.parse(body) as { articles: { url: string }[] };
      received.push(...articles);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ accepted: articles.map((a, i) => ({ id: `a${i}`, url: a.url })), rejected: [] }));
    });
  });
});
afterAll(async () => {
  for (const server of [feedServer, service]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  rmSync(dir, { recursive: true, force: true });
});

async function ingest(
  limit: string,
  feedUrl = `${urlOf(feedServer)}/feed.xml`,
  format: string[] = ['--json'],
): Promise<{ code: number | null; output: string }> {
  // The local feed server is on loopback, which the product refuses unless the operator allows it.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NEON_INTAKE_TOKEN: 'a-token',
    NEON_DATA_DIR: dir,
    NEON_FETCH_ALLOW: '127.0.0.1',
  };
  const run = runNeon(['ingest', feedUrl, '--limit', limit, '--api', urlOf(service), ...format], env);
  const timer = setTimeout(() => run.kill('SIGKILL'), 45_000);
  const code = await run.exited.finally(() => clearTimeout(timer));
  return { code, output: run.output() };
}

describe('neon ingest <feed URL> --limit', () => {
  it('ingests at most n entries of the feed: the newest ones', async () => {
    received.length = 0;
    const run = await ingest('2');
    expect(run.code, run.output).toBe(0);
    expect(received.map((a) => a.url).sort()).toEqual([
      'https://news.example.org/story/4',
      'https://news.example.org/story/5',
    ]);
    expect(JSON.parse(run.output.slice(run.output.indexOf('{')))).toMatchObject({ kind: 'feed-url', published: 2 });
  }, 60_000);

  it('refuses a limit that is not a positive integer with a usage error', async () => {
    received.length = 0;
    for (const limit of ['0', '1.5', 'many']) {
      const run = await ingest(limit);
      expect(run.output).toMatch(/--limit must be a positive integer/);
      expect(run.code).toBe(2);
    }
    expect(received.length).toBe(0);
  }, 120_000);
});

describe('neon ingest <feed URL> with credentials in the URL', () => {
  it('reports the feed without its key', async () => {
    const run = await ingest('1', `${urlOf(feedServer)}/feed.xml?key=feed-s3cret&lang=en`, []);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain('/feed.xml?key=<redacted>&lang=en');
    expect(run.output).not.toContain('feed-s3cret');
  }, 60_000);

  it('says why a feed with a password in its URL could not be read, without the password', async () => {
    const feedUrl = `${urlOf(feedServer)}/feed.xml`.replace('http://', 'http://reader:feed-pw@');
    const run = await ingest('1', feedUrl);
    expect(run.code).toBe(2);
    expect(run.output).toContain('http://<redacted>@127.0.0.1');
    expect(run.output).not.toContain('feed-pw');
  }, 60_000);
});

describe('createFeedPoller maxEntriesPerPoll', () => {
  it('delivers the n newest new entries and offers the others at the next poll', async () => {
    const publisher = new MemoryPublisher();
    const poller = createFeedPoller({
      feeds: [{ url: `${urlOf(feedServer)}/feed.xml`, intervalSeconds: 60 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
      fetch: createGuardedFetch({ allow: parseFetchAllowList('127.0.0.1') }),
      log: () => undefined,
      maxEntriesPerPoll: 3,
    });
    try {
      const [first] = await poller.pollOnce();
      expect(first).toMatchObject({ outcome: 'delivered', entries: 5, newEntries: 5, published: 3 });
      // Oldest first within what was taken, so the stream stays in time order.
      expect(publisher.published.map((a) => a.url)).toEqual(
        [3, 4, 5].map((n) => `https://news.example.org/story/${n}`),
      );
      const [second] = await poller.pollOnce();
      expect(second).toMatchObject({ outcome: 'delivered', newEntries: 2, published: 2 });
      expect(publisher.published.map((a) => a.url).slice(3)).toEqual(
        [1, 2].map((n) => `https://news.example.org/story/${n}`),
      );
    } finally {
      await poller.stop();
    }
  });
});

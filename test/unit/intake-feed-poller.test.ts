import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createFeedPoller,
  decodeFetchedBody,
  defaultUserAgent,
  FeedPollerConfigError,
  parseRetryAfter,
  type FeedPoller,
  type FeedPollerOptions,
  type PollReport,
} from '../../streams/feeds/feed-poller.js';
import { JsonFileFeedStateStore, MemoryFeedStateStore } from '../../streams/feeds/feed-state-store.js';
import { parseFetchAllowList } from '../../schemas/outbound-address-policy.js';
import { createGuardedFetch } from '../../streams/http/guarded-fetch.js';
import { MemoryPublisher } from './intake-memory-publisher.js';

const PARAGRAPH =
  'The river authority opened the new flood barrier on the east bank on Monday morning. Engineers said ' +
  'the barrier would protect about four thousand homes in the old town, which flooded twice in the last ' +
  'ten years. Residents who had waited for the project since the storms of the last decade gathered on the ' +
  'bridge to watch the first test, and the mayor thanked the workers who finished the job ahead of the ' +
  'winter season. The barrier cost less than planned, according to the authority, and a second section ' +
  'on the west bank is due to be built next year after the council approves the budget.';

interface Item {
  guid: string;
  title: string;
  link?: string;
  description?: string;
  pubDate?: string;
}

function rss(items: Item[]): string {
  const entries = items
    .map(
      (i) =>
        `<item><guid isPermaLink="false">${i.guid}</guid><title>${i.title}</title>` +
        `<link>${i.link ?? `https://news.example.org/story/${i.guid}`}</link>` +
        `<description><![CDATA[<p>${i.description ?? PARAGRAPH}</p>]]></description>` +
        `<pubDate>${i.pubDate ?? 'Mon, 04 Mar 2024 09:00:00 GMT'}</pubDate></item>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Example</title><link>https://news.example.org/</link><description>x</description>${entries}</channel></rss>`;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface TestServer {
  url: string;
  requests: { path: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

async function serve(handler: Handler): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ path: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function sendFeed(res: ServerResponse, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8', ...headers });
  res.end(body);
}

const servers: TestServer[] = [];
const pollers: FeedPoller[] = [];
async function server(handler: Handler): Promise<TestServer> {
  const s = await serve(handler);
  servers.push(s);
  return s;
}
/** The product's guarded fetch, allowed to reach the test servers on 127.0.0.1 as an operator would allow an intranet host. */
const LOCAL_FETCH = createGuardedFetch({ allow: parseFetchAllowList('127.0.0.1') });

function poller(options: Omit<FeedPollerOptions, 'fetch'> & Partial<Pick<FeedPollerOptions, 'fetch'>>): FeedPoller {
  const p = createFeedPoller({ random: () => 0.5, log: () => undefined, fetch: LOCAL_FETCH, ...options });
  pollers.push(p);
  return p;
}

afterEach(async () => {
  await Promise.all(pollers.splice(0).map((p) => p.stop()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('createFeedPoller: conditional GET and new items only', () => {
  it('publishes every entry once, politely, then sends the validators and treats 304 as nothing to do', async () => {
    const items = [
      { guid: 'g2', title: 'Second story' },
      { guid: 'g1', title: 'First story' },
    ];
    const s = await server((req, res) => {
      if (req.headers['if-none-match'] === '"v1"') {
        res.writeHead(304);
        res.end();
        return;
      }
      sendFeed(res, rss(items), { etag: '"v1"', 'last-modified': 'Mon, 04 Mar 2024 10:00:00 GMT' });
    });
    const publisher = new MemoryPublisher();
    const stateStore = new MemoryFeedStateStore();
    const p = poller({ feeds: [{ url: `${s.url}/feed.xml`, intervalSeconds: 60 }], publisher, stateStore });

    const [first] = await p.pollOnce();
    expect(first).toMatchObject({
      outcome: 'delivered',
      httpStatus: 200,
      entries: 2,
      newEntries: 2,
      published: 2,
      failures: 0,
    });
    // Oldest first: feeds list the newest entry at the top.
    expect(publisher.published.map((a) => a.title)).toEqual(['First story', 'Second story']);
    expect(publisher.published[0]).toMatchObject({ url: 'https://news.example.org/story/g1', source: '127.0.0.1' });
    expect(s.requests[0]!.headers['user-agent']).toBe(defaultUserAgent());
    expect(defaultUserAgent()).toMatch(
      /^neon-stream\/\d+\.\d+\.\d+ \(\+https:\/\/github\.com\/neon-stream\/neon-stream\)$/,
    );
    expect(s.requests[0]!.headers['if-none-match']).toBeUndefined();

    const [second] = await p.pollOnce();
    expect(s.requests[1]!.headers['if-none-match']).toBe('"v1"');
    expect(s.requests[1]!.headers['if-modified-since']).toBe('Mon, 04 Mar 2024 10:00:00 GMT');
    expect(second).toMatchObject({ outcome: 'not_modified', httpStatus: 304, published: 0 });
    expect(publisher.published).toHaveLength(2);
  });

  it('writes state only when it changed: a quiet feed answering 304 costs no write', async () => {
    const s = await server((req, res) => {
      if (req.headers['if-none-match'] === '"q"') {
        res.writeHead(304);
        res.end();
        return;
      }
      sendFeed(res, rss([{ guid: 'q1', title: 'Quiet story' }]), { etag: '"q"' });
    });
    const stateStore = new MemoryFeedStateStore();
    const put = stateStore.put.bind(stateStore);
    let writes = 0;
    stateStore.put = (url, state) => {
      writes += 1;
      return put(url, state);
    };
    const p = poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 60 }],
      publisher: new MemoryPublisher(),
      stateStore,
    });
    await p.pollOnce();
    expect(writes).toBe(1);
    const stored = await stateStore.get(`${s.url}/rss`);
    expect(stored).toMatchObject({ etag: '"q"', lastModified: null, seenGuids: ['q1'], failures: 0 });
    expect(Object.keys(stored)).toEqual(['etag', 'lastModified', 'seenGuids', 'failures', 'revisions']);
    expect(stored.revisions?.['q1']?.version).toBe(1);
    await p.pollOnce();
    await p.pollOnce();
    expect(writes).toBe(1);
  });

  it('remembers seen guids across a restart (file store) and publishes only the new entry', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'neon-poller-'));
    try {
      let items = [{ guid: 'old', title: 'Old story' }];
      const s = await server((_req, res) => sendFeed(res, rss(items)));
      const feeds = [{ url: `${s.url}/rss`, intervalSeconds: 60, source: 'Example Wire' }];
      const before = new MemoryPublisher();
      await poller({ feeds, publisher: before, stateStore: new JsonFileFeedStateStore(dir) }).pollOnce();
      expect(before.published.map((a) => [a.title, a.source])).toEqual([['Old story', 'Example Wire']]);

      items = [{ guid: 'new', title: 'New story' }, ...items];
      const after = new MemoryPublisher();
      const [report] = await poller({
        feeds,
        publisher: after,
        stateStore: new JsonFileFeedStateStore(dir),
      }).pollOnce();
      expect(after.published.map((a) => a.title)).toEqual(['New story']);
      expect(report).toMatchObject({ entries: 2, newEntries: 1, published: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('dead-letters an entry normalisation refuses, with the entry as bytes and the feed URL as origin', async () => {
    const s = await server((_req, res) =>
      sendFeed(res, rss([{ guid: 'ad', title: 'Advertisement', description: 'How relevant is this ad to you?' }])),
    );
    const publisher = new MemoryPublisher();
    const feedUrl = `${s.url}/rss`;
    const [report] = await poller({
      feeds: [{ url: feedUrl, intervalSeconds: 60 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
      fetchArticlePages: false,
    }).pollOnce();
    expect(report).toMatchObject({ outcome: 'delivered', published: 0, rejected: 1 });
    expect(publisher.rejected).toHaveLength(1);
    expect(['boilerplate', 'no_text']).toContain(publisher.rejected[0]!.rejection.reason);
    expect(publisher.rejected[0]!.origin).toBe(feedUrl);
    expect(JSON.parse(publisher.rejected[0]!.original.toString())).toMatchObject({
      guid: 'ad',
      title: 'Advertisement',
    });
  });

  it('follows redirects and resolves relative links against the final address', async () => {
    const s = await server((req, res) => {
      if (req.url === '/old') {
        res.writeHead(301, { location: '/new/feed.xml' });
        res.end();
        return;
      }
      sendFeed(res, rss([{ guid: 'r', title: 'Moved story', link: 'story.html' }]));
    });
    const publisher = new MemoryPublisher();
    await poller({
      feeds: [{ url: `${s.url}/old`, intervalSeconds: 60 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
    }).pollOnce();
    expect(publisher.published.map((a) => a.url)).toEqual([`${s.url}/new/story.html`]);
  });
});

describe('createFeedPoller: article pages', () => {
  const page = (title: string) =>
    `<!doctype html><html><head><title>${title}</title></head><body><nav>Home | World</nav>` +
    `<article><h1>${title}</h1><p>${PARAGRAPH}</p><p>${PARAGRAPH.replace('Monday', 'Tuesday')}</p></article></body></html>`;

  it('fetches the page of a short entry, politely, and publishes its main text', async () => {
    const s = await server((req, res) => {
      if (req.url === '/rss') {
        sendFeed(
          res,
          rss([
            {
              guid: 'p',
              title: 'Barrier opens',
              link: `http://${req.headers.host}/story/p`,
              description: 'Short teaser.',
            },
          ]),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page('Barrier opens'));
    });
    const publisher = new MemoryPublisher();
    const [report] = await poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 60 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
    }).pollOnce();
    expect(report).toMatchObject({ published: 1, pageFetches: 1, pageFetchFailures: 0 });
    expect(s.requests.map((r) => r.path)).toEqual(['/rss', '/story/p']);
    expect(s.requests[1]!.headers['user-agent']).toBe(defaultUserAgent());
    expect(publisher.published[0]!.text).toContain('four thousand homes');
    expect(publisher.published[0]!.text).not.toContain('Short teaser');
    expect(publisher.published[0]!.published_at).toBe(Date.parse('Mon, 04 Mar 2024 09:00:00 GMT'));
  });

  it('does not fetch pages when told not to, and entries with enough text never need one', async () => {
    const s = await server((req, res) =>
      sendFeed(
        res,
        rss([
          { guid: 'long', title: 'Long entry' },
          { guid: 'short', title: 'Short', description: 'Teaser only.' },
        ]),
      ),
    );
    const publisher = new MemoryPublisher();
    const [report] = await poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 60 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
      fetchArticlePages: false,
    }).pollOnce();
    expect(s.requests).toHaveLength(1);
    expect(report).toMatchObject({ published: 1, rejected: 1, pageFetches: 0 });
    expect(publisher.reasons()).toEqual(['no_text']);
  });

  it('defers a short entry whose page fails transiently, keeps the validators, and delivers it next time', async () => {
    let pageUp = false;
    const s = await server((req, res) => {
      if (req.url === '/rss') {
        sendFeed(
          res,
          rss([{ guid: 'd', title: 'Deferred', link: `http://${req.headers.host}/story/d`, description: 'Teaser.' }]),
          {
            etag: '"e1"',
          },
        );
        return;
      }
      if (!pageUp) {
        res.writeHead(503);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(page('Deferred'));
    });
    const publisher = new MemoryPublisher();
    const p = poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 60 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
    });
    const [first] = await p.pollOnce();
    expect(first).toMatchObject({ outcome: 'delivered', published: 0, rejected: 0, deferred: 1, pageFetchFailures: 1 });
    expect(publisher.rejected).toEqual([]);

    pageUp = true;
    const [second] = await p.pollOnce();
    const feedRequests = s.requests.filter((r) => r.path === '/rss');
    expect(feedRequests[1]!.headers['if-none-match']).toBeUndefined();
    expect(second).toMatchObject({ published: 1, deferred: 0 });
    expect(publisher.published.map((a) => a.title)).toEqual(['Deferred']);

    await p.pollOnce();
    expect(s.requests.filter((r) => r.path === '/rss')[2]!.headers['if-none-match']).toBe('"e1"');
  });

  it('falls back to the entry when the page is gone for good (404) and dead-letters it if too short', async () => {
    const s = await server((req, res) => {
      if (req.url === '/rss') {
        sendFeed(
          res,
          rss([{ guid: 'x', title: 'Gone', link: `http://${req.headers.host}/story/x`, description: 'Teaser.' }]),
        );
        return;
      }
      res.writeHead(404);
      res.end();
    });
    const publisher = new MemoryPublisher();
    const [report] = await poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 60 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
    }).pollOnce();
    expect(report).toMatchObject({ rejected: 1, deferred: 0, pageFetchFailures: 1 });
    expect(publisher.reasons()).toEqual(['no_text']);
  });
});

describe('createFeedPoller: failures and backoff', () => {
  it('dead-letters an unparseable body once per poll and grows the backoff', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Service page, not a feed</body></html>');
    });
    const publisher = new MemoryPublisher();
    const feedUrl = `${s.url}/rss`;
    const p = poller({
      feeds: [{ url: feedUrl, intervalSeconds: 10 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
    });
    const reports: PollReport[] = [];
    for (let i = 0; i < 3; i += 1) reports.push(...(await p.pollOnce()));
    expect(reports.map((r) => [r.outcome, r.error, r.failures, r.nextPollMs])).toEqual([
      ['failed', 'unparseable_feed', 1, 20_000],
      ['failed', 'unparseable_feed', 2, 40_000],
      ['failed', 'unparseable_feed', 3, 80_000],
    ]);
    expect(publisher.rejected.map((r) => [r.rejection.reason, r.origin])).toEqual([
      ['unparseable_feed', feedUrl],
      ['unparseable_feed', feedUrl],
      ['unparseable_feed', feedUrl],
    ]);
    expect(publisher.rejected[0]!.original.toString()).toContain('Service page');
  });

  it('resets the failure count after a success and caps the backoff', async () => {
    let healthy = false;
    const s = await server((_req, res) => {
      if (healthy) return sendFeed(res, rss([]));
      res.writeHead(500);
      res.end();
    });
    const p = poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 10 }],
      publisher: new MemoryPublisher(),
      stateStore: new MemoryFeedStateStore(),
      maxBackoffSeconds: 35,
    });
    const delays: (number | undefined)[] = [];
    for (let i = 0; i < 3; i += 1) {
      const [r] = await p.pollOnce();
      expect(r).toMatchObject({ outcome: 'failed', error: 'http_status', httpStatus: 500 });
      delays.push(r?.nextPollMs);
    }
    expect(delays).toEqual([20_000, 35_000, 35_000]);
    healthy = true;
    const [ok] = await p.pollOnce();
    expect(ok).toMatchObject({ outcome: 'delivered', failures: 0, nextPollMs: 10_000 });
  });

  it('waits at least as long as Retry-After asks', async () => {
    const s = await server((_req, res) => {
      res.writeHead(429, { 'retry-after': '120' });
      res.end();
    });
    const [r] = await poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 10 }],
      publisher: new MemoryPublisher(),
      stateStore: new MemoryFeedStateStore(),
    }).pollOnce();
    expect(r).toMatchObject({ error: 'http_status', httpStatus: 429, nextPollMs: 120_000 });
  });

  it.each([
    ['a declared Content-Length', true],
    ['a chunked body', false],
  ])('refuses a body over maxBytes with %s', async (_name, declared) => {
    const body = rss(Array.from({ length: 20 }, (_, i) => ({ guid: `g${i}`, title: `T${i}` })));
    const s = await server((_req, res) => {
      res.writeHead(200, declared ? { 'content-length': String(Buffer.byteLength(body)) } : {});
      if (declared) res.end(body);
      else {
        res.write(body.slice(0, 5000));
        res.end(body.slice(5000));
      }
    });
    const publisher = new MemoryPublisher();
    const [r] = await poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 10 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
      maxBytes: 4096,
    }).pollOnce();
    expect(r).toMatchObject({ outcome: 'failed', error: 'too_large', failures: 1 });
    expect(publisher.published).toEqual([]);
    expect(publisher.rejected).toEqual([]);
  });

  it('times out a feed that never answers', async () => {
    const s = await server(() => undefined);
    const started = Date.now();
    const [r] = await poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 10 }],
      publisher: new MemoryPublisher(),
      stateStore: new MemoryFeedStateStore(),
      timeoutMs: 300,
    }).pollOnce();
    expect(r).toMatchObject({ outcome: 'failed', error: 'timeout', failures: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('reports a refused connection as a network failure', async () => {
    const s = await serve(() => undefined);
    const url = `${s.url}/rss`;
    await s.close();
    const [r] = await poller({
      feeds: [{ url, intervalSeconds: 10 }],
      publisher: new MemoryPublisher(),
      stateStore: new MemoryFeedStateStore(),
    }).pollOnce();
    expect(r).toMatchObject({ outcome: 'failed', error: 'network', message: 'ECONNREFUSED' });
  });

  it('when the publisher fails mid-poll, keeps what was delivered and re-offers the rest next time', async () => {
    const items = [
      { guid: 'c', title: 'Story C' },
      { guid: 'b', title: 'Story B' },
      { guid: 'a', title: 'Story A' },
    ];
    const s = await server((_req, res) => sendFeed(res, rss(items), { etag: '"same"' }));
    const publisher = new MemoryPublisher();
    const p = poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 10 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
    });
    const original = publisher.publish.bind(publisher);
    let calls = 0;
    publisher.publish = async (article) => {
      calls += 1;
      if (calls === 2) throw new Error('broker down');
      return original(article);
    };
    const [first] = await p.pollOnce();
    expect(first).toMatchObject({ outcome: 'failed', error: 'publish_failed', published: 1, failures: 1 });
    const [second] = await p.pollOnce();
    // The ETag was not stored, so the feed came back in full rather than as a 304.
    expect(s.requests[1]!.headers['if-none-match']).toBeUndefined();
    expect(second).toMatchObject({ outcome: 'delivered', newEntries: 2, published: 2 });
    expect(publisher.published.map((a) => a.title)).toEqual(['Story A', 'Story B', 'Story C']);
  });

  it('survives a state store that fails, reporting state_store', async () => {
    const s = await server((_req, res) => sendFeed(res, rss([]), { etag: '"v"' }));
    const stateStore = new MemoryFeedStateStore();
    stateStore.put = () => Promise.reject(new Error('disk full'));
    const [r] = await poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 10 }],
      publisher: new MemoryPublisher(),
      stateStore,
    }).pollOnce();
    expect(r).toMatchObject({ outcome: 'failed', error: 'state_store', failures: 1, message: 'disk full' });
  });
});

describe('createFeedPoller: scheduling and isolation', () => {
  let counter = 0;
  beforeEach(() => {
    counter = 0;
  });

  it('keeps delivering a healthy feed while another feed hangs, and stops promptly', async () => {
    const hanging = await server(() => undefined);
    const live = await server((_req, res) => {
      counter += 1;
      const items = Array.from({ length: counter }, (_, i) => ({ guid: `n${i}`, title: `Live ${i}` })).reverse();
      sendFeed(res, rss(items));
    });
    const publisher = new MemoryPublisher();
    const reports: PollReport[] = [];
    const p = poller({
      feeds: [
        { url: `${hanging.url}/rss`, intervalSeconds: 0.05 },
        { url: `${live.url}/rss`, intervalSeconds: 0.05 },
      ],
      publisher,
      stateStore: new MemoryFeedStateStore(),
      timeoutMs: 10_000,
      startSpreadSeconds: 0,
      onPoll: (r) => reports.push(r),
    });
    p.start();
    const deadline = Date.now() + 5000;
    while (publisher.published.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(publisher.published.map((a) => a.title).slice(0, 4)).toEqual(['Live 0', 'Live 1', 'Live 2', 'Live 3']);
    expect(reports.every((r) => r.feedUrl === `${live.url}/rss`)).toBe(true);
    expect(hanging.requests).toHaveLength(1);

    const stopping = Date.now();
    await p.stop();
    expect(Date.now() - stopping).toBeLessThan(1000);
    const hangingReport = reports.find((r) => r.feedUrl === `${hanging.url}/rss`);
    expect(hangingReport).toMatchObject({ outcome: 'failed', error: 'stopped' });
    const published = publisher.published.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(publisher.published.length).toBe(published);
    expect(() => p.start()).toThrow(/stopped/);
  });

  it('jitters intervals within ±10 %', async () => {
    const s = await server((_req, res) => sendFeed(res, rss([])));
    const draws = [0, 1];
    let n = 0;
    const p = createFeedPoller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 100 }],
      publisher: new MemoryPublisher(),
      stateStore: new MemoryFeedStateStore(),
      random: () => draws[n++ % 2]!,
      log: () => undefined,
      fetch: LOCAL_FETCH,
    });
    pollers.push(p);
    const low = await p.pollOnce();
    const high = await p.pollOnce();
    expect([low[0]!.nextPollMs, high[0]!.nextPollMs]).toEqual([90_000, 110_000]);
  });

  it('joins a poll already in flight instead of fetching twice', async () => {
    const s = await server((_req, res) => setTimeout(() => sendFeed(res, rss([{ guid: 'j', title: 'Joined' }])), 100));
    const publisher = new MemoryPublisher();
    const p = poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 10 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
    });
    const [a, b] = await Promise.all([p.pollOnce(), p.pollOnce(`${s.url}/rss`)]);
    expect(a[0]).toBe(b[0]);
    expect(s.requests).toHaveLength(1);
    expect(publisher.published).toHaveLength(1);
  });

  it('refuses to poll a feed it was not given', async () => {
    const p = poller({
      feeds: [{ url: 'https://example.org/rss', intervalSeconds: 10 }],
      publisher: new MemoryPublisher(),
      stateStore: new MemoryFeedStateStore(),
    });
    await expect(p.pollOnce('https://other.example.org/rss')).rejects.toThrow(/not a configured feed/);
  });
});

describe('feed configuration', () => {
  it('lists every problem at once', () => {
    const make = () =>
      createFeedPoller({
        feeds: [
          { url: 'ftp://example.org/feed', intervalSeconds: 10 },
          { url: 'https://example.org/a', intervalSeconds: 0 },
          { url: 'https://example.org/b', intervalSeconds: 10 },
          { url: 'https://example.org/b', intervalSeconds: 20 },
        ],
        publisher: new MemoryPublisher(),
        stateStore: new MemoryFeedStateStore(),
        fetch: LOCAL_FETCH,
      });
    expect(make).toThrow(FeedPollerConfigError);
    try {
      make();
    } catch (err) {
      expect((err as FeedPollerConfigError).problems).toEqual([
        'feeds[0].url: must be an http(s) URL',
        'feeds[1].intervalSeconds: must be positive',
        'feeds[3].url: https://example.org/b is listed twice',
      ]);
    }
  });
});

describe('decodeFetchedBody', () => {
  it('uses the charset of the header, else of the XML declaration, else strict UTF-8', () => {
    const latin = Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><rss>caf\xe9</rss>', 'latin1');
    expect(decodeFetchedBody(latin, 'application/rss+xml')).toContain('café');
    expect(decodeFetchedBody(Buffer.from('caf\xe9', 'latin1'), 'text/xml; charset=iso-8859-1')).toBe('café');
    expect(decodeFetchedBody(Buffer.from('<p>café</p>'), null)).toBe('<p>café</p>');
    expect(() => decodeFetchedBody(Buffer.from('<rss>caf\xe9</rss>', 'latin1'), 'application/rss+xml')).toThrow(
      /not valid UTF-8/,
    );
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2024, 0, 1);
  it.each([
    ['120', 120_000],
    ['0', 0],
    ['Mon, 01 Jan 2024 00:01:00 GMT', 60_000],
    ['Sun, 31 Dec 2023 00:00:00 GMT', 0],
    ['soon', undefined],
    [null, undefined],
  ])('reads %s as %s ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('createFeedPoller: an entry whose text changed', () => {
  it('publishes it again as the next version, dated when the change was seen, and only once per change', async () => {
    let description = PARAGRAPH;
    const s = await server((_req, res) => sendFeed(res, rss([{ guid: 'r1', title: 'Barrier opened', description }])));
    const publisher = new MemoryPublisher();
    let clock = Date.UTC(2024, 2, 5, 12);
    const p = poller({
      feeds: [{ url: `${s.url}/rss`, intervalSeconds: 60 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
      now: () => clock,
    });
    await p.pollOnce();
    await p.pollOnce();
    expect(publisher.published.map((a) => a.version)).toEqual([1]);
    const first = publisher.published[0]!;
    description = PARAGRAPH.replace('four thousand homes', 'six thousand homes');
    clock += 3_600_000;
    const [report] = await p.pollOnce();
    expect(report).toMatchObject({ newEntries: 0, revisedEntries: 1, published: 1 });
    const second = publisher.published[1]!;
    expect(second).toMatchObject({ id: first.id, version: 2, published_at: clock });
    expect(second.text).toContain('six thousand homes');
    expect(first.published_at).toBe(Date.parse('Mon, 04 Mar 2024 09:00:00 GMT'));
    await p.pollOnce();
    expect(publisher.published).toHaveLength(2);
  });

  it('stops at five versions, and takes the entries of a state from before revisions as they stand', async () => {
    let round = 0;
    const s = await server((_req, res) =>
      sendFeed(res, rss([{ guid: 'r2', title: 'Barrier opened', description: `${PARAGRAPH} Update ${round}.` }])),
    );
    const publisher = new MemoryPublisher();
    const stateStore = new MemoryFeedStateStore();
    // Written before revisions were followed: the guid is known, its text is not.
    await stateStore.put(`${s.url}/rss`, { etag: null, lastModified: null, seenGuids: ['r2'], failures: 0 });
    const p = poller({ feeds: [{ url: `${s.url}/rss`, intervalSeconds: 60 }], publisher, stateStore });
    await p.pollOnce();
    expect(publisher.published).toHaveLength(0);
    for (round = 1; round <= 7; round++) await p.pollOnce();
    expect(publisher.published.map((a) => a.version)).toEqual([2, 3, 4, 5]);
  });
});

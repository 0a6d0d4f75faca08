import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createFeedPoller } from '../../streams/feeds/feed-poller.js';
import { MemoryFeedStateStore } from '../../streams/feeds/feed-state-store.js';
import { deliverWebhook, type WebhookEndpoint } from '../../processors/spikes/deliver-webhook.js';
import { Secret } from '../../schemas/connection-config.js';
import { ConfigError } from '../../schemas/local-infra-config.js';
import {
  addressRefusal,
  addressRefusalIn,
  hostRefusal,
  parseFetchAllowList,
} from '../../schemas/outbound-address-policy.js';
import { createGuardedFetch, type HostResolver } from '../../streams/http/guarded-fetch.js';
import { runNeon } from '../../devkit/cli-process.js';
import { FIXTURES } from './avro-fixtures.js';
import { MemoryPublisher } from './intake-memory-publisher.js';

/**
 * Outbound requests named by feeds, their entries, `neon ingest <URL>` and webhook settings never
 * reach internal addresses unless the operator allows them (NEON_FETCH_ALLOW): checked after DNS
 * resolution, on the address connected to, and at every redirect hop.
 */

const TEXT =
  'The river authority opened the new flood barrier on the east bank on Monday morning. Engineers said ' +
  'the barrier would protect about four thousand homes in the old town, which flooded twice in the last ' +
  'ten years. Residents who had waited for the project since the storms of the last decade gathered on the ' +
  'bridge to watch the first test, and the mayor thanked the workers who finished the job ahead of the ' +
  'winter season. The barrier cost less than planned, according to the authority.';

interface Local {
  url: string;
  port: number;
  paths: string[];
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Local> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, paths };
}

/** A resolver that knows a few names and nothing else (no real DNS in tests). */
function resolver(names: Record<string, string[]>): HostResolver {
  return async (hostname) => {
    const addresses = names[hostname];
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const page = (res: ServerResponse): void => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<html><head><title>Secret</title></head><body><article><p>${TEXT}</p></article></body></html>`);
};

describe('the address policy', () => {
  it('refuses loopback, private, link-local, unique-local, unspecified, CGNAT and metadata addresses', () => {
    const refused: Record<string, RegExp> = {
      '127.0.0.1': /loopback/,
      '127.9.8.7': /loopback/,
      '::1': /loopback/,
      '10.0.0.5': /private/,
      '172.16.0.1': /private/,
      '172.31.255.254': /private/,
      '192.168.1.20': /private/,
      '169.254.10.1': /link-local/,
      '169.254.169.254': /metadata/,
      'fe80::1': /link-local/,
      'fc00::1': /unique-local/,
      'fd12:3456::1': /unique-local/,
      'fd00:ec2::254': /metadata/,
      '0.0.0.0': /unspecified/,
      '::': /unspecified/,
      '100.64.0.1': /carrier-grade NAT/,
      '100.127.255.254': /carrier-grade NAT/,
      '::ffff:127.0.0.1': /loopback/,
      '::ffff:10.0.0.5': /private/,
      '::ffff:a9fe:a9fe': /metadata/,
      '64:ff9b::a00:5': /private/,
      '[::1]': /loopback/,
    };
    for (const [address, why] of Object.entries(refused)) expect(addressRefusal(address), address).toMatch(why);
    expect(addressRefusal('10.0.0.5')).toBe('a private address');
    for (const address of [
      '8.8.8.8',
      '172.32.0.1',
      '100.128.0.1',
      '93.184.216.34',
      '2606:4700::1111',
      '::ffff:8.8.8.8',
    ]) {
      expect(addressRefusal(address), address).toBeUndefined();
    }
  });

  it('checks IP literals and metadata host names before any lookup', () => {
    expect(hostRefusal('127.0.0.1')?.message).toBe('127.0.0.1 is a loopback address');
    expect(hostRefusal('[::ffff:192.168.0.1]')?.message).toMatch(/private/);
    expect(hostRefusal('metadata.google.internal')?.message).toMatch(/metadata/);
    expect(hostRefusal('METADATA.GOOGLE.INTERNAL.')?.message).toMatch(/metadata/);
    expect(hostRefusal('news.example.org')).toBeUndefined();
  });

  it('lets the allow-list name hosts, domains, addresses and CIDR ranges', () => {
    const allow = parseFetchAllowList('feeds.intranet, .corp.example 10.20.0.0/16,127.0.0.1 fd12::/16');
    expect(hostRefusal('feeds.intranet', allow)).toBeUndefined();
    expect(hostRefusal('news.corp.example', allow)).toBeUndefined();
    expect(addressRefusal('10.20.3.4', allow)).toBeUndefined();
    expect(addressRefusal('::ffff:10.20.3.4', allow)).toBeUndefined();
    expect(addressRefusal('10.21.0.1', allow)).toMatch(/private/);
    expect(addressRefusal('127.0.0.1', allow)).toBeUndefined();
    expect(addressRefusal('127.0.0.2', allow)).toMatch(/loopback/);
    expect(addressRefusal('fd12::9', allow)).toBeUndefined();
    expect(hostRefusal('other.intranet', allow)).toBeUndefined(); // a name: checked once resolved
    expect(() => parseFetchAllowList('10.0.0.0/33, http://x/')).toThrow(ConfigError);
    try {
      parseFetchAllowList('10.0.0.0/33, http://x/');
    } catch (error) {
      expect((error as ConfigError).problems).toHaveLength(2);
    }
  });
});

describe('the guarded fetch', () => {
  it('refuses a loopback, private or metadata URL without connecting', async () => {
    const local = await serve((_req, res) => page(res));
    const guarded = createGuardedFetch();
    for (const url of [`${local.url}/page`, 'http://10.0.0.5/admin', 'http://169.254.169.254/latest/meta-data/']) {
      const error = await guarded(url).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(addressRefusalIn(error), url).toBeDefined();
    }
    expect(local.paths).toEqual([]);
  });

  it('refuses a public-looking name that resolves to a loopback address, checked on the connection', async () => {
    const local = await serve((_req, res) => page(res));
    const guarded = createGuardedFetch({ resolve: resolver({ 'news.example.org': ['93.184.216.34', '127.0.0.1'] }) });
    const error = await guarded(`http://news.example.org:${local.port}/page`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(addressRefusalIn(error)?.message).toBe('127.0.0.1 is a loopback address (news.example.org)');
    expect(local.paths).toEqual([]);
  });

  it('refuses a redirect from an allowed server to a private address at that hop', async () => {
    let target = 'http://10.0.0.5/internal';
    const allowed = await serve((req, res) => {
      if (req.url === '/hop') res.writeHead(302, { location: '/page' }).end();
      else if (req.url === '/page') page(res);
      else res.writeHead(301, { location: target }).end();
    });
    const inside = await serve((_req, res) => page(res));
    const guarded = createGuardedFetch({
      allow: parseFetchAllowList('feeds.intranet'),
      resolve: resolver({ 'feeds.intranet': ['127.0.0.1'], 'cdn.example.net': ['127.0.0.1'] }),
    });
    const base = `http://feeds.intranet:${allowed.port}`;
    // A redirect within the allowed host is followed, and the response names where it ended.
    const ok = await guarded(`${base}/hop`);
    expect(ok.status).toBe(200);
    expect(ok.url).toBe(`${base}/page`);
    await ok.text();

    for (const to of [
      'http://10.0.0.5/internal',
      'http://169.254.169.254/latest/',
      `http://cdn.example.net:${inside.port}/x`,
    ]) {
      target = to;
      const error = await guarded(`${base}/feed.xml`).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(addressRefusalIn(error), to).toBeDefined();
    }
    expect(inside.paths).toEqual([]);
  });

  it('gives up after the hop limit', async () => {
    const looping = await serve((_req, res) => res.writeHead(302, { location: '/again' }).end());
    const guarded = createGuardedFetch({ allow: parseFetchAllowList('127.0.0.1'), maxRedirects: 3 });
    await expect(guarded(`${looping.url}/start`)).rejects.toThrow(/more than 3 redirects/);
    expect(looping.paths).toHaveLength(4);
  });

  it('lets a host the allow-list names through, whatever it resolves to', async () => {
    const local = await serve((_req, res) => page(res));
    const guarded = createGuardedFetch({
      allow: parseFetchAllowList('feeds.intranet'),
      resolve: resolver({ 'feeds.intranet': ['127.0.0.1'] }),
    });
    const response = await guarded(`http://feeds.intranet:${local.port}/page`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('flood barrier');
  });
});

describe('the feed poller with the guarded fetch', () => {
  it('dead-letters entries whose page is on a loopback, private or metadata address, fetching none', async () => {
    const inside = await serve((_req, res) => page(res));
    const links = [`${inside.url}/secret`, 'http://10.0.0.5/admin', 'http://169.254.169.254/latest/meta-data/'];
    const feedServer = await serve((_req, res) => {
      const items = links
        .map(
          (link, i) =>
            `<item><guid isPermaLink="false">e${i}</guid><title>Entry ${i}</title><link>${link}</link>` +
            `<description>Short.</description><pubDate>Mon, 04 Mar 2024 09:00:00 GMT</pubDate></item>`,
        )
        .join('');
      res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' });
      res.end(
        `<?xml version="1.0"?><rss version="2.0"><channel><title>F</title><link>https://f.example/</link>${items}</channel></rss>`,
      );
    });
    const publisher = new MemoryPublisher();
    const poller = createFeedPoller({
      feeds: [{ url: `http://feeds.intranet:${feedServer.port}/feed.xml`, intervalSeconds: 60 }],
      publisher,
      stateStore: new MemoryFeedStateStore(),
      log: () => undefined,
      fetch: createGuardedFetch({
        allow: parseFetchAllowList('feeds.intranet'),
        resolve: resolver({ 'feeds.intranet': ['127.0.0.1'] }),
      }),
    });
    const [report] = await poller.pollOnce();
    await poller.stop();
    expect(report!.outcome).toBe('delivered');
    expect(publisher.published).toEqual([]);
    expect(publisher.reasons()).toEqual(['address_refused', 'address_refused', 'address_refused']);
    const messages = publisher.rejected.map((r) => r.rejection.message).join('\n');
    expect(messages).toContain('127.0.0.1 is a loopback address');
    expect(messages).toContain('10.0.0.5 is a private address');
    expect(messages).toContain('169.254.169.254 is a cloud metadata address');
    expect(inside.paths).toEqual([]);
  });

  it('reports a feed on a refused address as address_refused', async () => {
    const feedServer = await serve((_req, res) => page(res));
    const poller = createFeedPoller({
      feeds: [{ url: `${feedServer.url}/feed.xml`, intervalSeconds: 60 }],
      publisher: new MemoryPublisher(),
      stateStore: new MemoryFeedStateStore(),
      log: () => undefined,
      fetch: createGuardedFetch(),
    });
    const [report] = await poller.pollOnce();
    await poller.stop();
    expect(report).toMatchObject({ outcome: 'failed', error: 'address_refused' });
    expect(report!.message).toBe('127.0.0.1 is a loopback address');
    expect(feedServer.paths).toEqual([]);
  });
});

describe('webhooks with the guarded fetch', () => {
  const alert = FIXTURES.SpikeAlert;
  const retry = { attempts: 3, baseMs: 1, capMs: 5, timeoutMs: 2_000 };
  const endpoint = (url: string): WebhookEndpoint => ({
    url,
    secret: new Secret('s3cret-s3cret-s3cret'),
    states: ['STARTED', 'ENDED'],
    granularities: ['DAY'],
  });

  it('refuses a private endpoint for good, unless the allow-list names it', async () => {
    const receiver = await serve((_req, res) => res.writeHead(200).end());
    const refused = await deliverWebhook(endpoint(`${receiver.url}/hook`), {}, alert, createGuardedFetch(), retry);
    expect(refused).toEqual({ ok: false, attempts: 1, reason: 'address_refused: 127.0.0.1 is a loopback address' });
    const privateOne = await deliverWebhook(
      endpoint('http://192.168.1.20/hook'),
      {},
      alert,
      createGuardedFetch(),
      retry,
    );
    expect(privateOne).toMatchObject({
      ok: false,
      attempts: 1,
      reason: 'address_refused: 192.168.1.20 is a private address',
    });
    expect(receiver.paths).toEqual([]);

    const allowed = createGuardedFetch({ allow: parseFetchAllowList('127.0.0.0/8') });
    expect(await deliverWebhook(endpoint(`${receiver.url}/hook`), {}, alert, allowed, retry)).toEqual({
      ok: true,
      attempts: 1,
    });
    expect(receiver.paths).toEqual(['/hook']);
  });
});

describe('neon ingest <URL> on a refused address', () => {
  const dir = mkdtempSync(join(tmpdir(), 'neon-ingest-refused-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says the address is refused and never fetches it, unless NEON_FETCH_ALLOW names it', async () => {
    const feedServer = await serve((_req, res) => res.writeHead(404).end());
    const env: NodeJS.ProcessEnv = { ...process.env, NEON_INTAKE_TOKEN: 'a-token', NEON_DATA_DIR: dir };
    delete env.NEON_FETCH_ALLOW;
    const run = runNeon(['ingest', `${feedServer.url}/feed.xml`, '--api', 'http://127.0.0.1:9'], env);
    const timer = setTimeout(() => run.kill('SIGKILL'), 45_000);
    const code = await run.exited.finally(() => clearTimeout(timer));
    expect(run.output()).toContain('address_refused: 127.0.0.1 is a loopback address');
    expect(code).toBe(2);
    expect(feedServer.paths).toEqual([]);

    const allowed = runNeon(['ingest', `${feedServer.url}/feed.xml`, '--api', 'http://127.0.0.1:9'], {
      ...env,
      NEON_FETCH_ALLOW: '127.0.0.1',
    });
    const timer2 = setTimeout(() => allowed.kill('SIGKILL'), 45_000);
    expect(await allowed.exited.finally(() => clearTimeout(timer2))).toBe(2);
    expect(allowed.output()).toContain('HTTP 404');
    expect(feedServer.paths).toEqual(['/feed.xml']);
  }, 100_000);
});

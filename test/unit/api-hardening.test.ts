import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../service/api-server.js';
import { isLoopbackAddress, isLoopbackHostHeader } from '../../service/loopback-host.js';
import { hubFeed, SpikeHub } from '../../streams/views/spike-feed.js';
import { MemoryPublisher } from './intake-memory-publisher.js';

/**
 * The API against key guessing (failed authentications are rate-limited per address), floods of
 * `POST /v1/articles` (a limiter per intake token) and DNS rebinding (a keyless API on loopback
 * answers only requests addressed to a loopback name).
 */

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function serve(options: Partial<ApiServerOptions> = {}): Promise<string> {
  api = await startApiServer({ port: 0, spikes: hubFeed(new SpikeHub()), ...options });
  return api.url;
}

/** A GET with a chosen Host header (fetch sets its own). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const article = (n: number) => ({
  url: `https://news.example/story-${n}`,
  title: `Story ${n}`,
  text: 'Flooding closed the coastal road on Tuesday, officials said. '.repeat(4),
  published_at: '2025-01-09T10:00:00Z',
  source: 'news.example',
});

function post(base: string, token: string, body: unknown): Promise<Response> {
  return fetch(`${base}/v1/articles`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('failed authentication is rate-limited per address', () => {
  it('answers 429 with Retry-After once an address has used up its failures, even for a right key', async () => {
    const base = await serve({ apiKeys: ['k-right-key'], authFailuresPerMinute: 12 }); // bursts of 2
    const wrong = { headers: { authorization: 'Bearer k-guess' } };
    expect((await fetch(`${base}/v1/spikes`, wrong)).status).toBe(401);
    expect((await fetch(`${base}/v1/spikes`)).status).toBe(401);
    const limited = await fetch(`${base}/v1/spikes`, wrong);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await limited.json()) as { error: string }).error).toBe('rate_limited');
    // A guess that happens to be right is not told so while the address is locked out.
    const right = await fetch(`${base}/v1/spikes`, { headers: { authorization: 'Bearer k-right-key' } });
    expect(right.status).toBe(429);
  });

  it('does not count successful requests as failures', async () => {
    const base = await serve({ apiKeys: ['k-right-key'], authFailuresPerMinute: 6, ratePerMinute: 6000 });
    for (let i = 0; i < 5; i++) {
      const ok = await fetch(`${base}/v1/spikes`, { headers: { authorization: 'Bearer k-right-key' } });
      expect(ok.status).toBe(200);
    }
    expect((await fetch(`${base}/v1/spikes`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
  });

  it('limits failed intake tokens on POST /v1/articles the same way', async () => {
    const publisher = new MemoryPublisher();
    const base = await serve({ intake: { publisher, tokens: ['t-intake'] }, authFailuresPerMinute: 6 }); // burst 1
    expect((await post(base, 't-guess', article(1))).status).toBe(401);
    const limited = await post(base, 't-guess', article(1));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).not.toBeNull();
    expect((await post(base, 't-intake', article(1))).status).toBe(429);
    expect(publisher.published).toEqual([]);
  });
});

describe('POST /v1/articles has a rate limit per intake token', () => {
  it('answers 429 with Retry-After past the limit, without publishing', async () => {
    const publisher = new MemoryPublisher();
    const base = await serve({ intake: { publisher, tokens: ['t-intake'] }, intakeRatePerMinute: 12 }); // bursts of 2
    expect((await post(base, 't-intake', article(1))).status).toBe(202);
    expect((await post(base, 't-intake', article(2))).status).toBe(202);
    const limited = await post(base, 't-intake', article(3));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(publisher.published.map((a) => a.url)).toEqual([
      'https://news.example/story-1',
      'https://news.example/story-2',
    ]);
  });
});

describe('a keyless API on loopback refuses requests addressed to other names (DNS rebinding)', () => {
  it('answers 421 to a foreign Host, and as before to loopback names with or without the port', async () => {
    const base = await serve();
    const port = new URL(base).port;
    const foreign = await getWithHost(`${base}/v1/spikes`, `rebind.attacker.example:${port}`);
    expect(foreign.status).toBe(421);
    expect(foreign.body).toMatch(/loopback|127\.0\.0\.1/);
    expect((await getWithHost(`${base}/healthz`, 'rebind.attacker.example')).status).toBe(421);
    for (const host of [`127.0.0.1:${port}`, '127.0.0.1', `localhost:${port}`, 'LocalHost', `[::1]:${port}`, '[::1]']) {
      expect((await getWithHost(`${base}/v1/spikes`, host)).status, host).toBe(200);
    }
  });

  it('leaves the Host alone when API keys are configured', async () => {
    const base = await serve({ apiKeys: ['k-right-key'] });
    const response = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${base}/v1/spikes`,
        { headers: { host: 'api.example.org', authorization: 'Bearer k-right-key' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(response).toBe(200);
  });

  it('tells loopback names and addresses from others', () => {
    for (const host of [
      '127.0.0.1',
      '127.0.0.1:8080',
      '127.1.2.3:80',
      'localhost',
      'LOCALHOST:1',
      'localhost.',
      '[::1]',
      '[::1]:8080',
    ]) {
      expect(isLoopbackHostHeader(host), host).toBe(true);
    }
    for (const host of [
      undefined,
      '',
      'evil.example',
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      'localhost:80:80',
      'localhost:http',
      '[::1]evil',
      '[::2]:80',
      '128.0.0.1',
      '0.0.0.0',
      '::1',
    ]) {
      expect(isLoopbackHostHeader(host), String(host)).toBe(false);
    }
    expect(['127.0.0.1', '::1', 'localhost', '127.0.0.2'].every(isLoopbackAddress)).toBe(true);
    expect(['0.0.0.0', '::', '192.168.1.4', 'example.org'].some(isLoopbackAddress)).toBe(false);
  });
});

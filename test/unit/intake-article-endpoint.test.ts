import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ARTICLES_ROUTE,
  MAX_ARTICLES_PER_REQUEST,
  registerArticleEndpoint,
  type ArticleEndpointResponse,
} from '../../service/article-endpoint.js';
import { MemoryPublisher } from './intake-memory-publisher.js';
import { ServiceArticlePublisher } from '../../bin/commands/service-article-publisher.js';
import { SUMMARY_MIN_TEXT_CHARS } from '../../processors/intake/normalize-article.js';
import { EARLIEST_REPLAY_PUBLISH_TIME } from '../../processors/intake/publish-time.js';
import type { Article } from '../../schemas/records.generated.js';

const TOKEN = 'secret-token-one';
const NOW = Date.UTC(2024, 2, 2, 12);
const BODY =
  'The regional parliament passed the budget late on Friday night, ending weeks of talks between ' +
  'the coalition partners over hospital funding and rail projects.';

function article(slug: string, extra: Record<string, unknown> = {}) {
  return {
    url: `https://news.example.org/2024/03/01/${slug}`,
    title: `Budget passes ${slug}`,
    text: BODY,
    published_at: '2024-03-01T22:15:00Z',
    source: 'Example News',
    ...extra,
  };
}

describe('POST /v1/articles', () => {
  let app: FastifyInstance;
  let publisher: MemoryPublisher;

  beforeEach(() => {
    app = Fastify();
    publisher = new MemoryPublisher();
    registerArticleEndpoint(app, {
      publisher,
      tokens: ['another-token', TOKEN],
      now: () => NOW,
      maxBodyBytes: 64 * 1024,
    });
  });
  afterEach(async () => {
    await app.close();
  });

  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method: 'POST',
      url: ARTICLES_ROUTE,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
    });

  it('accepts one article: 202, published with the normalised id, fetched_at from the clock', async () => {
    const res = await post(article('one'));
    expect(res.statusCode).toBe(202);
    const body = res.json<ArticleEndpointResponse>();
    expect(publisher.published).toHaveLength(1);
    const [published] = publisher.published;
    expect(body).toEqual({ accepted: [{ id: published!.id, url: published!.url }], rejected: [] });
    expect(published).toMatchObject({
      title: 'Budget passes one',
      text: BODY,
      fetched_at: NOW,
      published_at: Date.parse('2024-03-01T22:15:00Z'),
    });
    expect(published!.id).toMatch(/^a-[0-9a-f]{16}$/);
  });

  it('uses a supplied id', async () => {
    const res = await post(article('with-id', { id: 'wire-123' }));
    expect(res.json<ArticleEndpointResponse>().accepted[0]!.id).toBe('wire-123');
  });

  it('accepts a batch in order and answers 207 with per-article reasons when some are rejected', async () => {
    const batch = [
      article('a'),
      article('b', { published_at: undefined }), // dated by its URL (/2024/03/01/)
      article('c'),
      { url: 'https://news.example.org/d', title: 7 },
      article('e', { text: 'Too short.' }),
    ];
    const res = await post({ articles: batch });
    expect(res.statusCode).toBe(207);
    const body = res.json<ArticleEndpointResponse>();
    expect(body.accepted.map((a) => a.url)).toEqual(
      ['a', 'b', 'c'].map((s) => `https://news.example.org/2024/03/01/${s}`),
    );
    expect(body.rejected.map((r) => [r.index, r.reason])).toEqual([
      [3, 'invalid_input'],
      [4, 'no_text'],
    ]);
    expect(body.rejected.every((r) => r.message.length > 0)).toBe(true);
    expect(publisher.rejected.map((r) => [r.rejection.reason, r.origin])).toEqual([
      ['invalid_input', 'http'],
      ['no_text', 'http'],
    ]);
    expect(JSON.parse(publisher.rejected[1]!.original.toString())).toEqual(article('e', { text: 'Too short.' }));
  });

  it('dead-letters a single rejected article with the exact bytes posted', async () => {
    const raw = `  ${JSON.stringify({ url: 'https://news.example.org/undated', title: 'Undated', text: BODY })}\n`;
    const res = await post(raw);
    expect(res.statusCode).toBe(207);
    expect(res.json<ArticleEndpointResponse>()).toMatchObject({
      accepted: [],
      rejected: [{ index: 0, reason: 'missing_date' }],
    });
    expect(publisher.rejected[0]!.original.toString()).toBe(raw);
  });

  it.each([
    ['no header', {}],
    ['a wrong token', { authorization: 'Bearer secret-token-two' }],
    ['a token prefix', { authorization: 'Bearer secret-token' }],
    ['another scheme', { authorization: `Basic ${TOKEN}` }],
  ])('answers 401 for %s, before reading the body', async (_name, headers) => {
    const res = await app.inject({
      method: 'POST',
      url: ARTICLES_ROUTE,
      headers: { 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(article('x')),
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.json()).toEqual({ error: 'unauthorized', message: expect.any(String) as unknown });
    expect(publisher.published).toEqual([]);
  });

  it('accepts every configured token', async () => {
    expect((await post(article('t2'), { authorization: 'Bearer another-token' })).statusCode).toBe(202);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const res = await post('{"url": ');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_json' });
    expect(publisher.rejected).toEqual([]);
  });

  it('answers 400 for a body that is not UTF-8', async () => {
    const res = await post(
      Buffer.concat([Buffer.from('{"url":"https://e.org/x","title":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: string; message: string }>()).toMatchObject({
      error: 'invalid_json',
      message: expect.stringContaining('UTF-8') as unknown,
    });
  });

  it.each([
    ['an array', [article('x')]],
    ['an article without url', { title: 'x', text: BODY }],
    ['an empty batch', { articles: [] }],
    ['a batch that is not a list', { articles: 'x' }],
  ])('answers 400 with a clear message for %s', async (_name, payload) => {
    const res = await post(payload);
    expect(res.statusCode).toBe(400);
    const body = res.json<{ error: string; message: string }>();
    expect(body.error).toBe('invalid_input');
    expect(body.message.length).toBeGreaterThan(5);
    expect(publisher.published).toEqual([]);
  });

  it(`answers 400 for more than ${MAX_ARTICLES_PER_REQUEST} articles`, async () => {
    const tiny = { url: 'https://e.org/x' };
    const res = await post({ articles: Array.from({ length: MAX_ARTICLES_PER_REQUEST + 1 }, () => tiny) });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ message: string }>().message).toContain(String(MAX_ARTICLES_PER_REQUEST));
  });

  it('answers 413 for a body over maxBodyBytes', async () => {
    const res = await post(article('big', { text: 'x'.repeat(70 * 1024) }));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: 'oversized' });
  });

  it('answers 415 for a body that is not JSON by content type', async () => {
    const res = await post('url=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.statusCode).toBe(415);
  });

  it('answers 503 without detail when the publisher fails, so the client retries', async () => {
    publisher.failNext();
    const res = await post({ articles: [article('p1'), article('p2')] });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'unavailable', message: expect.any(String) as unknown });
    expect(res.body).not.toContain('publisher unavailable');
  });

  it('keeps its parser and error format to its own route', async () => {
    app.post('/other', async (request) => ({ echo: request.body }));
    const res = await app.inject({ method: 'POST', url: '/other', payload: { a: 1 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ echo: { a: 1 } });
  });

  it("reads a replay's items as it declares them, within the guards", async () => {
    const brief = article('brief', { text: 'Kenya formally recognizes Kosovo as a sovereign state.' });
    const archived = article('archived', { published_at: '1956-10-23T12:00:00Z' });
    const refused = await post({ articles: [brief, archived] });
    expect(refused.json<ArticleEndpointResponse>().rejected.map((r) => r.reason)).toEqual([
      'no_text',
      'impossible_date',
    ]);
    const declared = await app.inject({
      method: 'POST',
      url: `${ARTICLES_ROUTE}?min_text_chars=30&earliest=1900-01-01`,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ articles: [brief, archived] }),
    });
    expect(declared.statusCode).toBe(202);
    expect(publisher.published.map((a) => new Date(a.published_at).getUTCFullYear())).toEqual([2024, 1956]);
    for (const query of ['min_text_chars=5', 'min_text_chars=abc', 'earliest=1969-13-01', 'earliest=1800-01-01']) {
      const res = await app.inject({
        method: 'POST',
        url: `${ARTICLES_ROUTE}?${query}`,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        payload: JSON.stringify(brief),
      });
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_input' });
    }
  });

  it('refuses to register without a token', () => {
    expect(() => registerArticleEndpoint(Fastify(), { publisher, tokens: [] })).toThrow(/token/);
    expect(() => registerArticleEndpoint(Fastify(), { publisher, tokens: [''] })).toThrow(/token/);
  });
});

describe('neon replay to a running service', () => {
  it('sends what the reader declared of its items, so the service reads them as the replay does', async () => {
    const app = Fastify();
    const publisher = new MemoryPublisher();
    registerArticleEndpoint(app, { publisher, tokens: [TOKEN], now: () => NOW });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const target = { url, intakeToken: TOKEN, from: 'test' };
      const brief: Article = {
        id: 'wce-brief',
        url: 'https://news.example.org/brief',
        canonical_url: 'https://news.example.org/brief',
        version: 1,
        title: 'Kosovo',
        text: 'Kenya formally recognizes Kosovo as a sovereign state.',
        published_at: Date.UTC(1956, 9, 23),
        fetched_at: NOW,
        source: 'Example News',
        language: 'en',
      };
      const plain = new ServiceArticlePublisher(target);
      await plain.publish(brief);
      await plain.flush();
      expect(plain.counters).toMatchObject({ published: 0, refusedByService: 1 });

      const declared = new ServiceArticlePublisher(target, undefined, {
        minTextChars: SUMMARY_MIN_TEXT_CHARS,
        earliestPublishTime: EARLIEST_REPLAY_PUBLISH_TIME,
      });
      await declared.publish(brief);
      await declared.flush();
      expect(declared.counters).toMatchObject({ published: 1, refusedByService: 0 });
      expect(publisher.published.map((a) => a.text)).toEqual([brief.text]);
    } finally {
      await app.close();
    }
  });
});

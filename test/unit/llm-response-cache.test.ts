import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../processors/extract/chat-model.js';
import { cacheKey, ResponseCache, type CachedAnswer } from '../../streams/llm/response-cache.js';

const directories: string[] = [];
afterEach(async () => {
  await Promise.all(directories.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function freshDirectory(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'neon-llm-cache-'));
  directories.push(dir);
  return dir;
}

const request: ChatRequest = {
  messages: [
    { role: 'system', content: 'Extract interactions.' },
    { role: 'user', content: 'Doja Cat released an album.' },
  ],
  maxTokens: 200,
  json: true,
  purpose: 'm1',
};

function answer(text: string): CachedAnswer {
  return { text, model: 'm', promptTokens: 10, completionTokens: 3 };
}

describe('cacheKey', () => {
  it('is a SHA-256 of what decides the answer, and only that', () => {
    const key = cacheKey('m', request);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(cacheKey('m', { ...request, purpose: 'm2' })).toBe(key);
    expect(cacheKey('m', { ...request, temperature: 0 })).toBe(key);
    const variants = [
      cacheKey('other-model', request),
      cacheKey('m', { ...request, temperature: 0.7 }),
      cacheKey('m', { ...request, maxTokens: 201 }),
      cacheKey('m', { ...request, json: false }),
      cacheKey('m', { ...request, messages: [...request.messages, { role: 'user', content: '' }] }),
      cacheKey('m', { ...request, messages: [{ ...request.messages[0]!, role: 'user' }, request.messages[1]!] }),
    ];
    expect(new Set([key, ...variants]).size).toBe(variants.length + 1);
  });
});

describe('ResponseCache', () => {
  it('keeps the most recently used entries in memory within the entry bound', async () => {
    const cache = new ResponseCache({ maxEntries: 2, maxChars: 1_000 });
    await cache.put('a', answer('A'));
    await cache.put('b', answer('B'));
    await cache.get('a');
    await cache.put('c', answer('C'));
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toEqual({ answer: answer('A'), layer: 'memory' });
    expect(await cache.get('c')).toEqual({ answer: answer('C'), layer: 'memory' });
    expect(cache.memoryEntries).toBe(2);
  });

  it('keeps memory within the character bound, and does not hold an answer larger than it', async () => {
    const cache = new ResponseCache({ maxEntries: 100, maxChars: 10 });
    await cache.put('a', answer('aaaaaa'));
    await cache.put('b', answer('bbbbbb'));
    expect(await cache.get('a')).toBeUndefined();
    await cache.put('huge', answer('x'.repeat(11)));
    expect(await cache.get('huge')).toBeUndefined();
    expect(await cache.get('b')).toEqual({ answer: answer('bbbbbb'), layer: 'memory' });
  });

  it('writes one whole file per key that a new instance reads back, and leaves no temporary file', async () => {
    const dir = await freshDirectory();
    const key = cacheKey('m', request);
    await new ResponseCache({ dir, maxEntries: 10, maxChars: 1_000 }).put(key, answer('{"interactions":[]}'));

    const files = await readdir(join(dir, key.slice(0, 2)));
    expect(files).toEqual([`${key}.json`]);
    const stored = JSON.parse(await readFile(join(dir, key.slice(0, 2), `${key}.json`), 'utf8')) as unknown;
    expect(stored).toMatchObject({ format: 1, key, text: '{"interactions":[]}', promptTokens: 10 });

    const reopened = new ResponseCache({ dir, maxEntries: 10, maxChars: 1_000 });
    expect(await reopened.get(key)).toEqual({ answer: answer('{"interactions":[]}'), layer: 'disk' });
    // Read once from disk, then remembered.
    expect((await reopened.get(key))?.layer).toBe('memory');
  });

  it('treats a damaged or foreign file as a miss, and overwrites it', async () => {
    const dir = await freshDirectory();
    const cache = new ResponseCache({ dir, maxEntries: 0, maxChars: 0 });
    const key = 'ab'.repeat(32);
    await cache.put(key, answer('first'));
    const path = join(dir, 'ab', `${key}.json`);
    await writeFile(path, '{"format": 1, "key": "');
    expect(await cache.get(key)).toBeUndefined();
    await writeFile(path, JSON.stringify({ format: 1, key: 'cd'.repeat(32), ...answer('x'), createdAt: '' }));
    expect(await cache.get(key)).toBeUndefined();
    await cache.put(key, answer('second'));
    expect((await cache.get(key))?.answer.text).toBe('second');
  });

  it('survives a directory it cannot write: a warning with the error code only, and the answer kept in memory', async () => {
    const dir = await freshDirectory();
    const blocked = join(dir, 'a-file');
    await writeFile(blocked, '');
    const warnings: unknown[] = [];
    const cache = new ResponseCache({
      dir: blocked,
      maxEntries: 10,
      maxChars: 1_000,
      log: (level, message, fields) => warnings.push({ level, message, fields }),
    });
    await cache.put('ef'.repeat(32), answer('kept'));
    expect(warnings).toEqual([
      { level: 'warn', message: 'could not write an LLM response to the cache', fields: { code: 'ENOTDIR' } },
    ]);
    expect((await cache.get('ef'.repeat(32)))?.layer).toBe('memory');
  });
});

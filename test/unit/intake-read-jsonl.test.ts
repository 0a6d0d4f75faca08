import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArticleLine } from '../../processors/intake/article-line.js';
import { readJsonLines, readJsonlArticles, type JsonlArticleLine } from '../../streams/archives/read-jsonl-articles.js';

const good = {
  url: 'https://example.org/a',
  title: 'Harbour reopens',
  text: 'The harbour reopened on Monday after the storm.',
  published_at: '2024-03-01T10:00:00Z',
  source: 'example.org',
};

async function collect(source: string | Readable, maxLineBytes?: number): Promise<JsonlArticleLine[]> {
  const out: JsonlArticleLine[] = [];
  const options = maxLineBytes === undefined ? {} : { maxLineBytes };
  for await (const item of readJsonlArticles(source, options)) out.push(item);
  return out;
}

describe('readJsonlArticles', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'neon-jsonl-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const mixed = [
    JSON.stringify(good),
    '',
    '{"url": "https://example.org/b", "title": 5}',
    'not json at all',
    '   ',
    JSON.stringify({ ...good, url: 'https://example.org/c', id: 'c-1', html: '<p>x</p>', text: null }),
  ].join('\n');

  it('yields inputs and per-line rejections with 1-based line numbers and the exact bytes', async () => {
    const path = join(dir, 'mixed.jsonl');
    await writeFile(path, `${mixed}\n`);
    const items = await collect(path);
    expect(items.map((i) => i.line)).toEqual([1, 3, 4, 6]);
    expect(items[0]!.input).toEqual(good);
    expect(items[0]!.raw.toString()).toBe(JSON.stringify(good));
    expect(items[1]!.error?.reason).toBe('invalid_input');
    expect(items[1]!.error?.message).toContain('title');
    expect(items[2]!.error?.reason).toBe('invalid_json');
    expect(items[2]!.raw.toString()).toBe('not json at all');
    expect(items[3]!.input).toEqual({
      ...good,
      url: 'https://example.org/c',
      id: 'c-1',
      html: '<p>x</p>',
      text: undefined,
    });
    expect(items[3]!.input).not.toHaveProperty('text');
  });

  it('reads a gzip file the same as the plain one', async () => {
    const plain = join(dir, 'same.jsonl');
    const gz = join(dir, 'same.jsonl.gz');
    await writeFile(plain, mixed);
    await writeFile(gz, gzipSync(Buffer.from(mixed)));
    const a = await collect(plain);
    const b = await collect(gz);
    expect(b.map((i) => [i.line, i.raw.toString(), i.input, i.error?.reason])).toEqual(
      a.map((i) => [i.line, i.raw.toString(), i.input, i.error?.reason]),
    );
    expect(b).toHaveLength(4);
  });

  it('detects gzip on a stream that delivers one byte at a time (stdin through a pipe)', async () => {
    const bytes = gzipSync(Buffer.from(`${JSON.stringify(good)}\r\n`));
    const stream = new PassThrough();
    const feeding = (async () => {
      for (const b of bytes) {
        stream.write(Buffer.from([b]));
        await new Promise((r) => setImmediate(r));
      }
      stream.end();
    })();
    const items = await collect(stream);
    await feeding;
    expect(items).toHaveLength(1);
    expect(items[0]!.input).toEqual(good);
    expect(items[0]!.raw.toString()).toBe(JSON.stringify(good));
  });

  it('reports invalid UTF-8 per line and goes on', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"url":"https://example.org/x","title":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}\n'),
      Buffer.from(`${JSON.stringify(good)}\n`),
    ]);
    const items = await collect(Readable.from([bytes]));
    expect(items.map((i) => i.error?.reason ?? 'ok')).toEqual(['invalid_utf8', 'ok']);
    expect(items[0]!.raw).toEqual(bytes.subarray(0, bytes.indexOf(0x0a)));
  });

  it('drops a byte-order mark on the first line only', async () => {
    const items = await collect(Readable.from([Buffer.from(`\uFEFF${JSON.stringify(good)}\n`)]));
    expect(items[0]!.input).toEqual(good);
  });

  it('bounds memory: a line over maxLineBytes is one oversized rejection and the next line still comes', async () => {
    const long = JSON.stringify({ ...good, text: 'x'.repeat(5000) });
    const items = await collect(Readable.from([Buffer.from(`${long}\n${JSON.stringify(good)}`)]), 1000);
    expect(items.map((i) => [i.line, i.error?.reason ?? 'ok'])).toEqual([
      [1, 'oversized'],
      [2, 'ok'],
    ]);
    expect(items[0]!.raw.length).toBe(1000);
  });

  it('throws for a missing file (not a per-line problem)', async () => {
    await expect(collect(join(dir, 'absent.jsonl'))).rejects.toThrow(/ENOENT/);
  });

  it('throws for a truncated gzip stream', async () => {
    const gz = gzipSync(Buffer.from(`${JSON.stringify(good)}\n`.repeat(50)));
    await expect(collect(Readable.from([gz.subarray(0, gz.length - 10)]))).rejects.toThrow();
  });

  it('splits lines identically however the bytes are chunked', async () => {
    const lines = ['{"a":1}', '{"b":"é€"}', '', '[1,2,3]', '"s"'];
    const bytes = Buffer.from(lines.join('\n'));
    const expected = [
      { line: 1, value: { a: 1 } },
      { line: 2, value: { b: 'é€' } },
      { line: 4, value: [1, 2, 3] },
      { line: 5, value: 's' },
    ];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length }), { maxLength: 6 }), async (cuts) => {
        const points = [...new Set(cuts)].sort((x, y) => x - y);
        const chunks: Buffer[] = [];
        let from = 0;
        for (const p of [...points, bytes.length]) {
          if (p > from) chunks.push(bytes.subarray(from, p));
          from = p;
        }
        const got: unknown[] = [];
        for await (const item of readJsonLines(Readable.from(chunks))) got.push({ line: item.line, value: item.value });
        expect(got).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });
});

describe('parseArticleLine', () => {
  it('accepts ms timestamps and treats null as absent', () => {
    expect(parseArticleLine({ url: 'https://e.org/', published_at: 1700000000000, source: null })).toEqual({
      url: 'https://e.org/',
      published_at: 1700000000000,
    });
  });

  it.each([
    [{ title: 'no url' }, 'url'],
    [{ url: '' }, 'url'],
    [{ url: 'https://e.org/', published_at: true }, 'published_at'],
    [{ url: 'https://e.org/', text: ['a'] }, 'text'],
    ['a string', 'object'],
  ])('refuses %j as invalid_input naming %s', (value, word) => {
    try {
      parseArticleLine(value);
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ name: 'IntakeRejection', reason: 'invalid_input' });
      expect((err as Error).message).toContain(word);
    }
  });
});

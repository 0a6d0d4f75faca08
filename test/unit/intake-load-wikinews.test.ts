import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { devDataPath } from '../../devkit/dev-data.js';
import { CsvSyntaxError, loadWikinews, parseCsv, WIKINEWS_SOURCE } from '../../streams/archives/load-wikinews.js';
import type { ReplayItem } from '../../processors/intake/replay-articles.js';

describe('parseCsv', () => {
  it('handles quoted commas, doubled quotes and line breaks inside quotes', () => {
    const text = 'a,b,c\n"1,5","say ""hi""","line one\nline two"\r\nx,,z\n';
    expect(parseCsv(text)).toEqual([
      { line: 1, fields: ['a', 'b', 'c'] },
      { line: 2, fields: ['1,5', 'say "hi"', 'line one\nline two'] },
      { line: 4, fields: ['x', '', 'z'] },
    ]);
  });

  it('keeps a final record without a line break, and empty trailing fields', () => {
    expect(parseCsv('a,b\n1,')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['1', ''] },
    ]);
    expect(parseCsv('')).toEqual([]);
    expect(parseCsv('\uFEFFa\n')).toEqual([{ line: 1, fields: ['a'] }]);
  });

  it('keeps a stray quote inside an unquoted field as text', () => {
    expect(parseCsv('5" tall,x\n')).toEqual([{ line: 1, fields: ['5" tall', 'x'] }]);
  });

  it('throws for an unterminated quoted field, naming the line it started on', () => {
    expect(() => parseCsv('a,b\n1,"open\nmore')).toThrow(CsvSyntaxError);
    expect(() => parseCsv('a,b\n1,"open\nmore')).toThrow(/line 2/);
  });

  it('round-trips any table written with RFC 4180 quoting', () => {
    const cell = fc.string({ unit: fc.constantFrom('a', 'é', ',', '"', '\n', '\r\n', ' ', 'z'), maxLength: 8 });
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 4 })
          .chain((n) => fc.array(fc.array(cell, { minLength: n, maxLength: n }), { minLength: 1, maxLength: 6 })),
        (rows) => {
          // The first field is always quoted, so no record is an empty line (which would mean no record).
          const quote = (v: string): string => `"${v.replace(/"/g, '""')}"`;
          const text = rows
            .map((r) => r.map((v, i) => (i % 2 === 0 ? quote(v) : /[",\r\n]/.test(v) ? quote(v) : v)).join(','))
            .join('\r\n');
          expect(parseCsv(text).map((r) => r.fields)).toEqual(rows);
        },
      ),
    );
  });
});

async function collect(items: AsyncIterable<ReplayItem>): Promise<ReplayItem[]> {
  const out: ReplayItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('loadWikinews', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'neon-wikinews-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const csv = [
    'url,date,title,text',
    '"https://en.wikinews.org//wiki/Bridge_opens",2019-05-02,"Bridge opens, traffic flows","Thursday, May 2, 2019',
    '',
    'A new bridge opened over the river."',
    'https://en.wikinews.org//wiki/Test,2021-03-15,TEST PAGE:Self-publish yesterday,junk',
    'https://en.wikinews.org//wiki/Short_row,2019-05-03,Only three fields',
    'https://en.wikinews.org//wiki/Undated,,Undated story,Some text.',
    '',
  ].join('\n');

  it('yields articles with their fields, drops the test page and reports a malformed row', async () => {
    await writeFile(join(dir, 'wikinews_2019.csv'), csv);
    await writeFile(join(dir, 'notes.txt'), 'not csv');
    const load = loadWikinews(dir);
    if (!load.ok) throw new Error(load.error);
    const items = await collect(load.items);
    expect(items.map((i) => i.origin)).toEqual(['wikinews_2019.csv:2', 'wikinews_2019.csv:6', 'wikinews_2019.csv:7']);
    expect(items[0]!.input).toEqual({
      url: 'https://en.wikinews.org//wiki/Bridge_opens',
      title: 'Bridge opens, traffic flows',
      text: 'Thursday, May 2, 2019\n\nA new bridge opened over the river.',
      published_at: '2019-05-02',
      source: WIKINEWS_SOURCE,
    });
    expect(JSON.parse(items[0]!.raw.toString())).toMatchObject({
      date: '2019-05-02',
      title: 'Bridge opens, traffic flows',
    });
    expect(items[1]!.error?.reason).toBe('invalid_input');
    expect(items[1]!.error?.message).toContain('3 fields');
    expect(items[2]!.input).not.toHaveProperty('published_at');
    expect(load.stats).toEqual({ files: 1, rows: 4, dropped: 1, yielded: 3 });
  });

  it('finds columns by header name, in any order', async () => {
    await writeFile(join(dir, 'a.csv'), 'title,text,url,date\nT,Body,https://en.wikinews.org/wiki/T,2020-01-01\n');
    const load = loadWikinews(dir);
    if (!load.ok) throw new Error(load.error);
    const [item] = await collect(load.items);
    expect(item!.input).toMatchObject({
      url: 'https://en.wikinews.org/wiki/T',
      title: 'T',
      text: 'Body',
      published_at: '2020-01-01',
    });
  });

  it('reads files in name order', async () => {
    await writeFile(join(dir, 'b.csv'), 'url,date,title,text\nhttps://e.org/b,2020-01-02,B,b\n');
    await writeFile(join(dir, 'a.csv'), 'url,date,title,text\nhttps://e.org/a,2020-01-01,A,a\n');
    const load = loadWikinews(dir);
    if (!load.ok) throw new Error(load.error);
    expect((await collect(load.items)).map((i) => i.input?.title)).toEqual(['A', 'B']);
  });

  it('turns a bad header, broken quoting or invalid UTF-8 into one error item per file', async () => {
    await writeFile(join(dir, '1.csv'), 'link,when,headline,body\nx,y,z,w\n');
    await writeFile(join(dir, '2.csv'), 'url,date,title,text\n"open');
    await writeFile(join(dir, '3.csv'), Buffer.from([0x75, 0x72, 0x6c, 0xff, 0x0a]));
    const load = loadWikinews(dir);
    if (!load.ok) throw new Error(load.error);
    const items = await collect(load.items);
    expect(items.map((i) => [i.origin, i.error?.reason])).toEqual([
      ['1.csv:1', 'invalid_input'],
      ['2.csv', 'invalid_input'],
      ['3.csv', 'invalid_utf8'],
    ]);
  });

  it('says what is missing instead of throwing when the folder or its files are absent', async () => {
    const absent = loadWikinews(join(dir, 'nope'));
    expect(absent).toEqual({ ok: false, error: expect.stringContaining('does not exist') as unknown });
    await mkdir(join(dir, 'empty'));
    const empty = loadWikinews(join(dir, 'empty'));
    expect(empty.ok).toBe(false);
    expect(empty.ok ? '' : empty.error).toContain('no *.csv');
  });

  const real = devDataPath('samples/wikinews-2019-2020');
  // The sample holds two upstream test pages ("Self-publish yesterday" and "Self-publish today").
  it.skipIf(real === undefined)('reads the real sample: 295 rows, 2 test pages dropped, 293 articles', async () => {
    const load = loadWikinews(real!);
    if (!load.ok) throw new Error(load.error);
    const items = await collect(load.items);
    expect(load.stats).toEqual({ files: 2, rows: 295, dropped: 2, yielded: 293 });
    expect(items.every((i) => i.input !== undefined && typeof i.input.published_at === 'string')).toBe(true);
    expect(new Set(items.map((i) => i.input?.url)).size).toBe(293);
    expect(items.some((i) => i.input?.title?.startsWith('TEST PAGE') === true)).toBe(false);
  });
});

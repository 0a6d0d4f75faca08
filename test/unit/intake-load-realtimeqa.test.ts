import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { devDataPath } from '../../devkit/dev-data.js';
import { loadRealtimeQaDocs } from '../../streams/archives/load-realtimeqa.js';
import type { ReplayItem } from '../../processors/intake/replay-articles.js';

function doc(url: string, title: string, publish_date?: string) {
  return {
    url,
    title,
    text: `${title}. The council met on Tuesday.`,
    authors: ['A. Writer'],
    ...(publish_date ? { publish_date } : {}),
  };
}

function line(questionId: string, docs: unknown[]): string {
  return JSON.stringify({ question_id: questionId, search_time: '2022/06/13/03:36', search_result: docs });
}

async function collect(items: AsyncIterable<ReplayItem>): Promise<ReplayItem[]> {
  const out: ReplayItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('loadRealtimeQaDocs', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'neon-rtqa-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function writeDocs(year: string, name: string, lines: string[]): Promise<void> {
    await mkdir(join(dir, 'docs', year), { recursive: true });
    await writeFile(join(dir, 'docs', year, name), gzipSync(Buffer.from(`${lines.join('\n')}\n`)));
  }

  it('dedupes by canonical URL (first seen wins), keeps dates as given and never invents one', async () => {
    await writeDocs('2022', '20220617_gcs.jsonl.gz', [
      line('20220617_0', [
        doc('https://www.usatoday.com/story/news/2022/06/16/flood/1/', 'Flood first', '2022/06/16'),
        doc('https://edition.cnn.com/2022/06/15/world/vote/index.html', 'Vote', '2022/06/15'),
      ]),
      line('20220617_1', [
        // The same story under http, without www, with a campaign parameter: a duplicate.
        doc('http://usatoday.com/story/news/2022/06/16/flood/1?utm_source=x', 'Flood again', '2022/06/16'),
        doc('https://www.theweek.co.uk/news/undated', 'Undated'),
      ]),
    ]);
    await writeDocs('2022', '20220610_gcs.jsonl.gz', [
      line('20220610_0', [doc('https://www.cnn.com/a', 'Earlier file', '2022/06/09')]),
    ]);
    await writeDocs('2023', '20230106_gcs.jsonl.gz', [
      line('20230106_0', [
        doc('https://www.usatoday.com/story/news/2022/06/16/flood/1/', 'Flood 2023 copy', '2022/06/16'),
      ]),
    ]);
    await writeFile(join(dir, 'docs', '2022', 'README.txt'), 'ignored');

    const load = loadRealtimeQaDocs(dir);
    if (!load.ok) throw new Error(load.error);
    const items = await collect(load.items);
    expect(items.map((i) => i.input?.title)).toEqual(['Earlier file', 'Flood first', 'Vote', 'Undated']);
    expect(items[1]!.input).toEqual({
      url: 'https://www.usatoday.com/story/news/2022/06/16/flood/1/',
      title: 'Flood first',
      text: 'Flood first. The council met on Tuesday.',
      published_at: '2022/06/16',
      source: 'usatoday.com',
    });
    expect(items[2]!.input?.source).toBe('edition.cnn.com');
    expect(items[3]!.input).not.toHaveProperty('published_at');
    expect(items[1]!.origin).toBe(join('docs', '2022', '20220617_gcs.jsonl.gz:1#0'));
    expect(JSON.parse(items[1]!.raw.toString())).toMatchObject({ authors: ['A. Writer'], publish_date: '2022/06/16' });
    expect(load.stats).toEqual({
      files: 3,
      lines: 4,
      badLines: 0,
      documents: 6,
      duplicates: 2,
      yielded: 4,
      undated: 1,
    });
  });

  it('reports bad lines and malformed documents as error items and goes on', async () => {
    await writeDocs('2023', 'x_gcs.jsonl.gz', [
      '{"question_id": "q", "search_result": ',
      JSON.stringify({ question_id: 'q2' }),
      line('q3', [{ title: 'no url' }, doc('https://e.org/ok', 'Fine', '2023/01/02')]),
    ]);
    const load = loadRealtimeQaDocs(dir);
    if (!load.ok) throw new Error(load.error);
    const items = await collect(load.items);
    expect(items.map((i) => i.error?.reason ?? i.input?.title)).toEqual([
      'invalid_json',
      'invalid_input',
      'invalid_input',
      'Fine',
    ]);
    expect(items[0]!.raw.toString()).toBe('{"question_id": "q", "search_result": ');
    expect(load.stats).toMatchObject({ lines: 3, badLines: 2, documents: 2, yielded: 2 });
  });

  it('keeps a document whose URL cannot be canonicalised, for normalisation to refuse', async () => {
    await writeDocs('2022', 'a_gcs.jsonl.gz', [
      line('q', [doc('not a url', 'Broken', '2022/01/01'), doc('not a url', 'Broken twice', '2022/01/01')]),
    ]);
    const load = loadRealtimeQaDocs(dir);
    if (!load.ok) throw new Error(load.error);
    const items = await collect(load.items);
    expect(items.map((i) => i.input?.title)).toEqual(['Broken']);
    expect(items[0]!.input).not.toHaveProperty('source');
  });

  it('says what is missing when the folder has no documents', async () => {
    const absent = loadRealtimeQaDocs(join(dir, 'nope'));
    expect(absent.ok ? '' : absent.error).toContain('does not exist');
    await mkdir(join(dir, 'docs', '2022'), { recursive: true });
    const empty = loadRealtimeQaDocs(dir);
    expect(empty.ok ? '' : empty.error).toContain('2022/2023/*.jsonl.gz');
  });

  const real = devDataPath('realtimeqa');
  it.skipIf(real === undefined)(
    'reads the real slice: 15,411 documents, 3,637 duplicates, 11,774 unique, 30 undated',
    async () => {
      const load = loadRealtimeQaDocs(real!);
      if (!load.ok) throw new Error(load.error);
      let withError = 0;
      for await (const item of load.items) if (item.error !== undefined) withError += 1;
      expect(withError).toBe(0);
      expect(load.stats).toEqual({
        files: 83,
        lines: 2250,
        badLines: 0,
        documents: 15411,
        duplicates: 3637,
        yielded: 11774,
        undated: 30,
      });
    },
    60_000,
  );
});

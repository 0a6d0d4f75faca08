import { mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cachedPrepare,
  importClosure,
  prepareChunks,
  preparationCodeVersion,
  preparationKey,
} from '../prepared-chunks-cache.js';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import type { Article, Chunk, Interaction } from '../../schemas/records.generated.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'neon-prepared-'));
  dirs.push(dir);
  return dir;
}

function article(n: number, text: string, now = Date.parse('2023-01-01T00:00:00Z')): Article {
  return normalizeArticle(
    {
      url: `https://news.example/story-${n}`,
      title: `Story ${n}`,
      text,
      published_at: `2022-06-0${n}`,
      source: 'news.example',
    },
    now,
  );
}
const TEXTS = [
  'Olaf Scholz met Emmanuel Macron in Paris on Monday. The two leaders discussed energy prices and the war in Ukraine. Scholz said Germany would send more aid.',
  'Serena Williams returned to Wimbledon after a year away. Williams lost in the first round to Harmony Tan of France. Tan said it was the match of her life.',
];

/** An extraction that records its runs and makes one interaction per chunk. */
function countingExtraction(id: string | undefined) {
  const runs: number[] = [];
  return {
    runs,
    extraction: {
      id,
      run: async (chunks: readonly Chunk[]) => {
        runs.push(chunks.length);
        return chunks.map((c) => ({ id: `i-${c.id}`, text: c.text.slice(0, 20), t: c.t }) as unknown as Interaction);
      },
    },
  };
}

describe('preparation key', () => {
  it('ignores when intake ran, and changes with an article, the code version or the extraction kept', () => {
    const articles = TEXTS.map((t, i) => article(i + 1, t));
    const later = TEXTS.map((t, i) => article(i + 1, t, Date.parse('2024-05-05T00:00:00Z')));
    expect(later[0]!.fetched_at).not.toBe(articles[0]!.fetched_at);
    const key = preparationKey(articles, 'v1');
    expect(preparationKey(later, 'v1')).toBe(key);
    expect(preparationKey([articles[0]!, article(2, `${TEXTS[1]!} One more sentence.`)], 'v1')).not.toBe(key);
    expect(preparationKey(articles, 'v2')).not.toBe(key);
    expect(preparationKey(articles, 'v1', 'offline')).not.toBe(key);
  });

  it('follows the content of the modules the preparation imports and of data files, not of other stages', () => {
    const root = freshDir();
    mkdirSync(join(root, 'processors', 'markup'), { recursive: true });
    mkdirSync(join(root, 'processors', 'spikes'), { recursive: true });
    mkdirSync(join(root, 'devkit'));
    const write = (path: string, text: string): void => writeFileSync(join(root, path), text);
    write('devkit/prepare.ts', "import { mark } from '../processors/markup/mark.js';\nexport const run = mark;");
    write('processors/markup/mark.ts', "import type { Names } from './names.js';\nexport const mark = 1;");
    write('processors/markup/names.ts', 'export type Names = string[];');
    write('processors/markup/stopwords.txt', 'the');
    write('processors/spikes/detect.ts', 'export const detect = 1;');
    const version = (): string => preparationCodeVersion(root, ['devkit/prepare.ts'], ['processors']);
    const before = version();
    expect(version()).toBe(before);
    write('processors/spikes/detect.ts', 'export const detect = 2;');
    expect(version()).toBe(before);
    for (const [path, text] of [
      ['processors/markup/mark.ts', "import type { Names } from './names.js';\nexport const mark = 2;"],
      ['processors/markup/names.ts', 'export type Names = readonly string[];'],
      ['processors/markup/stopwords.txt', 'the a'],
      ['devkit/prepare.ts', "import { mark } from '../processors/markup/mark.js';\nexport const run = mark + 1;"],
    ] as const) {
      const was = version();
      write(path, text);
      expect(version(), path).not.toBe(was);
    }
  });

  it('covers the product modules the real preparation imports', () => {
    const files = importClosure([fileURLToPath(new URL('../../devkit/process-articles.ts', import.meta.url))]);
    const names = files.map((f) => f.replace(/\\/g, '/'));
    expect(names.some((f) => f.endsWith('processors/markup/mark-article.ts'))).toBe(true);
    expect(names.some((f) => f.endsWith('processors/dedupe/drop-near-duplicates.ts'))).toBe(true);
    expect(names.some((f) => f.includes('processors/spikes/'))).toBe(false);
  });
});

describe('cachedPrepare', () => {
  it('prepares once, then reads the same chunks, entities and kept interactions back without extracting', async () => {
    const dir = freshDir();
    const articles = TEXTS.map((t, i) => article(i + 1, t));
    const first = countingExtraction('offline-test');
    const prepared = await cachedPrepare(articles, dir, first.extraction, 'code-v1');
    expect(prepared.fromCache).toBe(false);
    expect(prepared.chunks.length).toBeGreaterThan(0);
    expect(prepared.entities.map((e) => e.name)).toEqual(expect.arrayContaining(['Olaf Scholz', 'Serena Williams']));
    expect(first.runs).toEqual([prepared.chunks.length]);

    const second = countingExtraction('offline-test');
    const again = await cachedPrepare(articles, dir, second.extraction, 'code-v1');
    expect(again.fromCache).toBe(true);
    expect(second.runs).toEqual([]);
    expect(again.chunks).toEqual(prepared.chunks);
    expect(again.entities).toEqual(prepared.entities);
    expect(again.interactions).toEqual(prepared.interactions);
    expect(prepareChunks(articles).chunks).toEqual(prepared.chunks);

    // New code prepares afresh.
    const third = countingExtraction('offline-test');
    expect((await cachedPrepare(articles, dir, third.extraction, 'code-v2')).fromCache).toBe(false);
    expect(third.runs).toHaveLength(1);
  });

  it('runs an extraction it may not keep every time, on the cached chunks', async () => {
    const dir = freshDir();
    const articles = TEXTS.map((t, i) => article(i + 1, t));
    const llm = countingExtraction(undefined);
    await cachedPrepare(articles, dir, llm.extraction, 'code-v1');
    const again = await cachedPrepare(articles, dir, llm.extraction, 'code-v1');
    expect(again.fromCache).toBe(true);
    expect(llm.runs).toHaveLength(2);
  });

  it('does not trust an entry cut short, and leaves no temporary file', async () => {
    const dir = freshDir();
    const articles = TEXTS.map((t, i) => article(i + 1, t));
    await cachedPrepare(articles, dir, undefined, 'code-v1');
    const [entry] = readdirSync(dir);
    // A gzip stream without its end, as a crash in the middle of writing would leave.
    writeFileSync(join(dir, entry!), Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
    const again = await cachedPrepare(articles, dir, undefined, 'code-v1');
    expect(again.fromCache).toBe(false);
    expect(again.chunks.length).toBeGreaterThan(0);
    expect((await cachedPrepare(articles, dir, undefined, 'code-v1')).fromCache).toBe(true);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('without a folder, prepares every time', async () => {
    const articles = [article(1, TEXTS[0]!)];
    expect((await cachedPrepare(articles, undefined, undefined, 'v')).fromCache).toBe(false);
    expect((await cachedPrepare(articles, undefined, undefined, 'v')).fromCache).toBe(false);
  });
});

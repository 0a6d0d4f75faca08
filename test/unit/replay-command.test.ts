import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat, itemsOf } from '../../bin/commands/replay-command.js';
import { UsageError } from '../../infra/cli-errors.js';
import { replayArticles } from '../../processors/intake/replay-articles.js';
import type { Article } from '../../schemas/records.generated.js';

describe('neon replay: format detection', () => {
  const dir = mkdtempSync(join(tmpdir(), 'neon-replay-'));

  it('reads a file as JSONL, a folder with docs/ as RealTime QA, one with the CSVs as Wikinews', () => {
    writeFileSync(join(dir, 'a.jsonl'), '');
    expect(detectFormat(join(dir, 'a.jsonl'))).toBe('jsonl');
    mkdirSync(join(dir, 'rtqa', 'docs'), { recursive: true });
    expect(detectFormat(join(dir, 'rtqa'))).toBe('realtimeqa');
    mkdirSync(join(dir, 'wn'));
    writeFileSync(join(dir, 'wn', 'wikinews_2020.csv'), 'url,date,title,text\n');
    expect(detectFormat(join(dir, 'wn'))).toBe('wikinews');
    mkdirSync(join(dir, 'wce', 'daily_markdown'), { recursive: true });
    expect(detectFormat(join(dir, 'wce'))).toBe('wikipedia');
  });

  it('refuses a missing path and an unknown folder with a usage error', () => {
    expect(() => detectFormat(join(dir, 'nope'))).toThrow(UsageError);
    mkdirSync(join(dir, 'other'));
    expect(() => detectFormat(join(dir, 'other'))).toThrow(/give --format/);
  });
});

describe('neon replay: a reader declares the intake its items call for', () => {
  const dir = mkdtempSync(join(tmpdir(), 'neon-replay-wce-'));
  const W = 'https://en.wikipedia.org/wiki';
  mkdirSync(join(dir, 'daily_markdown'));
  writeFileSync(
    join(dir, 'daily_markdown', '2031-04-02-index.md'),
    [
      `* [Kenya](${W}/Kenya "Kenya") formally recognizes Kosovo as a sovereign state. [(AP)](https://ap.example/1)`,
      `* A probe lands on [Titan](${W}/Titan_(moon) "Titan (moon)") after a seven-year cruise through the outer solar system, its operators say. [(AP)](https://ap.example/2)`,
    ].join('\n'),
  );

  async function replayed(normalize: boolean): Promise<{ published: string[]; rejected: unknown }> {
    const source = itemsOf('wikipedia', dir);
    const published: string[] = [];
    const report = await replayArticles(source.items, {
      publisher: {
        publish: (article: Article) => Promise.resolve(void published.push(article.text)),
        reject: () => Promise.resolve(),
      },
      origin: dir,
      now: () => Date.UTC(2031, 4, 1),
      ...(normalize && source.normalize ? { normalize: source.normalize } : {}),
    });
    return { published, rejected: report.rejected };
  }

  it('a Current Events item of one short sentence is news, not an empty page', async () => {
    const { published, rejected } = await replayed(true);
    expect(published).toEqual([
      'Kenya formally recognizes Kosovo as a sovereign state.',
      expect.stringMatching(/^A probe lands on Titan/),
    ]);
    expect(rejected).toEqual({});
    // With the article floor instead, the short item would be refused as empty.
    expect((await replayed(false)).rejected).toEqual({ no_text: 1 });
  });
});

import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat } from '../../bin/commands/replay-command.js';
import { UsageError } from '../../infra/cli-errors.js';

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

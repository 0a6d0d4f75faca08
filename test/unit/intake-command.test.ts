import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFeedList } from '../../bin/commands/intake-command.js';
import { UsageError } from '../../infra/cli-errors.js';
import { ConfigError } from '../../schemas/local-infra-config.js';

const dir = mkdtempSync(join(tmpdir(), 'neon-feeds-'));
function file(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
}

describe('neon intake: feed list', () => {
  it('reads YAML with snake_case intervals, bare URLs with the default interval, and JSON', () => {
    const yaml = file(
      'feeds.yaml',
      'feeds:\n  - url: https://news.example/rss\n    interval_seconds: 120\n    source: Example\n  - https://other.example/atom\n',
    );
    expect(readFeedList(yaml)).toEqual([
      { url: 'https://news.example/rss', intervalSeconds: 120, source: 'Example' },
      { url: 'https://other.example/atom', intervalSeconds: 300 },
    ]);
    expect(readFeedList(file('feeds.json', '[{"url":"https://a.example/feed.json","intervalSeconds":60}]'))).toEqual([
      { url: 'https://a.example/feed.json', intervalSeconds: 60 },
    ]);
  });

  it('lists every problem at once, and refuses what is not a list', () => {
    const bad = file(
      'bad.yaml',
      'feeds:\n  - url: ftp://x.example/\n  - url: https://b.example/\n    interval_seconds: -5\n',
    );
    expect(() => readFeedList(bad)).toThrow(ConfigError);
    expect(() => readFeedList(bad)).toThrow(/feeds\[0\]\.url[\s\S]*feeds\[1\]\.intervalSeconds/);
    expect(() => readFeedList(file('scalar.yaml', 'just text'))).toThrow(UsageError);
  });
});

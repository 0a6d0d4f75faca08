import { describe, expect, it } from 'vitest';
import { IntakeRejection } from '../../processors/intake/article-input.js';
import { parseArticleLine } from '../../processors/intake/article-line.js';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';

const NOW = Date.UTC(2025, 4, 12, 10);
const TEXT = [
  'The city council approved fourteen new buses for the harbour line on Monday, the transport office said.',
  'Service on the extended harbour line is expected to start in June, after drivers have been trained.',
].join('\n\n');
const LINE = {
  url: 'https://news.example/2025/05/10/council-buses',
  title: 'Council approves buses',
  text: TEXT,
  published_at: '2025-05-12T09:00:00Z',
  source: 'news.example',
};

describe("an article's revision at intake", () => {
  it('is 1 unless the input names another, which keeps the id of the same URL', () => {
    const first = normalizeArticle(parseArticleLine(LINE), NOW);
    const second = normalizeArticle(parseArticleLine({ ...LINE, version: 2 }), NOW);
    expect(first.version).toBe(1);
    expect(second.version).toBe(2);
    expect(second.id).toBe(first.id);
  });

  it('refuses a version that is not a whole number from 1', () => {
    for (const version of [0, 1.5, -2, '2']) {
      expect(() => parseArticleLine({ ...LINE, version })).toThrow(IntakeRejection);
      expect(() => normalizeArticle({ ...LINE, version } as never, NOW)).toThrow(IntakeRejection);
    }
    expect(normalizeArticle({ ...LINE, version: null } as never, NOW).version).toBe(1);
  });
});

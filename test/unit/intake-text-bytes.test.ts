import { describe, expect, it } from 'vitest';
import { IntakeRejection } from '../../processors/intake/article-input.js';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import { MAX_ARTICLE_TEXT_BYTES } from '../../schemas/record-size-limits.js';

/**
 * Intake bounds an article's text in UTF-8 bytes as well as in characters: 200,000 characters of
 * Cyrillic or CJK are 400–600 KB, and the article's marked version (the text twice, plus mentions)
 * would then exceed Kafka's 1 MiB limit downstream.
 */

const NOW = Date.UTC(2025, 2, 1);

/** Prose in a script of `bytesPerChar` UTF-8 bytes, `chars` characters long, in sentences. */
function prose(sentence: string, chars: number): string {
  return sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars);
}

const CYRILLIC = 'Городской совет утвердил новый бюджет на строительство моста через реку. ';
const CJK = '市议会周一批准了修建新桥的预算，工程将于明年春天开工。';

function normalize(text: string) {
  return normalizeArticle(
    { url: 'https://news.example.org/long', title: 'A long read', text, published_at: '2025-02-20T09:00:00Z' },
    NOW,
  );
}

describe('intake text bound in bytes', () => {
  it('refuses as oversized a text within the character bound but over the byte bound', () => {
    const text = prose(CJK, 100_000); // 300,000 bytes, under 200,000 characters
    expect(text.length).toBeLessThan(200_000);
    expect(Buffer.byteLength(text)).toBeGreaterThan(MAX_ARTICLE_TEXT_BYTES);
    let rejection: unknown;
    try {
      normalize(text);
    } catch (error) {
      rejection = error;
    }
    expect(rejection).toBeInstanceOf(IntakeRejection);
    expect((rejection as IntakeRejection).reason).toBe('oversized');
    expect((rejection as IntakeRejection).message).toMatch(/bytes/);
  });

  it('accepts a long non-Latin article under the byte bound', () => {
    const text = prose(CYRILLIC, 100_000); // about 190,000 bytes
    expect(Buffer.byteLength(text)).toBeLessThan(MAX_ARTICLE_TEXT_BYTES);
    expect(normalize(text).text.length).toBeGreaterThan(90_000);
  });
});

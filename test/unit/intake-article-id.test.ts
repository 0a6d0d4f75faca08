import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IntakeRejection } from '../../processors/intake/article-input.js';
import { articleId, suppliedArticleId } from '../../processors/intake/article-id.js';

describe('articleId', () => {
  it('is a- and the first 16 hex digits of SHA-256 of the canonical URL', () => {
    const url = 'https://example.org/2023/08/06/story';
    const digest = createHash('sha256').update(url).digest('hex');
    expect(articleId(url)).toBe(`a-${digest.slice(0, 16)}`);
    expect(articleId(url)).toMatch(/^a-[0-9a-f]{16}$/);
  });

  it('is stable and separates different URLs', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (x, y) => {
        const [a, b] = [`https://example.org/${encodeURIComponent(x)}`, `https://example.org/${encodeURIComponent(y)}`];
        expect(articleId(a)).toBe(articleId(a));
        if (a !== b) expect(articleId(a)).not.toBe(articleId(b));
      }),
    );
  });
});

describe('suppliedArticleId', () => {
  it('accepts ids of letters, digits and . _ : -', () => {
    expect(suppliedArticleId('rtqa:20220617_0.3')).toBe('rtqa:20220617_0.3');
    expect(suppliedArticleId('x'.repeat(200))).toHaveLength(200);
  });

  it('rejects empty, too long and other characters as invalid_input', () => {
    for (const bad of ['', 'x'.repeat(201), 'has space', 'slash/y', 'ümlaut', 'new\nline']) {
      let caught: unknown;
      try {
        suppliedArticleId(bad);
      } catch (error) {
        caught = error;
      }
      expect(caught, JSON.stringify(bad)).toBeInstanceOf(IntakeRejection);
      expect((caught as IntakeRejection).reason).toBe('invalid_input');
    }
  });
});

import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUNDLED_SAMPLE } from '../../streams/stages/intake-sources.js';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import { EntityRegistry } from '../../processors/markup/entity-registry.js';
import { markArticle } from '../../processors/markup/mark-article.js';
import { useMarkupHooks } from '../../processors/markup/recognize-entities.js';
import { candidatesOf, useSentenceBySentenceSweep } from '../../processors/markup/tagger-sweep.js';
import type { Article } from '../../schemas/records.generated.js';
import { NEWS_STORIES } from '../fixtures/news-stories.js';

/**
 * The sentence-by-sentence sweep must change markup's speed and nothing else: the same tags, so the
 * same mentions, ids, sentences and markup, on real multi-sentence news text.
 */

/** The bundled sample's summaries joined into one article per day: long, many-sentence texts. */
function dailyDigests(): Article[] {
  const byDay = new Map<string, string[]>();
  for (const line of readFileSync(BUNDLED_SAMPLE.file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const item = JSON.parse(line) as { text: string; published_at: string };
    byDay.set(item.published_at, [...(byDay.get(item.published_at) ?? []), item.text]);
  }
  return [...byDay].map(([day, texts]) =>
    normalizeArticle(
      { url: `https://digest.example/${day}`, title: `Digest ${day}`, text: texts.join('\n\n'), published_at: day },
      Date.UTC(2026, 0, 1),
    ),
  );
}

function markAll(articles: readonly Article[], sentenceBySentence: boolean, skipUnreadHooks = true): string[] {
  useSentenceBySentenceSweep(sentenceBySentence);
  useMarkupHooks(skipUnreadHooks);
  try {
    const registry = new EntityRegistry();
    return articles.map((article) => JSON.stringify(markArticle(article, registry)));
  } finally {
    useSentenceBySentenceSweep(true);
    useMarkupHooks(true);
  }
}

/** The daily digests and the news stories: long, many-sentence real texts. */
function realNews(): Article[] {
  return [
    ...dailyDigests().slice(0, 45),
    ...NEWS_STORIES.map((story) => normalizeArticle(story, Date.UTC(2026, 0, 1))),
  ];
}

describe('the sentence-by-sentence tagger sweep', () => {
  it('marks real news exactly as compromise’s own sweep does', () => {
    const articles = realNews();
    expect(articles.length).toBeGreaterThan(45);
    const theirs = markAll(articles, false);
    const ours = markAll(articles, true);
    for (const [i, marked] of ours.entries()) expect(marked, articles[i]!.url).toBe(theirs[i]);
  }, 60_000);

  it('marks real news exactly as with every compromise hook, typeahead and phrase chunks included', () => {
    const articles = realNews();
    const all = markAll(articles, true, false);
    const skipping = markAll(articles, true, true);
    for (const [i, marked] of skipping.entries()) expect(marked, articles[i]!.url).toBe(all[i]);
  }, 60_000);

  it('lists the patterns getHooks would: by hook order, each pattern once, the first time it comes', () => {
    // compromise's getHooks, as written: concat per hook the sentence holds, then keep first by `match`.
    const reference = (hooks: Record<string, { match: string }[]>, cache: Set<string>): { match: string }[] => {
      let maybe: { match: string }[] = [];
      for (const key of Object.keys(hooks)) if (cache.has(key)) maybe = maybe.concat(hooks[key]!);
      const already = new Set<string>();
      return maybe.filter((m) => (already.has(m.match) ? false : (already.add(m.match), true)));
    };
    const key = fc.constantFrom<string>('#Noun', '#Verb', 'the', 'of', '#Person', 'said', '%Noun|Verb%', '#Value');
    const pattern = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f').map((match) => ({ match }));
    fc.assert(
      fc.property(fc.dictionary(key, fc.array(pattern, { maxLength: 5 })), fc.uniqueArray(key), (hooks, present) => {
        const cache = new Set(present);
        const expected = reference(hooks, cache);
        const found = candidatesOf(hooks, cache);
        expect(found?.list ?? []).toEqual(expected);
        if (found) expect(cache.has(found.key)).toBe(true);
      }),
    );
  });
});

import { describe, expect, it } from 'vitest';

import { currentEventsArticles, newsVocabulary, SyntheticNews, Weighted } from '../../devkit/synthetic-news.js';

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return ((state >>> 0) % 1_000_000) / 1_000_000;
  };
}

const words = (text: string): number => text.split(/\s+/).filter((w) => w !== '').length;

describe('newsVocabulary', () => {
  it('counts words of texts and headlines, and names as runs of capitalised words in texts', () => {
    const vocabulary = newsVocabulary([
      { text: 'Troops clash with M23 in Goma, in the Democratic Republic of the Congo.', title: 'Kivu conflict' },
      { text: 'Armed men attack a convoy near Goma. Russia says Goma fell.', title: '' },
    ]);
    expect(vocabulary.words.get('Goma')).toBe(3);
    expect(vocabulary.words.get('Kivu')).toBe(1);
    expect(vocabulary.names.get('Democratic Republic of the Congo')).toBe(1);
    expect(vocabulary.names.get('M23')).toBe(1);
    expect(vocabulary.names.get('Goma')).toBe(3);
    // Headlines give words, not names; a lone sentence opener is no name unless capitalised inside too.
    expect(vocabulary.names.has('Kivu')).toBe(false);
    expect(vocabulary.names.has('Troops')).toBe(false);
    expect(vocabulary.names.has('Armed')).toBe(false);
  });

  it('cuts names at punctuation and possessives, and leaves counts and months out', () => {
    const vocabulary = newsVocabulary([{ text: "In March, Gaza, Israel's army and Two ministers met.", title: '' }]);
    expect([...vocabulary.names.keys()].sort()).toEqual(['Gaza', 'Israel']);
  });
});

describe('Weighted', () => {
  it('picks each item in proportion to its weight', () => {
    const weighted = new Weighted(['a', 'b', 'c'], [1, 2, 7]);
    const counts = new Map<string, number>();
    for (let i = 0; i < 10_000; i++) {
      const item = weighted.pick((i + 0.5) / 10_000);
      counts.set(item, (counts.get(item) ?? 0) + 1);
    }
    expect(counts.get('a')).toBe(1_000);
    expect(counts.get('b')).toBe(2_000);
    expect(counts.get('c')).toBe(7_000);
  });
});

describe('SyntheticNews on the bundled sample', () => {
  const vocabulary = newsVocabulary(currentEventsArticles());

  it('writes statements of 10–30 words that open with their subject and name their object', () => {
    const news = new SyntheticNews(vocabulary, seeded(7));
    for (let i = 0; i < 500; i++) {
      const statement = news.statement();
      expect(statement.text.startsWith(`${statement.subject.name} `)).toBe(true);
      if (statement.object) expect(statement.text).toContain(statement.object.name);
      expect(words(statement.text)).toBeGreaterThanOrEqual(10);
      const names = words(statement.subject.name) + (statement.object ? words(statement.object.name) : 0);
      expect(words(statement.text)).toBeLessThanOrEqual(Math.max(30, names + 2));
    }
  });

  it('asks questions of 5–12 words, most naming an entity', () => {
    const news = new SyntheticNews(vocabulary, seeded(11));
    const questions = Array.from({ length: 500 }, () => news.question());
    for (const question of questions) {
      expect(question.text.endsWith('?')).toBe(true);
      expect(words(question.text)).toBeGreaterThanOrEqual(5);
      // Longer only where the name alone takes nearly that many ("Presidency of the Council of …").
      const taken = words(question.text.split(' ', 1)[0]!) + (question.entity ? words(question.entity.name) + 1 : 0);
      expect(words(question.text)).toBeLessThanOrEqual(Math.max(12, taken + 2));
      if (question.entity) expect(question.text).toContain(question.entity.name);
    }
    const named = questions.filter((q) => q.entity !== null).length;
    expect(named).toBeGreaterThan(300);
    expect(named).toBeLessThan(400);
  });

  it('draws words and subjects as skewed as news: frequent words and entities dominate', () => {
    const news = new SyntheticNews(vocabulary, seeded(3));
    const subjects = new Map<string, number>();
    const drawn = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const statement = news.statement();
      subjects.set(statement.subject.id, (subjects.get(statement.subject.id) ?? 0) + 1);
      for (const w of statement.text.split(' ')) drawn.set(w.toLowerCase(), (drawn.get(w.toLowerCase()) ?? 0) + 1);
    }
    const total = [...drawn.values()].reduce((a, b) => a + b, 0);
    // "the" is some 5% of the sample's words; a uniform draw over ~8k words would give 0.01%.
    expect(drawn.get('the')! / total).toBeGreaterThan(0.03);
    const byPopularity = [...subjects.values()].sort((a, b) => b - a);
    // The ten most popular subjects take far more than ten of ~2.8k would uniformly (0.4%).
    expect(byPopularity.slice(0, 10).reduce((a, b) => a + b, 0) / 20_000).toBeGreaterThan(0.05);
    expect(news.entityList.length).toBeGreaterThan(2_000);
  });

  it('is deterministic for a seed', () => {
    const a = new SyntheticNews(vocabulary, seeded(5));
    const b = new SyntheticNews(vocabulary, seeded(5));
    expect(Array.from({ length: 50 }, () => a.statement().text)).toEqual(
      Array.from({ length: 50 }, () => b.statement().text),
    );
  });
});

import { describe, expect, it } from 'vitest';

import { EntityRegistry } from '../../processors/markup/entity-registry.js';
import { MarkupConfigError, markArticle, resolveMarkupOptions } from '../../processors/markup/mark-article.js';
import { stripMarkup } from '../../processors/markup/render-markup.js';
import type { Article, MarkedArticle } from '../../schemas/records.generated.js';

const article = (text: string, overrides: Partial<Article> = {}): Article => ({
  id: 'a1',
  url: 'https://news.example/a1',
  canonical_url: 'https://news.example/a1',
  source: 'news.example',
  title: 'Met Gala',
  text,
  published_at: Date.UTC(2023, 4, 2, 9),
  fetched_at: Date.UTC(2023, 4, 2, 10),
  language: 'en',
  version: 1,
  ...overrides,
});

const GALA =
  "Stepping out at the Met Gala on Monday, Doja Cat channelled Choupette, Karl Lagerfeld's beloved cat. " +
  '"It makes no sense for anyone to go as Karl\'s cat more than Doja Cat," says Brett Alan Nelson.\n\n' +
  'The FBI said nothing. The Federal Bureau of Investigation rarely comments on cats.';

function expectConsistent(marked: MarkedArticle): void {
  const text = marked.article.text;
  let previousEnd = 0;
  for (const m of marked.mentions) {
    expect(m.start).toBeGreaterThanOrEqual(previousEnd);
    expect(m.surface).toBe(text.slice(m.start, m.end));
    const sentence = marked.sentences[m.sentence_index]!;
    expect(m.start).toBeGreaterThanOrEqual(sentence.start);
    expect(m.end).toBeLessThanOrEqual(sentence.end);
    expect(sentence.entity_ids).toContain(m.entity_id);
    previousEnd = m.end;
  }
  for (const d of marked.dates) {
    expect(d.text).toBe(text.slice(d.start, d.end));
    const sentence = marked.sentences[d.sentence_index]!;
    expect(d.start).toBeGreaterThanOrEqual(sentence.start);
  }
  expect(stripMarkup(marked.marked_text)).toBe(text);
}

describe('markArticle', () => {
  it('marks sentences, linked mentions, dates and the <e> text', () => {
    const marked = markArticle(article(GALA), new EntityRegistry());
    expectConsistent(marked);
    expect(marked.sentences.map((s) => GALA.slice(s.start, s.end))).toEqual([
      "Stepping out at the Met Gala on Monday, Doja Cat channelled Choupette, Karl Lagerfeld's beloved cat.",
      '"It makes no sense for anyone to go as Karl\'s cat more than Doja Cat," says Brett Alan Nelson.',
      'The FBI said nothing.',
      'The Federal Bureau of Investigation rarely comments on cats.',
    ]);
    expect(marked.mentions.map((m) => `${m.surface}→${m.entity_id}`)).toEqual([
      'Met Gala→e-met-gala',
      'Doja Cat→e-doja-cat',
      'Choupette→e-choupette',
      'Karl Lagerfeld→e-karl-lagerfeld',
      'Karl→e-karl-lagerfeld',
      'Doja Cat→e-doja-cat',
      'Brett Alan Nelson→e-brett-alan-nelson',
      'FBI→e-federal-bureau-of-investigation',
      'Federal Bureau of Investigation→e-federal-bureau-of-investigation',
    ]);
    expect(marked.sentences.map((s) => s.entity_ids)).toEqual([
      ['e-met-gala', 'e-doja-cat', 'e-choupette', 'e-karl-lagerfeld'],
      ['e-karl-lagerfeld', 'e-doja-cat', 'e-brett-alan-nelson'],
      ['e-federal-bureau-of-investigation'],
      ['e-federal-bureau-of-investigation'],
    ]);
    expect(marked.marked_text.startsWith('Stepping out at the <e>Met Gala</e> on Monday, <e>Doja Cat</e>')).toBe(true);
    expect(marked.marked_text).toContain("<e>Karl Lagerfeld</e>'s beloved cat");
    expect(marked.dates).toEqual([
      { text: 'Monday', start: 32, end: 38, sentence_index: 0, refers_to: Date.UTC(2023, 4, 1), granularity: 'DAY' },
    ]);
    expect(marked.article).toEqual(article(GALA));
  });

  it('links across articles through the registry', () => {
    const registry = new EntityRegistry();
    markArticle(article('Karl Lagerfeld designed for Chanel. Lagerfeld died in 2019.'), registry);
    const later = markArticle(article('Fans remembered Lagerfeld in Paris.', { id: 'a2' }), registry);
    expect(later.mentions.map((m) => m.entity_id)).toEqual(['e-karl-lagerfeld', 'e-paris']);
    expect(registry.get('e-karl-lagerfeld')).toMatchObject({ mentions: 2, type: 'PERSON' });
    expect(
      registry
        .takeChanges()
        .map((e) => e.id)
        .sort(),
    ).toEqual(['e-chanel', 'e-karl-lagerfeld', 'e-paris']);
  });

  it('links a nationality word to its country, in the same article and across articles', () => {
    const registry = new EntityRegistry();
    const first = markArticle(article('Israeli airstrikes hit Gaza. Israel said the strikes were targeted.'), registry);
    const later = markArticle(article('An Israeli delegation arrived in Cairo.', { id: 'a2' }), registry);
    const israel = first.mentions.find((m) => m.surface === 'Israel')!.entity_id;
    expect(first.mentions.filter((m) => m.entity_id === israel).map((m) => m.surface)).toEqual(['Israeli', 'Israel']);
    expect(later.mentions.map((m) => [m.surface, m.entity_id])).toEqual([
      ['Israeli', israel],
      ['Cairo', 'e-cairo'],
    ]);
    expect(registry.get(israel)).toMatchObject({ name: 'Israel', type: 'LOCATION' });
    expect(later.marked_text).toContain('<e>Israeli</e>');
  });

  it('keeps a sentence-initial word before a noun only once the registry knows it as a name', () => {
    const registry = new EntityRegistry();
    const before = markArticle(article('Hamas militants fire rockets. Security forces respond.'), registry);
    expect(before.mentions.map((m) => m.surface)).toEqual([]);
    markArticle(article('Talks between Israel and Hamas stall in Doha.', { id: 'a2' }), registry);
    const after = markArticle(
      article('Hamas militants fire rockets. Security forces respond.', { id: 'a3' }),
      registry,
    );
    expect(after.mentions.map((m) => [m.surface, m.entity_id])).toEqual([['Hamas', 'e-hamas']]);
  });

  it('reads "<place> forces" as armed forces once the registry knows the place, else the name alone', () => {
    const registry = new EntityRegistry();
    const text = 'Clashes with Puntland forces continue near Bosaso.';
    const before = markArticle(article(text), registry);
    expect(before.mentions.map((m) => m.surface)).toEqual(['Puntland', 'Bosaso']);
    markArticle(article('Elections are held in Puntland, Somalia.', { id: 'a2' }), registry);
    expect(registry.get('e-puntland')?.type).toBe('LOCATION');
    const after = markArticle(article(text, { id: 'a3' }), registry);
    expect(after.mentions.map((m) => [m.surface, m.entity_id])).toEqual([
      ['Puntland forces', 'e-puntland-forces'],
      ['Bosaso', 'e-bosaso'],
    ]);
  });

  it('is deterministic: the same article and registry state give the same result', () => {
    const first = markArticle(article(GALA), new EntityRegistry());
    const second = markArticle(article(GALA), new EntityRegistry());
    expect(second).toEqual(first);
  });

  it('keeps at most maxMentionsPerArticle mentions, the first in text order', () => {
    const registry = new EntityRegistry();
    const marked = markArticle(article(GALA), registry, { maxMentionsPerArticle: 2 });
    expectConsistent(marked);
    expect(marked.mentions.map((m) => m.surface)).toEqual(['Met Gala', 'Doja Cat']);
    expect(registry.size).toBe(2);
    expect(marked.marked_text.split('<e>')).toHaveLength(3);
  });

  it('marks an empty article without failing', () => {
    const marked = markArticle(article(''), new EntityRegistry());
    expect(marked).toMatchObject({ sentences: [], mentions: [], dates: [], marked_text: '' });
  });

  it('escapes article text that looks like markup', () => {
    const marked = markArticle(article('Ignore <e>previous</e> instructions, said Doja Cat.'), new EntityRegistry());
    expect(marked.marked_text).toBe('Ignore &lt;e&gt;previous&lt;/e&gt; instructions, said <e>Doja Cat</e>.');
    expectConsistent(marked);
  });

  it('validates options', () => {
    expect(resolveMarkupOptions({}).maxMentionsPerArticle).toBeGreaterThan(0);
    expect(() => resolveMarkupOptions({ maxMentionsPerArticle: -1 })).toThrow(MarkupConfigError);
    expect(() => markArticle(article(GALA), new EntityRegistry(), { maxMentionsPerArticle: 1.5 })).toThrow(
      /maxMentionsPerArticle/,
    );
  });
});

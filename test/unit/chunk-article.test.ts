import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ChunkingError,
  chunkArticle,
  chunkId,
  resolveChunkOptions,
  sentenceWindows,
} from '../../processors/chunk/chunk-article.js';
import type { EntityType, MarkedArticle, MentionSpan, Sentence } from '../../schemas/records.generated.js';

const PUBLISHED = Date.UTC(2024, 5, 3, 9, 30);

/**
 * Builds a MarkedArticle from sentences written with inline entities: `[[surface|id|TYPE]]`.
 * Sentences are joined by a space, or by `separator`.
 */
function article(sentences: string[], options: { version?: number; separator?: string } = {}): MarkedArticle {
  const separator = options.separator ?? ' ';
  let text = '';
  const spans: Sentence[] = [];
  const mentions: MentionSpan[] = [];
  sentences.forEach((raw, sentenceIndex) => {
    if (sentenceIndex > 0) text += separator;
    const start = text.length;
    const ids: string[] = [];
    const pattern = /\[\[([^|\]]+)\|([^|\]]+)\|([A-Z]+)\]\]/g;
    let last = 0;
    for (let match = pattern.exec(raw); match !== null; match = pattern.exec(raw)) {
      text += raw.slice(last, match.index);
      const [, surface, id, type] = match as unknown as [string, string, string, EntityType];
      mentions.push({
        surface,
        entity_id: id,
        entity_type: type,
        sentence_index: sentenceIndex,
        start: text.length,
        end: text.length + surface.length,
      });
      if (!ids.includes(id)) ids.push(id);
      text += surface;
      last = match.index + match[0].length;
    }
    text += raw.slice(last);
    spans.push({ start, end: text.length, entity_ids: ids });
  });
  return {
    article: {
      id: 'art-1',
      url: 'https://news.example/2024/06/03/story?utm=x',
      canonical_url: 'https://news.example/2024/06/03/story',
      source: 'news.example',
      title: 'A story',
      text,
      published_at: PUBLISHED,
      fetched_at: PUBLISHED + 60_000,
      language: 'en',
      version: options.version ?? 1,
    },
    sentences: spans,
    mentions,
    marked_text: '',
    dates: [],
  };
}

const TEN = Array.from({ length: 10 }, (_, i) => `Sentence number ${i} is here.`);

describe('sentenceWindows', () => {
  it('advances by m − overlap and end-aligns the last window', () => {
    expect(sentenceWindows(10, 5, 2)).toEqual([
      { first: 0, last: 4 },
      { first: 3, last: 7 },
      { first: 5, last: 9 },
    ]);
    expect(sentenceWindows(6, 5, 2)).toEqual([
      { first: 0, last: 4 },
      { first: 1, last: 5 },
    ]);
    expect(sentenceWindows(11, 5, 2)).toEqual([
      { first: 0, last: 4 },
      { first: 3, last: 7 },
      { first: 6, last: 10 },
    ]);
    expect(sentenceWindows(3, 5, 2)).toEqual([{ first: 0, last: 2 }]);
    expect(sentenceWindows(0, 5, 2)).toEqual([]);
  });

  it('covers every sentence with full windows that overlap by at least `overlap`', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 80 }), fc.integer({ min: 1, max: 9 }), fc.nat(), (n, m, o) => {
        const overlap = o % m;
        const windows = sentenceWindows(n, m, overlap);
        const covered = new Set<number>();
        windows.forEach((w, i) => {
          expect(w.last - w.first + 1).toBe(Math.min(n, m));
          for (let s = w.first; s <= w.last; s++) covered.add(s);
          const previous = windows[i - 1];
          if (previous !== undefined) {
            expect(w.first).toBeGreaterThan(previous.first);
            expect(previous.last - w.first + 1).toBeGreaterThanOrEqual(overlap);
          }
        });
        expect(covered.size).toBe(n);
        expect(windows.at(-1)?.last).toBe(n - 1);
      }),
    );
  });
});

describe('chunkArticle', () => {
  it('cuts 10 sentences into windows of 5 sharing 2, the last one end-aligned', () => {
    const marked = article(TEN);
    const chunks = chunkArticle(marked);
    expect(chunks.map((c) => c.text)).toEqual([
      TEN.slice(0, 5).join(' '),
      TEN.slice(3, 8).join(' '),
      TEN.slice(5, 10).join(' '),
    ]);
    expect(chunks.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(chunks.map((c) => c.id)).toEqual(['art-1:v1:0', 'art-1:v1:1', 'art-1:v1:2']);
    for (const c of chunks) {
      expect(c.article_id).toBe('art-1');
      expect(c.t).toBe(PUBLISHED);
      expect(c.provenance).toEqual([
        {
          article_id: 'art-1',
          url: 'https://news.example/2024/06/03/story',
          source: 'news.example',
          published_at: PUBLISHED,
        },
      ]);
    }
  });

  it('keeps the text between sentences as written', () => {
    const chunks = chunkArticle(article(['First line.', 'Second line.'], { separator: '\n\n' }));
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.text).toBe('First line.\n\nSecond line.');
  });

  it('makes one chunk of a short article and none of an empty one', () => {
    expect(chunkArticle(article(['Only one.', 'And two.']))).toHaveLength(1);
    expect(chunkArticle(article([]))).toEqual([]);
  });

  it('marks mentions, escapes markup in the text, and lists E′ in order of first mention', () => {
    const marked = article([
      '[[Karl Lagerfeld|karl|PERSON]] met [[Anna Wintour|anna|PERSON]] in [[Paris|paris|LOCATION]].',
      "[[Karl's|karl|PERSON]] label said profits < costs & fell.",
      '[[Chanel|chanel|ORGANIZATION]] declined to comment on [[Paris|paris|LOCATION]].',
    ]);
    const [c] = chunkArticle(marked);
    expect(c!.marked_text).toBe(
      '<e>Karl Lagerfeld</e> met <e>Anna Wintour</e> in <e>Paris</e>. ' +
        "<e>Karl's</e> label said profits &lt; costs &amp; fell. " +
        '<e>Chanel</e> declined to comment on <e>Paris</e>.',
    );
    expect(c!.entity_ids).toEqual(['karl', 'anna', 'paris', 'chanel']);
    expect(c!.entities).toEqual([
      { id: 'karl', name: 'Karl Lagerfeld', type: 'PERSON' },
      { id: 'anna', name: 'Anna Wintour', type: 'PERSON' },
      { id: 'paris', name: 'Paris', type: 'LOCATION' },
      { id: 'chanel', name: 'Chanel', type: 'ORGANIZATION' },
    ]);
  });

  it('takes each chunk’s entities from its own sentences, named by the longest surface in the article', () => {
    const sentences = [
      '[[Karl|karl|PERSON]] arrived.',
      'Nothing here.',
      'Still nothing.',
      '[[Chanel|chanel|ORGANIZATION]] waited.',
      'Quiet.',
      '[[Karl Lagerfeld’s|karl|PERSON]] show began.',
      '[[Karl|karl|ORGANIZATION]] left.',
    ];
    const chunks = chunkArticle(article(sentences), { sentencesPerChunk: 3, overlap: 0 });
    expect(chunks.map((c) => c.entity_ids)).toEqual([['karl'], ['chanel', 'karl'], ['karl']]);
    // Longest surface with the possessive dropped; the type most mentions give.
    expect(chunks[0]!.entities).toEqual([{ id: 'karl', name: 'Karl Lagerfeld', type: 'PERSON' }]);
  });

  it('names a country by its name, not by the nationality word or its plural an article used for it', () => {
    const sentences = [
      '[[Ukrainian|e-ukraine|LOCATION]] drones struck.',
      '[[Israeli|e-israel|LOCATION]] officials met [[Israel|e-israel|LOCATION]]’s allies.',
      '[[Colombians|e-colombia|LOCATION]] voted.',
    ];
    const [chunk] = chunkArticle(article(sentences));
    expect(chunk!.entities).toEqual([
      { id: 'e-ukraine', name: 'Ukraine', type: 'LOCATION' },
      { id: 'e-israel', name: 'Israel', type: 'LOCATION' },
      { id: 'e-colombia', name: 'Colombia', type: 'LOCATION' },
    ]);
  });

  it('is deterministic and puts the article version in the id', () => {
    const v1 = article(TEN);
    expect(chunkArticle(v1)).toEqual(chunkArticle(structuredClone(v1)));
    const v2 = chunkArticle(article(TEN.slice(0, 6), { version: 2 }));
    expect(v2.map((c) => c.id)).toEqual([chunkId('art-1', 2, 0), chunkId('art-1', 2, 1)]);
    expect(v2.map((c) => c.id)).not.toContain('art-1:v1:1');
  });

  it('re-cuts windows longer than maxChunkChars into pieces that cover all text', () => {
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ') + '.';
    const sentences = [
      'A short opening sentence.',
      long,
      '[[Harbour Authority|harbour|ORGANIZATION]] said [[the northern pier|pier|LOCATION]] would reopen soon.',
      'Another short one.',
    ];
    const marked = article(sentences);
    const max = 120;
    const chunks = chunkArticle(marked, { maxChunkChars: max });
    expect(chunks.length).toBeGreaterThan(3);
    const text = marked.article.text;
    let covered = '';
    for (const c of chunks) {
      expect(c.text.length).toBeLessThanOrEqual(max);
      expect(text).toContain(c.text);
      covered += ` ${c.text}`;
    }
    for (const token of text.split(/\s+/)) expect(covered).toContain(token);
    // A mention is never cut: it appears whole and marked in some chunk.
    expect(chunks.some((c) => c.marked_text.includes('<e>the northern pier</e>'))).toBe(true);
    expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
  });

  it('cuts over-long sentences at whitespace, never inside a mention, and loses no text', () => {
    const word = fc.constantFrom('harbour', 'pier', 'ferry', 'island', 'repair', 'season', 'trader', 'a', 'of');
    // Every word is numbered, so each chunk's text occurs once in the article and can be located.
    const sentence = fc.array(fc.tuple(word, fc.boolean()), { minLength: 1, maxLength: 70 });
    const sentences = fc.array(sentence, { minLength: 1, maxLength: 8 }).map((list) =>
      list.map((parts, s) =>
        parts
          .map(([w, marked], i) => (marked ? `[[${w}${s}_${i} ${w}${s}_${i}|e${i % 5}|OTHER]]` : `${w}${s}_${i}`))
          .join(' ')
          .concat('.'),
      ),
    );
    fc.assert(
      fc.property(sentences, fc.integer({ min: 80, max: 300 }), (raw, max) => {
        const marked = article(raw);
        const chunks = chunkArticle(marked, { sentencesPerChunk: 3, overlap: 1, maxChunkChars: max });
        const text = marked.article.text;
        const covered = new Uint8Array(text.length);
        for (const c of chunks) {
          expect(c.text.length).toBeLessThanOrEqual(max);
          const at = text.indexOf(c.text);
          expect(at).toBeGreaterThanOrEqual(0);
          covered.fill(1, at, at + c.text.length);
          // Every tag pair encloses a whole surface: mentions here are always "w w".
          for (const inner of c.marked_text.match(/<e>[^<]*<\/e>/g) ?? []) expect(inner).toMatch(/^<e>(\w+) \1<\/e>$/);
        }
        for (let i = 0; i < text.length; i++) if (!/\s/.test(text.charAt(i))) expect(covered[i]).toBe(1);
        // Every mention (each surface is unique) is marked whole in some chunk.
        const markedSurfaces = new Set(
          chunks.flatMap((c) => [...c.marked_text.matchAll(/<e>([^<]*)<\/e>/g)].map((m) => m[1])),
        );
        for (const m of marked.mentions) expect(markedSurfaces.has(m.surface)).toBe(true);
        expect(new Set(chunks.flatMap((c) => c.entity_ids))).toEqual(new Set(marked.mentions.map((m) => m.entity_id)));
      }),
      { numRuns: 150 },
    );
  });

  it('refuses impossible options with every problem listed', () => {
    expect(() => resolveChunkOptions({ sentencesPerChunk: 3, overlap: 3 })).toThrow(/overlap \(3\) must be less/);
    try {
      chunkArticle(article(TEN), { sentencesPerChunk: 0, overlap: -1, maxChunkChars: 10 });
      expect.fail('expected a ChunkingError');
    } catch (error) {
      expect(error).toBeInstanceOf(ChunkingError);
      expect((error as ChunkingError).code).toBe('invalid_options');
      expect((error as ChunkingError).problems).toHaveLength(3);
    }
  });

  it('refuses sentences and mentions that are out of order, overlapping or outside the text', () => {
    const marked = article(['[[One|one|OTHER]] two.', '[[Three|three|OTHER]] four.']);
    const swapped = { ...marked, sentences: [marked.sentences[1]!, marked.sentences[0]!] };
    expect(() => chunkArticle(swapped)).toThrow(expect.objectContaining({ code: 'invalid_sentences' }) as Error);
    const past = { ...marked, sentences: [{ start: 0, end: 999, entity_ids: [] }] };
    expect(() => chunkArticle(past)).toThrow(/past the text/);
    const overlapping = { ...marked, mentions: [marked.mentions[0]!, { ...marked.mentions[0]!, start: 1 }] };
    expect(() => chunkArticle(overlapping)).toThrow(expect.objectContaining({ code: 'invalid_mentions' }) as Error);
  });
});

import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  capPerArticle,
  rankGeneric,
  rankLatest,
  rankTempralm,
  rankTemporal,
  timeFilter,
  type Candidate,
  type WordedCandidate,
} from '../../processors/query/rank-candidates.js';
import { fuseRankings } from '../../processors/query/fuse-rankings.js';
import { interactionEmbeddingText } from '../../processors/index/index-documents.js';
import { EntityLinker, reformulate, spellDate } from '../../processors/query/reformulate-query.js';
import {
  DEFAULT_ALPHA,
  DEFAULT_FUSION,
  DEFAULT_PER_ARTICLE,
  DEFAULT_STORE,
  DEFAULT_STRATEGY,
  parseSearchRequest,
  type SearchRequest,
} from '../../processors/query/search-request.js';

const TQ = Date.UTC(2023, 7, 31, 12);
const HOUR = 3_600_000;

// Semantic scores as Elasticsearch's cosine gives them: (1 + cos) / 2.
const corpus: Candidate[] = [
  { id: 'a', score: 0.65, published_at: TQ - 3 * HOUR },
  { id: 'b', score: 0.85, published_at: TQ - 1 * HOUR },
  { id: 'c', score: 0.9, published_at: TQ - 1 * DAY_MS },
  { id: 'd', score: 0.95, published_at: TQ - 2 * DAY_MS },
  { id: 'f', score: 0.8, published_at: TQ - 7 * DAY_MS },
  { id: 'g', score: 0.925, published_at: TQ - 21 * DAY_MS },
];

function request(overrides: Partial<SearchRequest> = {}): SearchRequest {
  return {
    q: 'q',
    tq: TQ,
    k: 3,
    strategy: 'generic',
    store: 'interactions',
    constraint: 'none',
    constraintAt: TQ,
    windowDays: 7,
    alpha: 1,
    includeFuture: false,
    ...overrides,
  };
}

describe('ranking strategies', () => {
  it('generic: by similarity alone', () => {
    expect(rankGeneric(corpus, 3).map((r) => r.candidate.id)).toEqual(['d', 'g', 'c']);
  });

  it('temporal: the query day first, then ring by ring, similarity within a ring', () => {
    const ranked = rankTemporal(corpus, TQ, 5);
    expect(ranked.map((r) => [r.candidate.id, r.dayDistance])).toEqual([
      ['b', 0],
      ['a', 0],
      ['c', 1],
      ['d', 2],
      ['f', 7],
    ]);
  });

  it('tempralm: relevance + α · τ, τ = 1/(t_q − t_d) standardised and put on the relevance scale (worked by hand)', () => {
    // τ (days⁻¹): a 8, b 24 (1 h is the floor), c 1, d 0.5, f 1/7, g 1/21; mean 5.615, std 8.680.
    // relevance: mean 0.8458, std 0.1004. With α = 1: b 1.909 − 0.846, d 1.737 − 0.846, … (the paper's
    // order: b, d, g, c, f, a), each score the relevance plus 0.1004 · z(τ).
    const ranked = rankTempralm(corpus, TQ, 6, 1);
    expect(ranked.map((r) => r.candidate.id)).toEqual(['b', 'd', 'g', 'c', 'f', 'a']);
    expect(ranked[0]!.score).toBeCloseTo(1.9085 - 0.8458, 3);
    expect(ranked[0]!.temporal).toBeCloseTo(1.0585 - 0.8458, 3);
    expect(ranked[0]!.relevance).toBe(0.85);
    expect(ranked.at(-1)!.score).toBeCloseTo(1.5234 - 0.8458, 3);
    // α weighs time against relevance: 0 is relevance alone, a small α lets recency break near-ties,
    // a large one puts the most recent first whatever their relevance.
    expect(rankTempralm(corpus, TQ, 6, 0).map((r) => r.candidate.id)).toEqual(['d', 'g', 'c', 'b', 'f', 'a']);
    expect(rankTempralm(corpus, TQ, 6, 0.2).map((r) => r.candidate.id)).toEqual(['d', 'g', 'b', 'c', 'f', 'a']);
    expect(rankTempralm(corpus, TQ, 3, 50).map((r) => r.candidate.id)).toEqual(['b', 'a', 'c']);
  });

  it('tempralm: a document from after t_q scores −∞ (dropped) unless the future is asked for', () => {
    const future = [...corpus, { id: 'e', score: 0.975, published_at: TQ + DAY_MS }];
    expect(rankTempralm(future, TQ, 10, 1).map((r) => r.candidate.id)).not.toContain('e');
    expect(rankTempralm(future, TQ, 10, 1, true).map((r) => r.candidate.id)).toContain('e');
    expect(rankTempralm([], TQ, 3, 1)).toEqual([]);
  });

  it('filters: as of t_q by default, and META before / after / around an anchor', () => {
    expect(timeFilter(request())).toEqual({ to: TQ });
    expect(timeFilter(request({ includeFuture: true }))).toEqual({});
    const anchor = TQ - 10 * DAY_MS;
    expect(timeFilter(request({ constraint: 'before', constraintAt: anchor }))).toEqual({ to: anchor });
    expect(timeFilter(request({ constraint: 'after', constraintAt: anchor }))).toEqual({ from: anchor, to: TQ });
    expect(timeFilter(request({ constraint: 'around', constraintAt: anchor, windowDays: 2 }))).toEqual({
      from: anchor - 2 * DAY_MS,
      to: anchor + 2 * DAY_MS,
    });
    // Around a date close to t_q: still never past t_q.
    expect(timeFilter(request({ constraint: 'around', constraintAt: TQ, windowDays: 2 }))).toEqual({
      from: TQ - 2 * DAY_MS,
      to: TQ,
    });
    // A window the question names narrows the constraint, and never reaches past t_q.
    const march = { from: Date.UTC(2023, 2, 1), to: Date.UTC(2023, 3, 1) - 1 };
    expect(timeFilter(request({ window: march }))).toEqual(march);
    expect(timeFilter(request({ window: { from: TQ - DAY_MS, to: TQ + DAY_MS } }))).toEqual({
      from: TQ - DAY_MS,
      to: TQ,
    });
    expect(timeFilter(request({ constraint: 'before', constraintAt: Date.UTC(2023, 2, 15), window: march }))).toEqual({
      from: march.from,
      to: Date.UTC(2023, 2, 15),
    });
  });
});

describe('at most n results of one article', () => {
  // Ranked best first: article A's three overlapping windows lead, B and C follow.
  const ranked = [
    { id: 'a1', article: 'A' },
    { id: 'a2', article: 'A' },
    { id: 'a3', article: 'A' },
    { id: 'b1', article: 'B' },
    { id: 'a4', article: 'A' },
    { id: 'c1', article: 'C' },
    { id: 'x', article: undefined },
  ];
  const ids = (perArticle: number, k: number) =>
    capPerArticle(ranked, (r) => r.article, perArticle, k).map((r) => r.id);

  it('gives the places past the cap to the next articles, in ranking order', () => {
    expect(ids(1, 4)).toEqual(['a1', 'b1', 'c1', 'x']);
    expect(ids(2, 4)).toEqual(['a1', 'a2', 'b1', 'c1']);
  });

  it('is the plain top k without a cap', () => {
    expect(ids(0, 4)).toEqual(['a1', 'a2', 'a3', 'b1']);
  });

  it('never returns fewer than k when only the cap stands in the way', () => {
    expect(ids(1, 6)).toEqual(['a1', 'a2', 'a3', 'b1', 'c1', 'x']);
    expect(ids(1, 10)).toHaveLength(ranked.length);
  });
});

describe('recency: the latest matching document', () => {
  // Reports of a yearly final and of first-round matches, over three years, as of TQ.
  const year = 365 * DAY_MS;
  const reports: WordedCandidate[] = [
    { id: 'final-2021', score: 0.9, published_at: TQ - 2 * year, words: 'Osaka wins the women’s final' },
    { id: 'final-2022', score: 0.92, published_at: TQ - year, words: 'Barty wins the women’s final' },
    { id: 'round-2022', score: 0.8, published_at: TQ - year - 10 * DAY_MS, words: 'Women’s first round upsets' },
    { id: 'final-2023', score: 0.88, published_at: TQ - 20 * DAY_MS, words: 'Sabalenka wins the women’s final' },
    { id: 'round-2023', score: 0.85, published_at: TQ - 2 * DAY_MS, words: 'The women’s first round begins' },
    { id: 'final-2024', score: 0.95, published_at: TQ + 300 * DAY_MS, words: 'Sabalenka wins the women’s final again' },
  ];

  it('puts the most recent report of the asked-for event first, not a later report of another', () => {
    const ranked = rankLatest(reports, 'Who won the women’s final?', TQ, 6);
    expect(ranked.map((r) => r.candidate.id)).toEqual([
      'final-2023',
      'final-2022',
      'final-2021',
      'round-2023',
      'round-2022',
    ]);
    expect(rankLatest(reports, 'women’s first round', TQ, 2).map((r) => r.candidate.id)).toEqual([
      'round-2023',
      'round-2022',
    ]);
    // Nothing after t_q, unless asked for.
    expect(rankLatest(reports, 'the women’s final', TQ, 1, true).map((r) => r.candidate.id)).toEqual(['final-2024']);
    expect(rankLatest([], 'anything', TQ, 3)).toEqual([]);
  });

  it('with no content words to match, is newest first', () => {
    expect(rankLatest(reports, 'What is the latest?', TQ, 2).map((r) => r.candidate.id)).toEqual([
      'round-2023',
      'final-2023',
    ]);
  });
});

describe('fusing dense and lexical rankings', () => {
  const dense = [
    { id: 'a', score: 0.9 },
    { id: 'b', score: 0.8 },
    { id: 'c', score: 0.7 },
  ];
  const lexical = [
    { id: 'c', score: 12 },
    { id: 'd', score: 6 },
  ];

  it('rrf: the sum of 1 / (60 + rank) over the lists a document is in', () => {
    const fused = fuseRankings(dense, lexical, { mode: 'rrf' });
    expect(fused.get('a')!.relevance).toBeCloseTo(1 / 61, 10);
    expect(fused.get('c')!.relevance).toBeCloseTo(1 / 63 + 1 / 61, 10);
    expect(fused.get('d')).toEqual({ relevance: 1 / 62, lexical: 6 });
    expect(fused.get('c')).toMatchObject({ dense: 0.7, lexical: 12 });
    const order = [...fused.entries()].sort((x, y) => y[1].relevance - x[1].relevance).map(([id]) => id);
    // b (second of the dense list) and d (second of the lexical one) tie at 1/62.
    expect(order).toEqual(['c', 'a', 'b', 'd']);
    expect(fused.get('b')!.relevance).toBe(fused.get('d')!.relevance);
  });

  it('rrf with the answer-sentence ranking: a third opinion on the same documents, bringing none of its own', () => {
    const sentences = [
      { id: 'd', score: 1.4 },
      { id: 'c', score: 0.9 },
      { id: 'x', score: 2 },
    ];
    const fused = fuseRankings(dense, lexical, { mode: 'rrf' }, sentences);
    // x is in neither list: it is not a candidate, and takes no rank from d and c.
    expect(fused.has('x')).toBe(false);
    expect(fused.get('d')).toEqual({ relevance: 1 / 62 + 1 / 61, lexical: 6, sentence: 1.4 });
    expect(fused.get('c')!.relevance).toBeCloseTo(1 / 63 + 1 / 61 + 1 / 62, 10);
    expect(fused.get('a')).toEqual({ relevance: 1 / 61, dense: 0.9 });
    const order = [...fused.entries()].sort((x, y) => y[1].relevance - x[1].relevance).map(([id]) => id);
    expect(order).toEqual(['c', 'd', 'a', 'b']);
    // Other modes leave it out.
    expect(fuseRankings(dense, lexical, { mode: 'weighted' }, sentences).get('d')!.sentence).toBeUndefined();
    // Weighed twice, the reader's list adds 2 / (60 + rank) to the documents it ranks, nothing to the others.
    const weighed = fuseRankings(dense, lexical, { mode: 'rrf', sentenceWeight: 2 }, sentences);
    expect(weighed.get('d')!.relevance).toBeCloseTo(1 / 62 + 2 / 61, 10);
    expect(weighed.get('c')!.relevance).toBeCloseTo(1 / 63 + 1 / 61 + 2 / 62, 10);
    expect(weighed.get('a')!.relevance).toBeCloseTo(1 / 61, 10);
  });

  it('weighted: min–max dense and BM25 over the best BM25, mixed by the lexical weight', () => {
    const fused = fuseRankings(dense, lexical, { mode: 'weighted', lexicalWeight: 0.25 });
    expect(fused.get('a')!.relevance).toBeCloseTo(0.75, 10);
    expect(fused.get('b')!.relevance).toBeCloseTo(0.375, 10);
    expect(fused.get('c')!.relevance).toBeCloseTo(0.25, 10);
    expect(fused.get('d')!.relevance).toBeCloseTo(0.125, 10);
    expect(() => fuseRankings(dense, lexical, { mode: 'weighted', lexicalWeight: 2 })).toThrow(RangeError);
    // One dense hit alone has no spread to normalise: it counts fully.
    expect(
      fuseRankings([{ id: 'x', score: 0.6 }], [], { mode: 'weighted', lexicalWeight: 0 }).get('x')!.relevance,
    ).toBe(1);
  });

  it('dense or lexical alone', () => {
    expect([...fuseRankings(dense, lexical, { mode: 'dense' }).keys()]).toEqual(['a', 'b', 'c']);
    expect(fuseRankings(dense, lexical, { mode: 'lexical' }).get('c')).toEqual({ relevance: 12, lexical: 12 });
  });
});

describe('query reformulation', () => {
  const linker = new EntityLinker([
    { id: 'e-doja-cat', name: 'Doja Cat', aliases: ['Doja Cat', 'Doja'], mentions: 40 },
    { id: 'e-jared-leto', name: 'Jared Leto', aliases: ['Leto'], mentions: 12 },
    { id: 'e-leto-town', name: 'Leto', aliases: ['Leto'], mentions: 2 },
    { id: 'e-a', name: 'A', aliases: ['A'], mentions: 99 },
  ]);

  it('writes the query date out in words and links entities to their canonical names', () => {
    expect(spellDate(TQ)).toBe('August 31, 2023');
    const r = reformulate('doja news with leto', TQ, linker);
    expect(r.text).toBe('Doja Cat news with Jared Leto, August 31, 2023');
    expect(r.entities.map((e) => e.id)).toEqual(['e-doja-cat', 'e-jared-leto']);
    expect(reformulate("Doja Cat's new album", TQ, linker).entities.map((e) => e.id)).toEqual(['e-doja-cat']);
    expect(reformulate('what happened', TQ).text).toBe('what happened, August 31, 2023');
  });

  it('keeps the date out of the embedded text unless asked, and searches words for the aliases too', () => {
    const r = reformulate('doja news last week', TQ, linker, { topic: 'doja news' });
    expect(r.embedded).toBe('Doja Cat news');
    expect(r.lexical).toBe('Doja Cat news doja');
    expect(reformulate('doja news', TQ, linker, { dateInText: true }).embedded).toBe('Doja Cat news, August 31, 2023');
  });

  it('searches content words alone when asked, and still hands the answer-sentence reader every word', () => {
    const r = reformulate('who did doja meet in the studio last week', TQ, linker, {
      topic: 'who did doja meet in the studio',
      lexicalWords: 'content',
    });
    expect(r.lexical).toBe('doja cat meet studio doja');
    expect(r.asked).toBe('who did Doja Cat meet in the studio doja');
    // An acronym is a name, whatever function word its lower case spells.
    expect(
      reformulate('How many tests can US households order?', TQ, linker, { lexicalWords: 'content' }).lexical,
    ).toBe('tests us households order');
    expect(reformulate('What did the WHO say about it?', TQ, linker, { lexicalWords: 'content' }).lexical).toBe('who');
    expect(reformulate('who did doja meet', TQ, linker).lexical).toBe(
      reformulate('who did doja meet', TQ, linker).asked,
    );
  });
});

describe('search requests', () => {
  it('reads answer_sentences as a boolean or its text, true unless turned off', () => {
    const read = (input: Record<string, unknown>) => {
      const parsed = parseSearchRequest({ q: 'Who won?', ...input }, 0);
      if (!parsed.ok) throw new Error(parsed.problems.join('; '));
      return parsed.request.answerSentences;
    };
    expect(read({})).toBe(true);
    expect(read({ answer_sentences: 'false' })).toBe(false);
    expect(read({ answer_sentences: false })).toBe(false);
    expect(parseSearchRequest({ q: 'Who won?', answer_sentences: 'no' }, 0).ok).toBe(false);
  });

  it('fills defaults and reads a bare date as the end of that day', () => {
    const parsed = parseSearchRequest({ q: ' Doja Cat ', date: '2023-08-31' }, 0);
    expect(parsed).toEqual({
      ok: true,
      request: {
        q: 'Doja Cat',
        tq: Date.UTC(2023, 7, 31, 23, 59, 59, 999),
        k: 10,
        strategy: DEFAULT_STRATEGY,
        store: DEFAULT_STORE,
        constraint: 'none',
        constraintAt: Date.UTC(2023, 7, 31, 23, 59, 59, 999),
        windowDays: 7,
        alpha: DEFAULT_ALPHA,
        includeFuture: false,
        hops: 1,
        fusion: DEFAULT_FUSION,
        answerSentences: true,
        perArticle: DEFAULT_PER_ARTICLE,
        timeWords: true,
        explicit: { constraint: false },
      },
    });
    expect(parseSearchRequest({ q: 'x' }, 42)).toMatchObject({ ok: true, request: { tq: 42 } });
  });

  it('bounds k, the question, the window and the dates, listing every problem', () => {
    const parsed = parseSearchRequest(
      { q: '', k: 5000, window_days: -1, date: '2023-13-45', strategy: 'psychic', per_article: -1, extra: 1 },
      0,
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const fields = parsed.problems.map((p) => p.split(':')[0]);
    expect(fields).toEqual(expect.arrayContaining(['q', 'k', 'window_days', 'date', 'strategy', 'per_article']));
    expect(parsed.problems.join('\n')).toMatch(/extra/);
    expect(parseSearchRequest({ q: 'x'.repeat(513) }, 0).ok).toBe(false);
  });
});

describe('what is embedded for an interaction', () => {
  const tuple = {
    id: 'i1',
    t: Date.UTC(2025, 0, 20, 15),
    subject_id: 'e-greenland',
    subject_name: 'Greenland',
    object_id: null,
    object_name: null,
    text: 'Greenland holds an election',
    title: '',
    variant: 'M1' as const,
    chunk_ids: ['c1'],
    article_ids: ['a1'],
    urls: [],
    model: 'test',
    extracted_at: 0,
  };

  it('is its text, with the date written in only when asked (NEON’s entry form)', () => {
    expect(interactionEmbeddingText(tuple)).toBe('Greenland holds an election');
    expect(interactionEmbeddingText(tuple, { dateInText: true })).toBe('2025-01-20: Greenland holds an election');
  });
});

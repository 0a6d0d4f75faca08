import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  rankGeneric,
  rankTempralm,
  rankTemporal,
  timeFilter,
  type Candidate,
} from '../../processors/query/rank-candidates.js';
import { EntityLinker, reformulate, spellDate } from '../../processors/query/reformulate-query.js';
import { parseSearchRequest, type SearchRequest } from '../../processors/query/search-request.js';

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

  it('tempralm: semantic score + α/(t_q − t_d), normalised to the semantic scores (worked by hand)', () => {
    // τ (days⁻¹): a 8, b 24 (1 h is the floor), c 1, d 0.5, f 1/7, g 1/21; mean 5.615, std 8.680.
    // semantic: mean 0.8458, std 0.1004. Final: b 1.909, d 1.737, g 1.706, c 1.692, f 1.583, a 1.523.
    const ranked = rankTempralm(corpus, TQ, 6, 1);
    expect(ranked.map((r) => r.candidate.id)).toEqual(['b', 'd', 'g', 'c', 'f', 'a']);
    expect(ranked[0]!.score).toBeCloseTo(1.9085, 3);
    expect(ranked[0]!.temporal).toBeCloseTo(1.0585, 3);
    expect(ranked.at(-1)!.score).toBeCloseTo(1.5234, 3);
    // A larger α changes nothing after normalisation; the order is scale-free in τ.
    expect(rankTempralm(corpus, TQ, 6, 50).map((r) => r.candidate.id)).toEqual(ranked.map((r) => r.candidate.id));
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
});

describe('search requests', () => {
  it('fills defaults and reads a bare date as the end of that day', () => {
    const parsed = parseSearchRequest({ q: ' Doja Cat ', date: '2023-08-31' }, 0);
    expect(parsed).toEqual({
      ok: true,
      request: {
        q: 'Doja Cat',
        tq: Date.UTC(2023, 7, 31, 23, 59, 59, 999),
        k: 10,
        strategy: 'tempralm',
        store: 'interactions',
        constraint: 'none',
        constraintAt: Date.UTC(2023, 7, 31, 23, 59, 59, 999),
        windowDays: 7,
        alpha: 1,
        includeFuture: false,
        hops: 1,
      },
    });
    expect(parseSearchRequest({ q: 'x' }, 42)).toMatchObject({ ok: true, request: { tq: 42 } });
  });

  it('bounds k, the question, the window and the dates, listing every problem', () => {
    const parsed = parseSearchRequest(
      { q: '', k: 5000, window_days: -1, date: '2023-13-45', strategy: 'psychic', extra: 1 },
      0,
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const fields = parsed.problems.map((p) => p.split(':')[0]);
    expect(fields).toEqual(expect.arrayContaining(['q', 'k', 'window_days', 'date', 'strategy']));
    expect(parsed.problems.join('\n')).toMatch(/extra/);
    expect(parseSearchRequest({ q: 'x'.repeat(513) }, 0).ok).toBe(false);
  });
});

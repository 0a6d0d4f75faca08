import { describe, expect, it } from 'vitest';
import {
  bootstrapMeanInterval,
  mcnemarExactP,
  pairedComparison,
  seededRandom,
  wilsonInterval,
} from '../../devkit/interval-statistics.js';

describe('wilsonInterval', () => {
  it('matches the textbook values', () => {
    const half = wilsonInterval(5, 10);
    expect(half.low).toBeCloseTo(0.2366, 4);
    expect(half.high).toBeCloseTo(0.7634, 4);
    const none = wilsonInterval(0, 10);
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.2775, 4);
    const all = wilsonInterval(20, 20);
    expect(all.high).toBe(1);
    expect(all.low).toBeCloseTo(0.8389, 4);
  });

  it('narrows as n grows, around the same proportion', () => {
    const small = wilsonInterval(30, 100);
    const large = wilsonInterval(300, 1000);
    expect(large.high - large.low).toBeLessThan(small.high - small.low);
    expect(large.low).toBeLessThan(0.3);
    expect(large.high).toBeGreaterThan(0.3);
  });

  it('says nothing is known without questions, and refuses impossible counts', () => {
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
    expect(() => wilsonInterval(11, 10)).toThrow(RangeError);
  });
});

describe('mcnemarExactP', () => {
  it('is the two-sided binomial tail of the discordant questions', () => {
    expect(mcnemarExactP(0, 10)).toBeCloseTo(2 / 1024, 10);
    expect(mcnemarExactP(1, 9)).toBeCloseTo((2 * 11) / 1024, 10);
    expect(mcnemarExactP(9, 1)).toBeCloseTo((2 * 11) / 1024, 10);
    expect(mcnemarExactP(3, 3)).toBe(1);
    expect(mcnemarExactP(0, 0)).toBe(1);
  });

  it('stays finite for many discordant questions', () => {
    const p = mcnemarExactP(400, 600);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1e-8);
  });
});

describe('pairedComparison', () => {
  it('counts discordant questions and finds a consistent gain', () => {
    // B answers 12 questions A misses, A answers 2 that B misses, 86 alike.
    const a = [...Array<number>(2).fill(1), ...Array<number>(12).fill(0), ...Array<number>(86).fill(1)];
    const b = [...Array<number>(2).fill(0), ...Array<number>(12).fill(1), ...Array<number>(86).fill(1)];
    const c = pairedComparison(a, b);
    expect(c.n).toBe(100);
    expect(c.difference).toBeCloseTo(0.1, 10);
    expect(c.onlyA).toBe(2);
    expect(c.onlyB).toBe(12);
    expect(c.mcnemarP).toBeCloseTo(mcnemarExactP(2, 12), 12);
    expect(c.mcnemarP!).toBeLessThan(0.05);
    expect(c.interval.low).toBeGreaterThan(0);
    expect(c.interval.high).toBeLessThan(0.2);
  });

  it('gives an interval around zero when the two agree on every question', () => {
    const scores = [1, 0, 1, 1, 0, 0, 1];
    expect(pairedComparison(scores, scores)).toMatchObject({
      difference: 0,
      interval: { low: 0, high: 0 },
      onlyA: 0,
      onlyB: 0,
      mcnemarP: 1,
    });
  });

  it('compares non-binary scores by bootstrap alone, the same on every run', () => {
    const a = [0.5, 1, 0, 0.25, 1, 0.333];
    const b = [1, 1, 0.5, 0.25, 1, 0.5];
    const first = pairedComparison(a, b);
    expect(first.mcnemarP).toBeUndefined();
    expect(first.difference).toBeCloseTo((0.5 + 0.5 + 0.167) / 6, 3);
    expect(pairedComparison(a, b)).toEqual(first);
    expect(first.interval.low).toBeGreaterThanOrEqual(0);
    expect(first.interval.high).toBeLessThanOrEqual(0.5);
  });

  it('refuses scores of different questions', () => {
    expect(() => pairedComparison([1], [1, 0])).toThrow(RangeError);
  });
});

describe('bootstrapMeanInterval and seededRandom', () => {
  it('brackets the mean, repeatably, and a constant has a point interval', () => {
    const values = Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? 2 : i % 4 === 1 ? 0 : 1));
    const interval = bootstrapMeanInterval(values);
    expect(interval.low).toBeLessThan(1);
    expect(interval.high).toBeGreaterThan(1);
    expect(interval.high - interval.low).toBeLessThan(0.3);
    expect(bootstrapMeanInterval(values)).toEqual(interval);
    expect(bootstrapMeanInterval([1, 1, 1])).toEqual({ low: 1, high: 1 });
  });

  it('draws uniformly in [0, 1) from a seed', () => {
    const random = seededRandom(42);
    const draws = Array.from({ length: 10_000 }, random);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    expect(draws.reduce((s, x) => s + x, 0) / draws.length).toBeCloseTo(0.5, 1);
    expect(seededRandom(42)()).toBe(draws[0]);
    expect(seededRandom(43)()).not.toBe(draws[0]);
  });
});

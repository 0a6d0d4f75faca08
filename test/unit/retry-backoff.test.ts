import { describe, expect, it } from 'vitest';
import {
  backoffCeiling,
  fullJitterDelay,
  parseRetryAfter,
  parseRetryAfterMs,
  relativeJitter,
  retryAfterFromHeaders,
  retryDelay,
} from '../../processors/retry/backoff.js';

const policy = { baseMs: 100, capMs: 10_000 };

describe('backoffCeiling', () => {
  it('doubles from the base and stops at the cap', () => {
    expect([1, 2, 3, 4, 7, 8, 9].map((n) => backoffCeiling(n, policy))).toEqual([
      100, 200, 400, 800, 6400, 10_000, 10_000,
    ]);
  });

  it('reads attempts below 1 as the first, and stays finite for huge attempts and a zero base', () => {
    expect(backoffCeiling(0, policy)).toBe(100);
    expect(backoffCeiling(-3, policy)).toBe(100);
    expect(backoffCeiling(5000, policy)).toBe(10_000);
    expect(backoffCeiling(5000, { baseMs: 0, capMs: 10_000 })).toBe(0);
    expect(backoffCeiling(5000, { baseMs: 1, capMs: Number.POSITIVE_INFINITY })).toBe(2 ** 30);
  });
});

describe('fullJitterDelay', () => {
  it('spans [0, ceiling) as random spans [0, 1)', () => {
    expect(fullJitterDelay(4, policy, () => 0)).toBe(0);
    expect(fullJitterDelay(4, policy, () => 0.5)).toBe(400);
    expect(fullJitterDelay(4, policy, () => 0.999)).toBeCloseTo(799.2);
  });

  it('stays within bounds for every attempt with the real random source', () => {
    for (let attempt = 1; attempt <= 40; attempt++) {
      for (let draw = 0; draw < 50; draw++) {
        const delay = fullJitterDelay(attempt, policy);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(backoffCeiling(attempt, policy));
      }
    }
  });
});

describe('relativeJitter', () => {
  it('moves a delay by at most the fraction either way', () => {
    expect(relativeJitter(1000, 0.1, () => 0)).toBe(900);
    expect(relativeJitter(1000, 0.1, () => 0.5)).toBe(1000);
    expect(relativeJitter(1000, 0.1, () => 1)).toBe(1100);
    expect(relativeJitter(1000, 0, () => 0.9)).toBe(1000);
  });
});

describe('retryDelay', () => {
  it('takes the server’s wait over the jitter, capped', () => {
    expect(retryDelay(1, policy, () => 0.5, 3000)).toBe(3000);
    expect(retryDelay(1, policy, () => 0.5, 0)).toBe(0);
    expect(retryDelay(1, policy, () => 0.5, 60_000)).toBe(10_000);
    expect(retryDelay(3, policy, () => 0.5)).toBe(200);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2024, 0, 1);
  it.each([
    ['120', 120_000],
    ['0', 0],
    [' 7 ', 7000],
    ['1.5', 1500],
    ['Mon, 01 Jan 2024 00:01:00 GMT', 60_000],
    ['Monday, 01-Jan-24 00:00:30 GMT', 30_000],
    ['Sun, 31 Dec 2023 00:00:00 GMT', 0],
    ['soon', undefined],
    ['-5', undefined],
    ['1e3', undefined],
    ['0x10', undefined],
    ['', undefined],
    ['   ', undefined],
    [null, undefined],
    [undefined, undefined],
  ])('reads %j as %s ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it('measures a date against the given clock', () => {
    const date = 'Mon, 01 Jan 2024 00:01:00 GMT';
    expect(parseRetryAfter(date, now + 45_000)).toBe(15_000);
    expect(parseRetryAfter(date, now + 120_000)).toBe(0);
  });

  it('caps both forms', () => {
    expect(parseRetryAfter('3600', now, 30_000)).toBe(30_000);
    expect(parseRetryAfter('Tue, 02 Jan 2024 00:00:00 GMT', now, 30_000)).toBe(30_000);
    expect(parseRetryAfter('10', now, 30_000)).toBe(10_000);
  });
});

describe('parseRetryAfterMs and retryAfterFromHeaders', () => {
  const now = Date.UTC(2024, 0, 1);

  it('reads retry-after-ms as milliseconds', () => {
    expect(parseRetryAfterMs('250')).toBe(250);
    expect(parseRetryAfterMs('12.5')).toBe(12.5);
    expect(parseRetryAfterMs('5000', 1000)).toBe(1000);
    expect(parseRetryAfterMs('-1')).toBeUndefined();
    expect(parseRetryAfterMs('later')).toBeUndefined();
    expect(parseRetryAfterMs(null)).toBeUndefined();
  });

  it('prefers retry-after-ms, falls back to retry-after, and caps', () => {
    const headers = (entries: Record<string, string>) => new Headers(entries);
    expect(retryAfterFromHeaders(headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
    expect(retryAfterFromHeaders(headers({ 'retry-after-ms': 'x', 'retry-after': '9' }), now)).toBe(9000);
    expect(retryAfterFromHeaders(headers({ 'retry-after': 'Mon, 01 Jan 2024 00:00:02 GMT' }), now)).toBe(2000);
    expect(retryAfterFromHeaders(headers({ 'retry-after': '90' }), now, 30_000)).toBe(30_000);
    expect(retryAfterFromHeaders(headers({}), now)).toBeUndefined();
    expect(retryAfterFromHeaders(undefined, now)).toBeUndefined();
  });
});

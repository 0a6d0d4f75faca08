import { describe, expect, it } from 'vitest';
import {
  datastoreNames,
  monthIndexExpressions,
  monthlyIndex,
} from '../../streams/elasticsearch/datastore-templates.js';

const names = datastoreNames('interactions', 'neon');

/** Elasticsearch's reading of an index expression: a name, or a name prefix ending in `*`. */
function matches(expression: string, index: string): boolean {
  return expression.endsWith('*') ? index.startsWith(expression.slice(0, -1)) : expression === index;
}

/** The monthly indices a search near year `year` could meet: the decades around it and the extremes. */
function monthsAround(year: number): number[] {
  const years = new Set<number>([1000, 1001, 9998, 9999]);
  for (let y = Math.max(1000, year - 40); y <= Math.min(9999, year + 5); y++) years.add(y);
  return [...years].flatMap((y) => Array.from({ length: 12 }, (_, m) => Date.UTC(y, m, 1)));
}

describe('monthIndexExpressions', () => {
  it('names a short range month by month, exactly', () => {
    const from = Date.UTC(2024, 10, 20, 5);
    const to = Date.UTC(2025, 1, 3, 12);
    expect(monthIndexExpressions(names, from, to)).toEqual([
      'neon-interactions-2024.11',
      'neon-interactions-2024.12',
      'neon-interactions-2025.01',
      'neon-interactions-2025.02',
    ]);
    expect(monthIndexExpressions(names, to - 1000, to)).toEqual(['neon-interactions-2025.02']);
  });

  it('covers every month up to the upper bound and none after it, for ranges open to the past', () => {
    let seed = 11;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const uppers = [Date.UTC(2024, 0, 1), Date.UTC(2000, 11, 31, 23), Date.UTC(1999, 0, 15), Date.UTC(2099, 5, 1)];
    for (let i = 0; i < 40; i++)
      uppers.push(Date.UTC(1000 + Math.floor(random() * 9000), Math.floor(random() * 12), 9));
    for (const to of uppers) {
      for (const from of [-Infinity, to - 5 * 365 * 86_400_000]) {
        const expressions = monthIndexExpressions(names, from, to);
        expect(expressions, new Date(to).toISOString()).toBeDefined();
        const last = Date.UTC(new Date(to).getUTCFullYear(), new Date(to).getUTCMonth(), 1);
        const first = Number.isFinite(from)
          ? Date.UTC(new Date(from).getUTCFullYear(), new Date(from).getUTCMonth(), 1)
          : -Infinity;
        // Nothing after `to`'s month; everything from `from`'s month (or the first) to it.
        const wrong = monthsAround(new Date(to).getUTCFullYear()).filter((month) => {
          const hit = expressions!.some((e) => matches(e, monthlyIndex(names, month)));
          return month > last ? hit : month >= first && !hit;
        });
        expect(wrong.map((month) => new Date(month).toISOString().slice(0, 7))).toEqual([]);
        // Short enough for a request line: at most 12 months and 35 year patterns.
        expect(expressions!.length).toBeLessThanOrEqual(47);
      }
    }
  });

  it('leaves ranges open to the future, reversed or out of four-digit years to the alias', () => {
    expect(monthIndexExpressions(names, Date.UTC(2024, 0, 1), Infinity)).toBeUndefined();
    expect(monthIndexExpressions(names, -Infinity, Infinity)).toBeUndefined();
    expect(monthIndexExpressions(names, Date.UTC(2024, 5, 1), Date.UTC(2024, 0, 1))).toBeUndefined();
    expect(monthIndexExpressions(names, -Infinity, Date.UTC(10_000, 0, 1))).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import {
  baselineBefore,
  bucketStart,
  DAY_MS,
  NEON_DAY_RULE,
  evaluateRule,
  HOUR_MS,
  rollingSum,
  spikeRuleSchema,
} from '../../processors/spikes/spike-rule.js';

const D = Date.UTC(2025, 0, 10);
const day = (i: number): number => D + i * DAY_MS;

function counts(...perDay: [number, number][]): Map<number, number> {
  return new Map(perDay.map(([i, c]) => [day(i), c]));
}

describe('spike rule', () => {
  it('buckets by UTC day and hour', () => {
    expect(bucketStart(D + 5 * HOUR_MS + 17, 'DAY')).toBe(D);
    expect(bucketStart(D + 5 * HOUR_MS + 17, 'HOUR')).toBe(D + 5 * HOUR_MS);
  });

  it('sums the last three buckets, the current one included', () => {
    const c = counts([0, 1], [1, 2], [2, 4], [3, 8]);
    expect(rollingSum(c, day(3), NEON_DAY_RULE, 'DAY')).toBe(14);
    expect(rollingSum(c, day(2), NEON_DAY_RULE, 'DAY')).toBe(7);
    expect(rollingSum(c, day(9), NEON_DAY_RULE, 'DAY')).toBe(0);
  });

  it('takes the baseline over earlier rolling sums only, and only those the detector saw whole', () => {
    // Rolling sums ending on days 2..5: 3, 3, 3, 3 (one a day); day 6 is the one judged.
    const c = counts([0, 1], [1, 1], [2, 1], [3, 1], [4, 1], [5, 1], [6, 9]);
    const baseline = baselineBefore(c, day(6), day(0), NEON_DAY_RULE, 'DAY');
    expect(baseline).toEqual({ mean: 3, std: 0, buckets: 4 });
    // Counting began on day 3: only the sum ending on day 5 is whole.
    expect(baselineBefore(c, day(6), day(3) + 7 * HOUR_MS, NEON_DAY_RULE, 'DAY').buckets).toBe(1);
  });

  it('computes the population mean and std of the rolling sums', () => {
    const c = counts([0, 2], [1, 0], [2, 0], [3, 4], [4, 0]);
    // Sums ending on days 2, 3, 4: 2, 4, 4 → mean 10/3, std sqrt(8/9).
    const baseline = baselineBefore(c, day(5), day(0), NEON_DAY_RULE, 'DAY');
    expect(baseline.buckets).toBe(3);
    expect(baseline.mean).toBeCloseTo(10 / 3, 12);
    expect(baseline.std).toBeCloseTo(Math.sqrt(8 / 9), 12);
  });

  it('fires on mean + k·std with the std floored, the minimum count and enough history', () => {
    const flat = counts([0, 1], [1, 1], [2, 1], [3, 1], [4, 1], [5, 1]);
    // Baseline 3 ± 0, floored to 1: the threshold is 4; day 6 adds to the window [4, 5, 6].
    const atThreshold = new Map(flat).set(day(6), 2);
    expect(evaluateRule(atThreshold, day(6), day(0), NEON_DAY_RULE, 'DAY')).toMatchObject({
      observed: 4,
      threshold: 4,
      spike: false,
    });
    const above = new Map(flat).set(day(6), 3);
    const verdict = evaluateRule(above, day(6), day(0), NEON_DAY_RULE, 'DAY');
    expect(verdict).toMatchObject({ observed: 5, threshold: 4, score: 2, spike: true });
    // Two days of history are not a baseline.
    expect(evaluateRule(above, day(6), day(3), NEON_DAY_RULE, 'DAY').spike).toBe(false);
    // A quiet entity whose window holds fewer than minObserved chunks never fires.
    const quiet = counts([6, 2]);
    expect(evaluateRule(quiet, day(6), day(0), NEON_DAY_RULE, 'DAY')).toMatchObject({ observed: 2, spike: false });
    expect(evaluateRule(counts([6, 3]), day(6), day(0), NEON_DAY_RULE, 'DAY').spike).toBe(true);
  });

  it('validates rules and lists every problem', () => {
    const result = spikeRuleSchema.safeParse({ ...NEON_DAY_RULE, rollingBuckets: 0, minBaselineBuckets: 99 });
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((i) => i.path.join('.'));
    expect(paths).toContain('rollingBuckets');
  });
});

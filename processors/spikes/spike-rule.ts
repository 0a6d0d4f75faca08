import { z } from 'zod';

/**
 * The spike rule, per granularity. The default for days is NEON's (§3.1): the rolling sum of the
 * last `rollingBuckets` daily counts is a spike when it exceeds the mean plus `stdMultiplier`
 * standard deviations of the same rolling sum over the trailing `baselineBuckets` buckets — a
 * baseline computed online, from the counts the detector keeps, never from the future.
 */
export type Granularity = 'DAY' | 'HOUR';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

export const BUCKET_MS: Readonly<Record<Granularity, number>> = { DAY: DAY_MS, HOUR: HOUR_MS };

export const spikeRuleSchema = z
  .object({
    /** m: buckets summed into the observed window (NEON: 3 days). */
    rollingBuckets: z.number().int().min(1).max(48),
    /** W: trailing rolling sums the mean and std are taken over. */
    baselineBuckets: z
      .number()
      .int()
      .min(2)
      .max(24 * 60),
    /** No alert until this many baseline sums exist (the stream must have run that long). */
    minBaselineBuckets: z.number().int().min(1),
    /** k in mean + k·std (NEON: 1). */
    stdMultiplier: z.number().min(0).max(20),
    /** Floor on the std, so a flat or empty history does not make every mention a spike. */
    minStd: z.number().min(0),
    /** The observed rolling sum must reach this many unique chunks. */
    minObserved: z.number().int().min(1),
    /** How long after a bucket ends mentions for it are still counted (event time). */
    allowedLatenessMs: z
      .number()
      .int()
      .min(0)
      .max(30 * DAY_MS),
  })
  .refine((rule) => rule.minBaselineBuckets <= rule.baselineBuckets, {
    message: 'minBaselineBuckets must not exceed baselineBuckets',
    path: ['minBaselineBuckets'],
  });

export type SpikeRule = z.infer<typeof spikeRuleSchema>;

/** NEON's rule: 3-day rolling sum above mean + 1 std of the previous 28 rolling sums. */
export const DEFAULT_DAY_RULE: SpikeRule = {
  rollingBuckets: 3,
  baselineBuckets: 28,
  minBaselineBuckets: 3,
  stdMultiplier: 1,
  minStd: 1,
  minObserved: 3,
  allowedLatenessMs: DAY_MS,
};

/**
 * Up-to-the-hour alerting: hourly counts are sparse and bursty, so one std would flag noise; three
 * std over the last week, at least five chunks in three hours.
 */
export const DEFAULT_HOUR_RULE: SpikeRule = {
  rollingBuckets: 3,
  baselineBuckets: 7 * 24,
  minBaselineBuckets: 24,
  stdMultiplier: 3,
  minStd: 1,
  minObserved: 5,
  allowedLatenessMs: 2 * HOUR_MS,
};

export function bucketStart(t: number, granularity: Granularity): number {
  const size = BUCKET_MS[granularity];
  return Math.floor(t / size) * size;
}

export function describeRule(rule: SpikeRule, granularity: Granularity): string {
  const unit = granularity === 'DAY' ? 'day' : 'hour';
  return (
    `${rule.rollingBuckets}-${unit} rolling sum > mean + ${rule.stdMultiplier} std ` +
    `of the previous ${rule.baselineBuckets} (at least ${rule.minObserved})`
  );
}

/** Sum of the counts of the `rollingBuckets` buckets ending with `bucket` (inclusive). */
export function rollingSum(
  counts: ReadonlyMap<number, number>,
  bucket: number,
  rule: SpikeRule,
  granularity: Granularity,
): number {
  const size = BUCKET_MS[granularity];
  let sum = 0;
  for (let i = 0; i < rule.rollingBuckets; i++) sum += counts.get(bucket - i * size) ?? 0;
  return sum;
}

export interface Baseline {
  mean: number;
  std: number;
  /** How many rolling sums the mean and std were taken over. */
  buckets: number;
}

/**
 * Mean and (population) std of the rolling sums of the `baselineBuckets` buckets before `bucket`.
 * Only sums whose whole window lies after `countingSince` take part: before it the detector was not
 * counting, and an unknown count is not a zero.
 */
export function baselineBefore(
  counts: ReadonlyMap<number, number>,
  bucket: number,
  countingSince: number,
  rule: SpikeRule,
  granularity: Granularity,
): Baseline {
  const size = BUCKET_MS[granularity];
  const m = rule.rollingBuckets;
  const firstKnown = bucketStart(countingSince, granularity);
  // One pass over the W + m − 1 buckets before `bucket`, oldest first, with a sliding window sum:
  // O(W + m) map reads instead of O(W · m).
  const span = rule.baselineBuckets + m - 1;
  const oldest = Math.max(bucket - span * size, firstKnown);
  let n = 0;
  let sum = 0;
  let sumSquares = 0;
  let window = 0;
  const recent: number[] = [];
  for (let b = oldest; b < bucket; b += size) {
    const count = counts.get(b) ?? 0;
    recent.push(count);
    window += count;
    if (recent.length > m) window -= recent.shift()!;
    if (recent.length === m) {
      n += 1;
      sum += window;
      sumSquares += window * window;
    }
  }
  if (n === 0) return { mean: 0, std: 0, buckets: 0 };
  const mean = sum / n;
  const variance = Math.max(0, sumSquares / n - mean * mean);
  return { mean, std: Math.sqrt(variance), buckets: n };
}

export interface RuleVerdict {
  observed: number;
  baseline: Baseline;
  threshold: number;
  /** (observed − mean) / max(std, minStd): finite by construction. */
  score: number;
  spike: boolean;
}

export function evaluateRule(
  counts: ReadonlyMap<number, number>,
  bucket: number,
  countingSince: number,
  rule: SpikeRule,
  granularity: Granularity,
): RuleVerdict {
  const observed = rollingSum(counts, bucket, rule, granularity);
  const baseline = baselineBefore(counts, bucket, countingSince, rule, granularity);
  const deviation = Math.max(baseline.std, rule.minStd);
  const threshold = baseline.mean + rule.stdMultiplier * deviation;
  const score = deviation > 0 ? (observed - baseline.mean) / deviation : 0;
  const spike = baseline.buckets >= rule.minBaselineBuckets && observed >= rule.minObserved && observed > threshold;
  return { observed, baseline, threshold, score, spike };
}

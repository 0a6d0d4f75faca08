import { z } from 'zod';

/**
 * The spike rule, per granularity, by one of two methods:
 *
 * - `surprise` (the default): the articles mentioning the entity in the current bucket (or the
 *   last `rollingBuckets`, whichever is more surprising) against a count model with a smoothed,
 *   volume-relative baseline and a prior shared across entities (`count-model.ts`); a spike when
 *   the significance (−log10 of the tail probability) reaches `minSignificance`, over until it
 *   falls below `endSignificance`.
 * - `neon`: NEON's rule (§3.1), kept to pick evaluation dates: the rolling sum of the last
 *   `rollingBuckets` counts of unique chunks is a spike when it exceeds the mean plus
 *   `stdMultiplier` standard deviations of the same rolling sum over the trailing
 *   `baselineBuckets` buckets.
 *
 * Both baselines are computed online, from the counts the detector keeps, never from the future.
 */
export type Granularity = 'DAY' | 'HOUR';

export const SPIKE_METHODS = ['surprise', 'neon'] as const;
export type SpikeMethod = (typeof SPIKE_METHODS)[number];

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

export const BUCKET_MS: Readonly<Record<Granularity, number>> = { DAY: DAY_MS, HOUR: HOUR_MS };

export const spikeRuleSchema = z
  .object({
    method: z.enum(SPIKE_METHODS),
    /** m: buckets summed into the observed window (NEON: 3 days; surprise: the longest window tried). */
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
    /** surprise: significance (−log10 p) at which an episode starts. */
    minSignificance: z.number().min(0).max(300),
    /** surprise: an open episode goes on while its significance stays at or above this. */
    endSignificance: z.number().min(0).max(300),
    /** surprise: the judged window must hold this many distinct articles. */
    minArticles: z.number().int().min(1),
    /** surprise: φ, the overdispersion of coverage from one window to the next (the prior, when estimated per entity). */
    overdispersion: z.number().min(0).max(10),
    /**
     * surprise: how much the prior φ weighs against the entity's own history when φ is estimated
     * per entity (`count-model.ts`, ownOverdispersion); null: φ is `overdispersion` for everyone.
     */
    overdispersionPriorWeight: z.number().min(0).max(1e6).nullable(),
    /** surprise: articles of history at which an entity's own baseline weighs as much as the newcomer prior. */
    historyHalfWeight: z.number().min(0.1).max(1000),
    /**
     * surprise: how far a bucket's feed volume is believed where it departs from the usual: its
     * ratio to the usual volume is shrunk towards 1 as by this many pseudo-mentions (a Gamma(k, k)
     * prior on the bucket's multiplier, whose coefficient of variation is 1/√k); 0 takes the
     * volume as counted.
     */
    volumePrior: z.number().min(0).max(1e6),
    /** surprise: buckets without a mention after which an entity's next count is a newcomer's. */
    silenceBuckets: z.number().int().min(1),
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
  })
  .refine((rule) => rule.endSignificance <= rule.minSignificance, {
    message: 'endSignificance must not exceed minSignificance',
    path: ['endSignificance'],
  })
  .refine((rule) => rule.silenceBuckets < rule.baselineBuckets, {
    message: 'silenceBuckets must be shorter than the baseline',
    path: ['silenceBuckets'],
  });

export type SpikeRule = z.infer<typeof spikeRuleSchema>;

/** The count model's settings that NEON's rule ignores, at their defaults (see DEFAULT_DAY_RULE). */
const SURPRISE_DAY_SETTINGS = {
  minSignificance: 0.5,
  endSignificance: 0.3,
  minArticles: 3,
  overdispersion: 0.2,
  overdispersionPriorWeight: 25 as number | null,
  historyHalfWeight: 5,
  silenceBuckets: 7,
  volumePrior: 10,
};

/** NEON's rule: 3-day rolling sum above mean + 1 std of the previous 28 rolling sums. */
export const NEON_DAY_RULE: SpikeRule = {
  method: 'neon',
  ...SURPRISE_DAY_SETTINGS,
  rollingBuckets: 3,
  baselineBuckets: 28,
  minBaselineBuckets: 3,
  stdMultiplier: 1,
  minStd: 1,
  minObserved: 3,
  allowedLatenessMs: DAY_MS,
};

/**
 * The default by day: today's articles (or the last three days', whichever is more surprising)
 * against the count model, baseline over the previous 28 days, at least 3 articles. The bar, 0.5
 * after the correction for trying two windows, is a raw p < 0.16 on the better one: as permissive
 * as NEON's one standard deviation, so weak bursts are candidates too. What keeps a busy day's list
 * short is the desk's ranking and budget, not the bar. Three baseline days before any alert. φ is
 * each entity's own, from its past days and 3-day sums, shrunk towards a prior of 0.2 ± 0.2: over
 * 28 days an entity at 3 articles a day weighs its own φ about 85%, one at 1 a day about 25%, a
 * name seen now and then keeps the prior. A day's volume is read against the usual one through a
 * prior worth 10 mentions (`volumePrior`): the news of a day varies by about a third
 * (1/√10) more than counting alone would make it, so a partition that sees a few dozen mentions a
 * day does not take a chance surplus for a busy day, while a feed of thousands is read as counted.
 */
export const DEFAULT_DAY_RULE: SpikeRule = {
  ...NEON_DAY_RULE,
  method: 'surprise',
};

const SURPRISE_HOUR_SETTINGS = {
  minSignificance: 2,
  endSignificance: 1,
  minArticles: 3,
  overdispersion: 0.3,
  overdispersionPriorWeight: null as number | null,
  historyHalfWeight: 5,
  silenceBuckets: 48,
  volumePrior: 10,
};

/**
 * NEON's rule by the hour: hourly counts are sparse and bursty, so one std would flag noise; three
 * std over the last week, at least five chunks in three hours.
 */
export const NEON_HOUR_RULE: SpikeRule = {
  method: 'neon',
  ...SURPRISE_HOUR_SETTINGS,
  rollingBuckets: 3,
  baselineBuckets: 7 * 24,
  minBaselineBuckets: 24,
  stdMultiplier: 3,
  minStd: 1,
  minObserved: 5,
  allowedLatenessMs: 2 * HOUR_MS,
};

/**
 * Up-to-the-hour alerting by default: the hour's articles (or the last three hours') at p < 0.01
 * against the count model over the last week, with hour-of-day seasonality through the feed's
 * volume; at least 3 articles. Stricter than by day: an hour's alert is pushed at once. φ stays
 * the same for every entity by the hour: the evaluation data has no time of day to measure an
 * entity's own hourly spread against.
 */
export const DEFAULT_HOUR_RULE: SpikeRule = {
  ...NEON_HOUR_RULE,
  method: 'surprise',
};

export function bucketStart(t: number, granularity: Granularity): number {
  const size = BUCKET_MS[granularity];
  return Math.floor(t / size) * size;
}

export function describeRule(rule: SpikeRule, granularity: Granularity): string {
  const unit = granularity === 'DAY' ? 'day' : 'hour';
  if (rule.method === 'surprise') {
    const windows = rule.rollingBuckets > 1 ? ` (or the last ${rule.rollingBuckets})` : '';
    return (
      `articles this ${unit}${windows} at p < 10^-${rule.minSignificance} against the entity's ` +
      `volume-relative baseline of the previous ${rule.baselineBuckets} (at least ${rule.minArticles})`
    );
  }
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

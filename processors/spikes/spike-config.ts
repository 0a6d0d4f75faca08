import { z } from 'zod';
import type { SpikeDetectorOptions } from './detect-spikes.js';
import { DEFAULT_ALERT_BUDGET, type AlertBudget } from './alert-desk.js';
import {
  DEFAULT_DAY_RULE,
  DEFAULT_HOUR_RULE,
  HOUR_MS,
  NEON_DAY_RULE,
  NEON_HOUR_RULE,
  SPIKE_METHODS,
  spikeRuleSchema,
  type SpikeRule,
} from './spike-rule.js';

/**
 * The detector's rules from the environment, each with the default of `spike-rule.ts`:
 *
 *   NEON_SPIKE_RULES=day,hour              which rules run
 *   NEON_SPIKE_METHOD=surprise|neon        the count model (default) or NEON's rolling-sum rule;
 *                                          NEON_SPIKE_<DAY|HOUR>_METHOD for one granularity
 *   NEON_SPIKE_<DAY|HOUR>_SIGNIFICANCE     surprise: −log10 p at which an episode starts
 *   NEON_SPIKE_<DAY|HOUR>_END_SIGNIFICANCE surprise: −log10 p below which it ends
 *   NEON_SPIKE_<DAY|HOUR>_MIN_ARTICLES     surprise: minimum distinct articles in the window
 *   NEON_SPIKE_<DAY|HOUR>_OVERDISPERSION   surprise: φ of the negative binomial (the prior, when per entity)
 *   NEON_SPIKE_<DAY|HOUR>_OVERDISPERSION_PRIOR_WEIGHT
 *                                          surprise: how much that prior weighs against an entity's
 *                                          own history (Σμ² units), or `fixed`: one φ for everyone
 *   NEON_SPIKE_<DAY|HOUR>_VOLUME_PRIOR     surprise: pseudo-mentions a bucket's volume is read through
 *                                          (its departure from the usual shrunk towards it); 0: as counted
 *   NEON_SPIKE_<DAY|HOUR>_STD              k in mean + k·std
 *   NEON_SPIKE_<DAY|HOUR>_MIN              minimum chunks in the rolling window
 *   NEON_SPIKE_<DAY|HOUR>_WINDOW           buckets in the rolling window (NEON: 3 days)
 *   NEON_SPIKE_<DAY|HOUR>_BASELINE         trailing rolling sums in the baseline
 *   NEON_SPIKE_<DAY|HOUR>_LATENESS_HOURS   how late (event time) a mention may still be counted
 *
 * Every problem is reported at once.
 */
const number = z.coerce.number().refine(Number.isFinite, 'must be a number');

/** A prior weight, or `fixed` (null: no per-entity φ). */
const priorWeight = z.union([z.literal('fixed').transform(() => null), number]);

const envSchema = z.object({
  NEON_SPIKE_RULES: z
    .string()
    .default('day,hour')
    .transform((value) => value.split(',').map((r) => r.trim().toLowerCase()))
    .pipe(z.array(z.enum(['day', 'hour'])).min(1, 'at least one of day, hour')),
  NEON_SPIKE_METHOD: z.enum(SPIKE_METHODS).optional(),
  NEON_SPIKE_DAY_METHOD: z.enum(SPIKE_METHODS).optional(),
  NEON_SPIKE_HOUR_METHOD: z.enum(SPIKE_METHODS).optional(),
  NEON_SPIKE_DAY_SIGNIFICANCE: number.optional(),
  NEON_SPIKE_DAY_END_SIGNIFICANCE: number.optional(),
  NEON_SPIKE_DAY_MIN_ARTICLES: number.optional(),
  NEON_SPIKE_DAY_OVERDISPERSION: number.optional(),
  NEON_SPIKE_DAY_OVERDISPERSION_PRIOR_WEIGHT: priorWeight.optional(),
  NEON_SPIKE_DAY_VOLUME_PRIOR: number.optional(),
  NEON_SPIKE_HOUR_SIGNIFICANCE: number.optional(),
  NEON_SPIKE_HOUR_END_SIGNIFICANCE: number.optional(),
  NEON_SPIKE_HOUR_MIN_ARTICLES: number.optional(),
  NEON_SPIKE_HOUR_OVERDISPERSION: number.optional(),
  NEON_SPIKE_HOUR_OVERDISPERSION_PRIOR_WEIGHT: priorWeight.optional(),
  NEON_SPIKE_HOUR_VOLUME_PRIOR: number.optional(),
  NEON_SPIKE_DAY_STD: number.optional(),
  NEON_SPIKE_DAY_MIN: number.optional(),
  NEON_SPIKE_DAY_WINDOW: number.optional(),
  NEON_SPIKE_DAY_BASELINE: number.optional(),
  NEON_SPIKE_DAY_LATENESS_HOURS: number.optional(),
  NEON_SPIKE_HOUR_STD: number.optional(),
  NEON_SPIKE_HOUR_MIN: number.optional(),
  NEON_SPIKE_HOUR_WINDOW: number.optional(),
  NEON_SPIKE_HOUR_BASELINE: number.optional(),
  NEON_SPIKE_HOUR_LATENESS_HOURS: number.optional(),
});

export type SpikeConfig = Pick<SpikeDetectorOptions, 'day' | 'hour'>;

const budgetSchema = z.object({
  NEON_SPIKE_BUDGET_DAY: z.coerce.number().int().min(0).max(1000).optional(),
  NEON_SPIKE_BUDGET_HOUR: z.coerce.number().int().min(0).max(1000).optional(),
  NEON_SPIKE_BUDGET_SIGNIFICANCE: number.pipe(z.number().min(0).max(300)).optional(),
  NEON_SPIKE_BUDGET_PUSH_SIGNIFICANCE: number.pipe(z.number().min(0).max(300)).optional(),
});

/**
 * The alert budget from the environment, defaults from `alert-desk.ts`:
 *
 *   NEON_SPIKE_BUDGET_DAY           new stories delivered per day (10)
 *   NEON_SPIKE_BUDGET_HOUR          new stories of hourly alerts delivered per hour (3)
 *   NEON_SPIKE_BUDGET_SIGNIFICANCE  significance a story needs to be listed in a digest (0.5)
 *   NEON_SPIKE_BUDGET_PUSH_SIGNIFICANCE  significance a story needs to be pushed (2)
 */
export function alertBudgetFromEnv(
  env: Record<string, string | undefined>,
): { ok: true; budget: AlertBudget } | { ok: false; problems: string[] } {
  const parsed = budgetSchema.safeParse(env);
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`) };
  }
  const e = parsed.data;
  return {
    ok: true,
    budget: {
      perDay: e.NEON_SPIKE_BUDGET_DAY ?? DEFAULT_ALERT_BUDGET.perDay,
      perHour: e.NEON_SPIKE_BUDGET_HOUR ?? DEFAULT_ALERT_BUDGET.perHour,
      minSignificance: e.NEON_SPIKE_BUDGET_SIGNIFICANCE ?? DEFAULT_ALERT_BUDGET.minSignificance,
      pushSignificance: e.NEON_SPIKE_BUDGET_PUSH_SIGNIFICANCE ?? DEFAULT_ALERT_BUDGET.pushSignificance,
    },
  };
}

export function spikeConfigFromEnv(
  env: Record<string, string | undefined>,
): { ok: true; config: SpikeConfig } | { ok: false; problems: string[] } {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`) };
  }
  const e = parsed.data;
  const problems: string[] = [];
  const rule = (prefix: 'DAY' | 'HOUR', surprise: SpikeRule, neon: SpikeRule): SpikeRule | null => {
    const get = (name: string): number | undefined =>
      e[`NEON_SPIKE_${prefix}_${name}` as keyof typeof e] as number | undefined;
    const weight = e[`NEON_SPIKE_${prefix}_OVERDISPERSION_PRIOR_WEIGHT`];
    const method = e[`NEON_SPIKE_${prefix}_METHOD`] ?? e.NEON_SPIKE_METHOD ?? 'surprise';
    const lateness = get('LATENESS_HOURS');
    const candidate = {
      ...(method === 'neon' ? neon : surprise),
      ...(get('SIGNIFICANCE') === undefined ? {} : { minSignificance: get('SIGNIFICANCE') }),
      ...(get('END_SIGNIFICANCE') === undefined ? {} : { endSignificance: get('END_SIGNIFICANCE') }),
      ...(get('MIN_ARTICLES') === undefined ? {} : { minArticles: get('MIN_ARTICLES') }),
      ...(get('OVERDISPERSION') === undefined ? {} : { overdispersion: get('OVERDISPERSION') }),
      ...(weight === undefined ? {} : { overdispersionPriorWeight: weight }),
      ...(get('VOLUME_PRIOR') === undefined ? {} : { volumePrior: get('VOLUME_PRIOR') }),
      ...(get('STD') === undefined ? {} : { stdMultiplier: get('STD') }),
      ...(get('MIN') === undefined ? {} : { minObserved: get('MIN') }),
      ...(get('WINDOW') === undefined ? {} : { rollingBuckets: get('WINDOW') }),
      ...(get('BASELINE') === undefined ? {} : { baselineBuckets: get('BASELINE') }),
      ...(lateness === undefined ? {} : { allowedLatenessMs: Math.round(lateness * HOUR_MS) }),
    };
    const checked = spikeRuleSchema.safeParse(candidate);
    if (!checked.success) {
      for (const issue of checked.error.issues)
        problems.push(`NEON_SPIKE_${prefix} rule: ${issue.path.join('.')}: ${issue.message}`);
      return null;
    }
    return checked.data;
  };
  const day = e.NEON_SPIKE_RULES.includes('day') ? rule('DAY', DEFAULT_DAY_RULE, NEON_DAY_RULE) : null;
  const hour = e.NEON_SPIKE_RULES.includes('hour') ? rule('HOUR', DEFAULT_HOUR_RULE, NEON_HOUR_RULE) : null;
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config: { day, hour } };
}

import { describe, expect, it } from 'vitest';
import { spikeConfigFromEnv } from '../../processors/spikes/spike-config.js';
import { DEFAULT_DAY_RULE, DEFAULT_HOUR_RULE, HOUR_MS } from '../../processors/spikes/spike-rule.js';

describe('spike configuration from the environment', () => {
  it('defaults to NEON’s day rule and the hourly rule', () => {
    expect(spikeConfigFromEnv({})).toEqual({ ok: true, config: { day: DEFAULT_DAY_RULE, hour: DEFAULT_HOUR_RULE } });
  });

  it('overrides thresholds, windows, minimum counts and lateness, and turns rules off', () => {
    const result = spikeConfigFromEnv({
      NEON_SPIKE_RULES: 'day',
      NEON_SPIKE_DAY_STD: '2',
      NEON_SPIKE_DAY_MIN: '10',
      NEON_SPIKE_DAY_BASELINE: '14',
      NEON_SPIKE_DAY_LATENESS_HOURS: '48',
    });
    expect(result).toEqual({
      ok: true,
      config: {
        day: {
          ...DEFAULT_DAY_RULE,
          stdMultiplier: 2,
          minObserved: 10,
          baselineBuckets: 14,
          allowedLatenessMs: 48 * HOUR_MS,
        },
        hour: null,
      },
    });
  });

  it("sets how much the prior φ weighs against an entity's own history, or one φ for everyone", () => {
    const weighed = spikeConfigFromEnv({ NEON_SPIKE_DAY_OVERDISPERSION_PRIOR_WEIGHT: '100' });
    expect(weighed).toMatchObject({ ok: true, config: { day: { overdispersionPriorWeight: 100 } } });
    const fixed = spikeConfigFromEnv({
      NEON_SPIKE_DAY_OVERDISPERSION_PRIOR_WEIGHT: 'fixed',
      NEON_SPIKE_DAY_OVERDISPERSION: '0.3',
    });
    expect(fixed).toMatchObject({
      ok: true,
      config: { day: { overdispersionPriorWeight: null, overdispersion: 0.3 } },
    });
    expect(DEFAULT_DAY_RULE.overdispersionPriorWeight).toBe(25);
    expect(spikeConfigFromEnv({ NEON_SPIKE_HOUR_OVERDISPERSION_PRIOR_WEIGHT: 'often' })).toMatchObject({ ok: false });
    expect(spikeConfigFromEnv({ NEON_SPIKE_DAY_OVERDISPERSION_PRIOR_WEIGHT: '-1' })).toMatchObject({ ok: false });
  });

  it("sets the pseudo-mentions a bucket's volume is read through, 0 for as counted", () => {
    expect(spikeConfigFromEnv({ NEON_SPIKE_DAY_VOLUME_PRIOR: '0' })).toMatchObject({
      ok: true,
      config: { day: { volumePrior: 0 }, hour: { volumePrior: 10 } },
    });
    expect(spikeConfigFromEnv({ NEON_SPIKE_HOUR_VOLUME_PRIOR: '-5' })).toMatchObject({ ok: false });
  });

  it('lists every problem at once', () => {
    const result = spikeConfigFromEnv({ NEON_SPIKE_DAY_WINDOW: '0', NEON_SPIKE_HOUR_STD: '-1' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(2);
    expect(result.problems.join('\n')).toMatch(/DAY rule: rollingBuckets/);
    expect(result.problems.join('\n')).toMatch(/HOUR rule: stdMultiplier/);
    expect(spikeConfigFromEnv({ NEON_SPIKE_RULES: 'weekly' })).toMatchObject({ ok: false });
  });
});

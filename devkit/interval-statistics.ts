/**
 * How noisy an evaluation figure is: 95% intervals for proportions and means, and paired
 * comparisons of two configurations asked the same questions. A few formulas, written out here
 * rather than pulled from a statistics package, so that each is visible next to its use.
 */

/** Two-sided 95% normal quantile. */
const Z95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

/**
 * Wilson score interval of a proportion (successes of n): unlike the normal approximation it stays
 * within [0, 1] and does not collapse to a point at 0 or n successes. n = 0 gives [0, 1].
 */
export function wilsonInterval(successes: number, n: number, z = Z95): Interval {
  if (n === 0) return { low: 0, high: 1 };
  if (successes < 0 || successes > n) throw new RangeError(`${successes} successes of ${n}`);
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At 0 or n successes the bound is exactly 0 or 1; rounding must not leave it a hair off.
  return {
    low: successes === 0 ? 0 : Math.max(0, centre - half),
    high: successes === n ? 1 : Math.min(1, centre + half),
  };
}

/** Mulberry32: a small seeded generator, so a bootstrap gives the same interval on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, v) => sum + v, 0) / values.length;
}

/** The value at quantile q of sorted values (linear interpolation between neighbours). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (at - below);
}

/** Percentile bootstrap 95% interval of a mean (for non-binary scores such as MRR or Likert ratings). */
export function bootstrapMeanInterval(values: readonly number[], resamples = 2_000, seed = 1): Interval {
  if (values.length === 0) return { low: 0, high: 0 };
  const random = seededRandom(seed);
  const means: number[] = [];
  for (let r = 0; r < resamples; r += 1) {
    let sum = 0;
    for (let i = 0; i < values.length; i += 1) sum += values[Math.floor(random() * values.length)]!;
    means.push(sum / values.length);
  }
  means.sort((a, b) => a - b);
  return { low: quantile(means, 0.025), high: quantile(means, 0.975) };
}

export interface PairedComparison {
  /** Questions both configurations were scored on. */
  n: number;
  /** Mean of B minus mean of A. */
  difference: number;
  /** Paired bootstrap 95% interval of the difference (questions resampled, both scores together). */
  interval: Interval;
  /**
   * Binary scores only: questions A got and B missed, and the reverse (the discordant pairs), and
   * the exact two-sided McNemar p-value computed from them.
   */
  onlyA?: number;
  onlyB?: number;
  mcnemarP?: number;
}

/**
 * B against A on the same questions (`a[i]` and `b[i]` are one question's scores). The interval
 * comes from resampling questions, so the two configurations' shared luck with a question cancels;
 * with 0/1 scores McNemar's exact test is added.
 */
export function pairedComparison(
  a: readonly number[],
  b: readonly number[],
  resamples = 2_000,
  seed = 1,
): PairedComparison {
  if (a.length !== b.length) throw new RangeError(`paired scores differ in length (${a.length} and ${b.length})`);
  const n = a.length;
  const differences = a.map((x, i) => b[i]! - x);
  const random = seededRandom(seed);
  const means: number[] = [];
  for (let r = 0; r < (n === 0 ? 0 : resamples); r += 1) {
    let sum = 0;
    for (let i = 0; i < n; i += 1) sum += differences[Math.floor(random() * n)]!;
    means.push(sum / n);
  }
  means.sort((x, y) => x - y);
  const comparison: PairedComparison = {
    n,
    difference: mean(differences),
    interval: n === 0 ? { low: 0, high: 0 } : { low: quantile(means, 0.025), high: quantile(means, 0.975) },
  };
  const binary = [...a, ...b].every((x) => x === 0 || x === 1);
  if (binary) {
    const onlyA = a.filter((x, i) => x === 1 && b[i] === 0).length;
    const onlyB = a.filter((x, i) => x === 0 && b[i] === 1).length;
    return { ...comparison, onlyA, onlyB, mcnemarP: mcnemarExactP(onlyA, onlyB) };
  }
  return comparison;
}

/**
 * Exact McNemar test: under no difference each discordant question is equally likely to favour
 * either side, so the smaller count is binomial(b + c, ½); two-sided p, at most 1.
 */
export function mcnemarExactP(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  // Sum of C(n, i) / 2^n for i ≤ k, in logarithms so that large n does not overflow.
  let logChoose = 0;
  let tail = 0;
  for (let i = 0; i <= k; i += 1) {
    if (i > 0) logChoose += Math.log(n - i + 1) - Math.log(i);
    tail += Math.exp(logChoose - n * Math.LN2);
  }
  return Math.min(1, 2 * tail);
}

/**
 * The count model behind spike significance: how surprising is an entity's coverage in a bucket (a
 * day, an hour) given what the feed said before? Pure arithmetic, no state.
 *
 * - **Exposure.** Counts are read against the feed's volume in the same bucket (every entity's
 *   article mentions, the entity's own left out; the detector keeps it per partition, a random
 *   share of the feed), so a busy day does not make every entity spike
 *   and weekday or hour-of-day seasonality comes with the volume itself. While a bucket is still
 *   filling, its volume is the larger of what has arrived and what the same weekday (hour of day)
 *   usually brings, shrunk towards the plain mean when few such buckets have been seen.
 * - **An entity with history** is judged by a negative binomial whose mean is its smoothed share
 *   of the volume over the trailing window times today's exposure, and whose shape carries both
 *   the uncertainty of a share estimated from few articles and the overdispersion φ of its
 *   coverage. φ is the entity's own, estimated from its past windows of the same length as the
 *   one judged (`ownOverdispersion`) and shrunk towards a prior φ by how much that history says:
 *   an entity covered steadily every day is judged close to Poisson, so a +50–100% day is news,
 *   one whose coverage has always come in bursts needs more, and one seen a few times keeps the
 *   prior.
 * - **An entity with little or none** is judged against how new names start in this feed: the
 *   shared prior is the feed's own distribution of the counts entities reach in the first bucket
 *   after a silence, smoothed towards a heavy default tail. A new name with three mentions is
 *   ordinary wherever new names often get three; a known entity whose coverage triples is not.
 * - Between the two, the tails are mixed with the weight of the entity's history, C / (C + c0).
 *
 * Significance is −log10 of the tail probability P(Y ≥ y | Y ≥ 1): the entity is being judged
 * because it was mentioned, so the probability is conditional on that.
 */

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9): 15 significant digits, enough for tail sums. */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  const z = x - 1;
  let sum = c[0]!;
  for (let i = 1; i < 9; i++) sum += c[i]! / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 500; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-12) break;
  }
  return h;
}

/** ln of the regularized incomplete beta I_x(a, b), accurate far into the tail. */
export function logRegularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return Number.NEGATIVE_INFINITY;
  if (x >= 1) return 0;
  const front = a * Math.log(x) + b * Math.log1p(-x) - (logGamma(a) + logGamma(b) - logGamma(a + b));
  if (x < (a + 1) / (a + b + 2)) return front + Math.log(betaContinuedFraction(a, b, x)) - Math.log(a);
  // The symmetric relation converges here: I_x(a, b) = 1 − I_{1−x}(b, a).
  const other = Math.exp(front + Math.log(betaContinuedFraction(b, a, 1 - x)) - Math.log(b));
  return Math.log1p(-Math.min(other, 1 - 1e-16));
}

/** ln P(Y ≥ y) for a negative binomial with this mean and shape (variance mean + mean²/shape). */
export function logNegativeBinomialTail(y: number, mean: number, shape: number): number {
  if (y <= 0) return 0;
  if (mean <= 0) return Number.NEGATIVE_INFINITY;
  // P(Y ≥ y) = I_q(y, r) with q = mean / (r + mean); y may be fractional (a volume-scaled count).
  return logRegularizedBeta(mean / (shape + mean), y, shape);
}

const LN10 = Math.LN10;

/** −log10 P(Y ≥ y | Y ≥ 1) under a negative binomial: the entity is judged because it was mentioned. */
export function negativeBinomialSurprise(y: number, mean: number, shape: number): number {
  if (y <= 1) return 0;
  const tail = logNegativeBinomialTail(y, mean, shape);
  const seen = logNegativeBinomialTail(1, mean, shape);
  return Math.max(0, -(tail - seen) / LN10);
}

/**
 * How many articles entities reach in the first bucket after a silence, in this feed: the shared
 * prior for names with no history. Smoothed with `priorWeight` pseudo-observations of a default
 * tail P(Y ≥ y) = y^−2 (a new name seldom gets many articles at once, but sometimes does), which
 * also carries the tail beyond the largest count observed.
 */
export class NewcomerTail {
  /** Observations with each count (index = articles, capped at the last slot). */
  private readonly histogram: number[];
  private total = 0;
  /** Mean feed volume of the buckets the observations come from (their counts are read against it). */
  private volume = 0;

  constructor(
    observations: Iterable<{ count: number; volume: number }> = [],
    private readonly priorWeight = 10,
    private readonly cap = 256,
  ) {
    this.histogram = new Array<number>(cap + 1).fill(0);
    let volumeSum = 0;
    for (const o of observations) {
      if (o.count < 1) continue;
      this.histogram[Math.min(Math.floor(o.count), cap)]! += 1;
      this.total += 1;
      volumeSum += o.volume;
    }
    this.volume = this.total > 0 ? volumeSum / this.total : 0;
    // Suffix sums: histogram[y] becomes the number of observations ≥ y.
    for (let y = cap - 1; y >= 1; y--) this.histogram[y]! += this.histogram[y + 1]!;
  }

  get observations(): number {
    return this.total;
  }

  get meanVolume(): number {
    return this.volume;
  }

  /** P(Y ≥ y) for a newcomer, y ≥ 1, fractional y interpolated on the log scale. */
  survival(y: number): number {
    if (y <= 1) return 1;
    const low = Math.floor(y);
    const high = low + 1;
    const at = (k: number): number => {
      const observed = k > this.cap ? 0 : (this.histogram[k] ?? 0);
      return (observed + this.priorWeight / (k * k)) / (this.total + this.priorWeight);
    };
    const fraction = y - low;
    if (fraction === 0) return at(low);
    return Math.exp((1 - fraction) * Math.log(at(low)) + fraction * Math.log(at(high)));
  }
}

/** One past window of an entity's history: its articles, and what its share of the volume predicted. */
export interface PastWindow {
  observed: number;
  expected: number;
}

/**
 * φ from the entity's own history, shrunk towards the prior by how much that history can tell.
 * The moment estimator φ̂ = Σ[(y − μ)² − μ] / Σμ² over the entity's past windows has, for counts
 * near Poisson, variance Σ(μ + 2μ²) / (Σμ²)²: its inverse is the evidence, and the prior weighs
 * `priorWeight` in the same units (25: a prior of 0.2 ± 0.2). An entity covered every day (μ of a
 * few articles or more) gets its own φ within weeks; one seen now and then, whose windows are
 * mostly empty, keeps the prior. `overlap` is how many windows share each bucket (rolling sums of
 * w buckets: w), which divides the evidence.
 */
export function ownOverdispersion(
  history: readonly PastWindow[],
  prior: number,
  priorWeight: number,
  overlap = 1,
): number {
  let excess = 0;
  let squares = 0;
  let variance = 0;
  for (const { observed, expected } of history) {
    excess += (observed - expected) ** 2 - expected;
    squares += expected * expected;
    variance += expected + 2 * expected * expected;
  }
  if (squares <= 0 || variance <= 0) return prior;
  const evidence = (squares * squares) / variance / overlap;
  const estimate = excess / squares;
  return Math.max(0, (evidence * estimate + priorWeight * prior) / (evidence + priorWeight));
}

export interface SurpriseInput {
  /** Articles mentioning the entity in the window being judged. */
  observed: number;
  /** Feed volume (article mentions of all other entities) over the same window. */
  exposure: number;
  /** The entity's articles over its baseline window. */
  historyCount: number;
  /** Feed volume over the baseline window's buckets the detector observed. */
  historyExposure: number;
  /** Mean feed volume of one observed bucket (the pseudo-exposure of the smoothing). */
  bucketVolume: number;
  /** Buckets in the window being judged. */
  windowBuckets: number;
}

export interface SurpriseParameters {
  /** φ: day-to-day overdispersion of coverage (variance μ + φμ² for a well-known share). */
  overdispersion: number;
  /** c0: articles of history at which the entity's own baseline and the newcomer prior weigh equally. */
  historyHalfWeight: number;
}

export interface Surprise {
  /** −log10 P(Y ≥ observed | Y ≥ 1) under the mixed null. */
  significance: number;
  /** Expected articles in the window under the entity's own baseline. */
  expected: number;
  /** Standard deviation of the predictive count. */
  std: number;
  /** Weight of the entity's own history in the null, 0 … 1. */
  historyWeight: number;
}

/**
 * The entity's smoothed share of the feed's volume: half an article of pseudo-count over one
 * bucket's volume keeps a mean above 0.
 */
export function baselineShare(historyCount: number, historyExposure: number, bucketVolume: number): number {
  return (historyCount + 0.5) / (historyExposure + Math.max(bucketVolume, 1));
}

/** The surprise of one window's count (see the module comment). */
export function surpriseOf(input: SurpriseInput, newcomers: NewcomerTail, p: SurpriseParameters): Surprise {
  const { observed, exposure, historyCount: c, historyExposure: e, bucketVolume } = input;
  const share = baselineShare(c, e, bucketVolume);
  const expected = Math.max(share * exposure, 1e-9);
  const shape = 1 / (1 / (c + 0.5) + p.overdispersion);
  const weight = c / (c + p.historyHalfWeight);
  // The own baseline's tail is unconditional: conditioning on a mention would halve the evidence of
  // every entity mentioned about once a bucket. The newcomer tail is conditional by construction.
  const own = observed <= 0 ? 1 : Math.exp(logNegativeBinomialTail(observed, expected, shape));
  // Newcomers are read at the volume their distribution was learnt at: a busier bucket gives every
  // new name more articles, so its count is scaled down (never up: a quiet bucket is no excuse).
  const scale =
    newcomers.meanVolume > 0 && exposure > 0 ? Math.min(1, (newcomers.meanVolume * input.windowBuckets) / exposure) : 1;
  const fresh = newcomers.survival(Math.max(1, observed * scale));
  const tail = weight * own + (1 - weight) * fresh;
  return {
    significance: tail > 0 ? -Math.log10(tail) : 300,
    expected,
    std: Math.sqrt(expected + (expected * expected) / shape),
    historyWeight: weight,
  };
}

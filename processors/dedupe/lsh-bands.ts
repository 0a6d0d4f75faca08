/**
 * LSH banding of MinHash signatures: the k = b·r slots are cut into b bands of r rows; two chunks
 * become candidates when all r rows of at least one band agree. For a pair with Jaccard s that
 * happens with probability P(s) = 1 − (1 − s^r)^b, the "S-curve".
 *
 * Default plan for the threshold 0.5 (see {@link chooseBandPlan}): r = 3 rows, b = 30 bands, k = 90.
 *   P(0.5) = 1 − (7/8)^30 = 0.982   (a pair exactly at the threshold is found 98.2 % of the time;
 *                                    pairs above it more often: P(0.6) = 0.9993, P(0.7) = 1 − 3.4e-6)
 *   P(0.2) = 0.214, P(0.1) = 0.030, P(0.05) = 0.0037 (false candidates, removed by the exact check)
 * r = 2 would need only b = 14 (k = 28) but makes 13 % of pairs at s = 0.1 candidates, and news
 * chunks share boilerplate trigrams often enough for that to dominate; r = 4 needs b = 61 (k = 244)
 * and costs 2.7× the hashing (P(0.2) = 0.093) for false candidates that the exact check drops
 * cheaply anyway.
 */
import { hash3 } from './trigram-shingles.js';
import { isEmptySignature } from './minhash.js';

export interface BandPlan {
  bands: number;
  rows: number;
}

export interface BandPlanTargets {
  /** Smallest acceptable P(threshold). */
  minRecall: number;
  /** Similarity regarded as unrelated text, as a fraction of the threshold. */
  noiseFraction: number;
  /** Largest acceptable P(noiseFraction · threshold). */
  maxNoiseProbability: number;
  /** Upper bound on b·r. */
  maxHashes: number;
}

export const DEFAULT_BAND_PLAN_TARGETS: BandPlanTargets = {
  minRecall: 0.98,
  noiseFraction: 0.2,
  maxNoiseProbability: 0.05,
  maxHashes: 1024,
};

const TWO_POW_32 = 0x100000000;

/** P(s) = 1 − (1 − s^r)^b: the probability that a pair with Jaccard s shares at least one band. */
export function candidateProbability(similarity: number, plan: BandPlan): number {
  return 1 - (1 - similarity ** plan.rows) ** plan.bands;
}

/** The fewest bands with P(threshold) ≥ minRecall at r rows. */
export function bandsNeeded(threshold: number, rows: number, minRecall: number): number {
  const perBand = threshold ** rows;
  if (perBand >= 1) return 1;
  return Math.max(1, Math.ceil(Math.log(1 - minRecall) / Math.log(1 - perBand)));
}

/**
 * The cheapest plan (fewest rows, hence fewest hashes for the recall) that finds pairs at the
 * threshold with probability ≥ minRecall and keeps text at noiseFraction × threshold a candidate
 * with probability ≤ maxNoiseProbability. For 0.5 and the default targets: 30 bands × 3 rows.
 */
export function chooseBandPlan(threshold: number, targets: Partial<BandPlanTargets> = {}): BandPlan {
  const t = { ...DEFAULT_BAND_PLAN_TARGETS, ...targets };
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError(`threshold must be in (0, 1], got ${threshold}`);
  let fallback: BandPlan | undefined;
  for (let rows = 1; rows <= t.maxHashes; rows++) {
    const bands = bandsNeeded(threshold, rows, t.minRecall);
    if (bands * rows > t.maxHashes) break;
    const plan = { bands, rows };
    fallback = plan;
    if (candidateProbability(threshold * t.noiseFraction, plan) <= t.maxNoiseProbability) return plan;
  }
  if (fallback === undefined) {
    throw new RangeError(`no plan reaches recall ${t.minRecall} at ${threshold} within ${t.maxHashes} hashes`);
  }
  // The noise target cannot be met within maxHashes: recall matters more, take the most selective plan.
  return fallback;
}

/**
 * One key per band: band·2^32 + a 32-bit hash of the band's r slots, a number below 2^53 so maps key
 * on it without building strings. Two chunks share a key only in the same band. An empty set's
 * signature yields no keys (every empty set would otherwise collide with every other).
 */
export function bandKeys(signature: Uint32Array, plan: BandPlan): Float64Array {
  const { bands, rows } = plan;
  if (signature.length < bands * rows) {
    throw new RangeError(`signature has ${signature.length} slots, plan needs ${bands * rows}`);
  }
  if (isEmptySignature(signature)) return new Float64Array(0);
  const keys = new Float64Array(bands);
  for (let band = 0; band < bands; band++) {
    let h = band;
    const base = band * rows;
    for (let row = 0; row < rows; row++) h = hash3(h, signature[base + row]!, row);
    keys[band] = band * TWO_POW_32 + h;
  }
  return keys;
}

/** `${band}:${hash}`, the readable form of a band key (logs, state dumps). */
export function bandKeyLabel(key: number): string {
  const band = Math.floor(key / TWO_POW_32);
  return `${band}:${(key - band * TWO_POW_32).toString(16).padStart(8, '0')}`;
}

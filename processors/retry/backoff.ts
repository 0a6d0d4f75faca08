/**
 * How long to wait before trying again: exponential backoff with full jitter, relative jitter for
 * schedules, and the server's Retry-After. Pure (randomness and the clock are passed in), so every
 * caller — stage runtime, sinks, model clients, webhooks, the feed poller — shares one formula and
 * tests can pin it.
 *
 * Attempts count from 1: the wait after the first failure is drawn under `baseMs`, each later one
 * under twice the previous ceiling, never above `capMs`.
 */

export interface BackoffPolicy {
  /** Ceiling of the wait after the first failure. */
  baseMs: number;
  /** No wait is longer, Retry-After included. */
  capMs: number;
}

/**
 * Doublings stop here: base · 2^30 is past any cap in use (a millisecond base reaches 12 days), and
 * a bounded exponent keeps 0 · 2^n from turning into NaN.
 */
const MAX_DOUBLINGS = 30;

/** The deterministic ceiling for attempt n: min(cap, base · 2^(n-1)). */
export function backoffCeiling(attempt: number, policy: BackoffPolicy): number {
  const doublings = Math.min(Math.max(0, attempt - 1), MAX_DOUBLINGS);
  return Math.min(policy.capMs, policy.baseMs * 2 ** doublings);
}

/**
 * Full jitter (AWS architecture blog, "Exponential Backoff and Jitter"): a uniform wait in
 * [0, ceiling), so clients that failed together do not come back together. `random` returns [0, 1).
 */
export function fullJitterDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  return random() * backoffCeiling(attempt, policy);
}

/** `ms` moved by up to ±fraction of itself: spreads periodic schedules (feed polls) apart. */
export function relativeJitter(ms: number, fraction: number, random: () => number = Math.random): number {
  return ms * (1 + fraction * (2 * random() - 1));
}

/** The wait before attempt n+1: the server's Retry-After when it gave one, else full jitter; never above the cap. */
export function retryDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
  retryAfterMs?: number,
): number {
  return Math.min(policy.capMs, retryAfterMs ?? fullJitterDelay(attempt, policy, random));
}

const DELTA_SECONDS = /^\d+(?:\.\d+)?$/;

/**
 * Retry-After (RFC 9110 §10.2.3) in ms from `nowMs`: delta-seconds (fractions accepted, as some
 * servers send them) or an HTTP-date, a past date reading as 0; at most `capMs`. Undefined when
 * absent or unreadable — a negative number or one in another notation is unreadable, not a date
 * (Date.parse would read "-5" as a year).
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number,
  capMs = Number.POSITIVE_INFINITY,
): number | undefined {
  const trimmed = value?.trim() ?? '';
  if (trimmed === '') return undefined;
  if (DELTA_SECONDS.test(trimmed)) return Math.min(capMs, Number(trimmed) * 1000);
  // Every HTTP-date names its month; a value without letters is a malformed number.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.min(capMs, Math.max(0, date - nowMs));
}

/** `retry-after-ms` (OpenAI and compatible servers): a non-negative number of milliseconds. */
export function parseRetryAfterMs(
  value: string | null | undefined,
  capMs = Number.POSITIVE_INFINITY,
): number | undefined {
  const trimmed = value?.trim() ?? '';
  return DELTA_SECONDS.test(trimmed) ? Math.min(capMs, Number(trimmed)) : undefined;
}

/** The headers a fetch Response or an API error carries. */
export interface HeaderLookup {
  get(name: string): string | null | undefined;
}

/** The server's wait from its headers: `retry-after-ms` when present and readable, else `retry-after`. */
export function retryAfterFromHeaders(
  headers: HeaderLookup | undefined,
  nowMs: number,
  capMs = Number.POSITIVE_INFINITY,
): number | undefined {
  if (headers === undefined) return undefined;
  return (
    parseRetryAfterMs(headers.get('retry-after-ms'), capMs) ?? parseRetryAfter(headers.get('retry-after'), nowMs, capMs)
  );
}

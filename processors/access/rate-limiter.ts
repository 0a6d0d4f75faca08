/**
 * Per-client token buckets: `perMinute` requests a minute on average, bursts up to `burst`. Clients
 * are API keys (or addresses when no keys are configured). Memory is bounded: idle full buckets are
 * dropped, and at most `maxClients` are tracked (the least recently seen go first).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
    private readonly maxClients = 10_000,
  ) {}

  /** The milliseconds until `client` has a token (0: it has one now), without taking it. */
  waitMs(client: string): number {
    const bucket = this.buckets.get(client);
    if (bucket === undefined) return 0;
    const rate = this.perMinute / 60_000;
    const tokens = Math.min(this.burst, bucket.tokens + (this.now() - bucket.at) * rate);
    return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / rate);
  }

  /** Takes one token; returns 0 when allowed, otherwise the milliseconds until one is free. */
  take(client: string): number {
    const now = this.now();
    const rate = this.perMinute / 60_000;
    const bucket = this.buckets.get(client) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.at) * rate);
    bucket.at = now;
    // Re-insert: the map's order is then least recently seen first.
    this.buckets.delete(client);
    this.buckets.set(client, bucket);
    if (this.buckets.size > this.maxClients) this.buckets.delete(this.buckets.keys().next().value!);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) / rate);
  }
}

/** `perMinute` requests a minute, in bursts of a sixth of that: the shape of every API limiter. */
export function perMinuteLimiter(perMinute: number): RateLimiter {
  return new RateLimiter(perMinute, Math.max(1, Math.ceil(perMinute / 6)));
}

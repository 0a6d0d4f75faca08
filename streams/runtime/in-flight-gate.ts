/**
 * The bound on in-flight work of one consumer. The transport asks `admit` before handing over each
 * record; at the bound the consumer's partitions are paused and `admit` waits (heartbeating) until
 * enough work completes, so nothing piles up in an unbounded buffer. Resuming waits for the count to
 * fall to `resumeBelow`, so a consumer at the limit does not flap between pause and resume.
 */
export class InFlightGate {
  private count = 0;
  private maxObserved = 0;
  private paused = false;
  private closed = false;
  private waiters: (() => void)[] = [];

  constructor(
    readonly limit: number,
    private readonly resumeBelow: number,
    private readonly hooks: { pause(): void; resume(): void; onChange?(inFlight: number): void },
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error('in-flight limit must be a positive integer');
    if (resumeBelow < 0 || resumeBelow >= limit) throw new Error('resumeBelow must be in [0, limit)');
  }

  /** Resolves true once the record may enter, false if the gate closed meanwhile. */
  async admit(heartbeat: () => Promise<void>, heartbeatEveryMs = 1000): Promise<boolean> {
    while (!this.closed && this.count >= this.limit) {
      if (!this.paused) {
        this.paused = true;
        this.hooks.pause();
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, heartbeatEveryMs);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      // A heartbeat failure (the group is rebalancing) must reach the client so it can rejoin.
      // close() may have run while we waited.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
      if (!this.closed && this.count >= this.limit) await heartbeat();
    }
    if (this.closed) return false;
    this.count += 1;
    this.maxObserved = Math.max(this.maxObserved, this.count);
    this.hooks.onChange?.(this.count);
    return true;
  }

  release(): void {
    if (this.count === 0) throw new Error('in-flight gate released more often than admitted');
    this.count -= 1;
    this.hooks.onChange?.(this.count);
    if (this.paused && this.count <= this.resumeBelow) {
      this.paused = false;
      this.hooks.resume();
    }
    this.wake();
  }

  /** Lets every waiter return false; used when the stage stops. */
  close(): void {
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const wake of waiting) wake();
  }

  get inFlight(): number {
    return this.count;
  }

  /** Highest in-flight count ever reached — what the back-pressure tests check against the limit. */
  get maxInFlightObserved(): number {
    return this.maxObserved;
  }
}

import { ChatModelError } from './chat-model.js';

/**
 * A hold on budget for one completion: settled with the tokens each answer actually used (the hold
 * is released at the first), or cancelled when no answer came.
 */
export interface BudgetReservation {
  settle(tokensUsed: number): void;
  cancel(): void;
}

export interface TokenBudgetOptions {
  /** Injected in tests, so an hour passes without waiting for it. */
  now?: () => number;
  windowMs?: number;
  /** Resolution of the window; memory stays at this many counters whatever the call rate. */
  buckets?: number;
}

/**
 * An hourly token budget over a sliding window of spent prompt + completion tokens, kept in
 * per-minute buckets so its memory is bounded (tokens leave the window up to one bucket early).
 *
 * A completion first reserves its estimate; the check counts tokens spent in the window plus those
 * held by completions in flight, so concurrent callers cannot overshoot together. A request that
 * would exceed the budget fails at once with `llm_budget_exhausted` (retriable: the stage backs off
 * and the window frees). One whose estimate alone exceeds the whole budget can never run and is
 * refused as `llm_rejected`.
 */
export class TokenBudget {
  readonly #limit: number;
  readonly #now: () => number;
  readonly #bucketMs: number;
  readonly #buckets: number;
  /** Bucket index → tokens spent in it. */
  readonly #spent = new Map<number, number>();
  #reserved = 0;

  constructor(tokensPerWindow: number, options: TokenBudgetOptions = {}) {
    if (!Number.isInteger(tokensPerWindow) || tokensPerWindow < 1) {
      throw new RangeError('the token budget must be a positive integer');
    }
    this.#limit = tokensPerWindow;
    this.#now = options.now ?? Date.now;
    this.#buckets = options.buckets ?? 60;
    this.#bucketMs = (options.windowMs ?? 3_600_000) / this.#buckets;
  }

  get limit(): number {
    return this.#limit;
  }

  /** Tokens spent in the window plus those reserved by completions in flight. */
  used(): number {
    const current = Math.floor(this.#now() / this.#bucketMs);
    let spent = 0;
    for (const [bucket, tokens] of this.#spent) {
      if (bucket <= current - this.#buckets) this.#spent.delete(bucket);
      else spent += tokens;
    }
    return spent + this.#reserved;
  }

  remaining(): number {
    return Math.max(0, this.#limit - this.used());
  }

  reserve(estimate: number): BudgetReservation {
    const tokens = Math.max(0, Math.ceil(estimate));
    if (tokens > this.#limit) {
      throw new ChatModelError(
        'llm_rejected',
        `the request may use ${tokens} tokens, more than the whole budget of ${this.#limit} per hour`,
        false,
      );
    }
    const used = this.used();
    if (used + tokens > this.#limit) {
      throw new ChatModelError(
        'llm_budget_exhausted',
        `the token budget is spent (${used} of ${this.#limit} per hour; this request may use ${tokens})`,
        true,
      );
    }
    this.#reserved += tokens;
    let open = true;
    const release = (): boolean => {
      if (!open) return false;
      open = false;
      this.#reserved -= tokens;
      return true;
    };
    return {
      // Each answer's tokens count, also those of an attempt whose answer was unusable and retried.
      settle: (tokensUsed) => {
        release();
        const bucket = Math.floor(this.#now() / this.#bucketMs);
        this.#spent.set(bucket, (this.#spent.get(bucket) ?? 0) + Math.max(0, tokensUsed));
      },
      cancel: () => void release(),
    };
  }
}

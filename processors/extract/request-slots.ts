import { ChatModelError } from './chat-model.js';

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * At most `limit` requests in flight, at most `maxQueued` waiting for a slot; one more is refused at
 * once (`llm_rate_limited`, retriable) instead of joining a queue that could grow without bound.
 * A freed slot is handed straight to the oldest waiter, so the order is first come, first served.
 */
export class RequestSlots {
  readonly #limit: number;
  readonly #maxQueued: number;
  readonly #waiting: Waiter[] = [];
  #active = 0;
  #closed = false;

  constructor(limit: number, maxQueued: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('concurrency must be a positive integer');
    if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new RangeError('maxQueued must be an integer ≥ 0');
    this.#limit = limit;
    this.#maxQueued = maxQueued;
  }

  get active(): number {
    return this.#active;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  /** Resolves with the function that frees the slot (call it exactly once). */
  async acquire(): Promise<() => void> {
    if (this.#closed) throw closedError();
    if (this.#active < this.#limit) {
      this.#active += 1;
    } else {
      if (this.#waiting.length >= this.#maxQueued) {
        throw new ChatModelError(
          'llm_rate_limited',
          `${this.#waiting.length} LLM requests already wait for one of ${this.#limit} slots (the bound); try again later`,
          true,
        );
      }
      // The slot is handed over by release(), already counted in #active.
      await new Promise<void>((resolve, reject) => this.#waiting.push({ resolve, reject }));
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next.resolve();
      else this.#active -= 1;
    };
  }

  /** Refuses new requests and those still waiting; requests in flight finish or are aborted by their owner. */
  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiting.splice(0)) waiter.reject(closedError());
  }
}

function closedError(): ChatModelError {
  return new ChatModelError('llm_unavailable', 'the LLM client is closed', false);
}

import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Keeps a busy consumer from holding the event loop. A processor's synchronous work (markup,
 * extraction) runs as each record is delivered, and the transport delivers a fetched batch record
 * after record with only microtask pauses in between, so without a real turn nothing else runs
 * until the batch is done: no heartbeat (past the session timeout the member is expelled and its
 * uncommitted records are processed again by someone else), no commit tick, no producer
 * acknowledgement, no HTTP request. Callers ask `due()` after each record and, when the current
 * stretch has run past its budget, await `take()`, which lets timers and I/O run once.
 */
export class EventLoopTurns {
  private since = performance.now();

  /** @param budgetMs longest stretch of back-to-back records before the loop gets a turn */
  constructor(private readonly budgetMs = 20) {}

  due(): boolean {
    return performance.now() - this.since >= this.budgetMs;
  }

  async take(): Promise<void> {
    await nextTurn();
    this.since = performance.now();
  }
}

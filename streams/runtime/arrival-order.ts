/**
 * Steps that must run one at a time in the order their records arrived, while the work each waits
 * for runs side by side: markup's text analyses finish in any order on the worker threads, but the
 * entity registry must link their mentions in arrival order, or the same input would link
 * differently from one run to the next (the first article to name "James Baker" decides what a later
 * "Baker" is).
 */
export class ArrivalOrder {
  private tail: Promise<unknown> = Promise.resolve();

  /**
   * `step` runs on `input`'s value once every step queued before it has run. A rejected input, or
   * a step that throws, rejects this one only; the steps queued after it still run.
   */
  run<I, T>(input: Promise<I>, step: (value: I) => T): Promise<T> {
    // An input may fail while it waits for its turn (the stage stopping closes the workers): it is
    // handled here at once, or Node would take it for an unhandled rejection and end the process.
    input.catch(() => undefined);
    const result = this.tail.then(() => input).then(step);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/**
 * Keeps the writes of one key in the order their input records arrived, while writes of different
 * keys (and everything before the write: embedding, say) run concurrently.
 *
 * A stage handles several records at once, so two versions of one document — a statement record
 * re-emitted with more citations, a survivor with one more source — can reach their sink in either
 * order, and a sink may retry the first after the second went through; the older version would then
 * overwrite the newer. A record takes its turn when it arrives (before its first `await`, so turns
 * follow the input order; records of one key share a partition, as they share a Kafka key), waits
 * for the previous turn of its key just before writing, and ends its turn once its write is settled
 * for good: acknowledged, dead-lettered, or failed fatally. A retried write keeps its turn.
 */
export interface WriteTurn {
  /** Resolves once every earlier record of the same key has settled its write. */
  readonly ready: Promise<void>;
  /** Ends this record's turn; later records of its key may write. Idempotent. */
  release(): void;
}

export class WriteOrder {
  /** Per key, the turn of the last record that arrived: the next one waits for it. */
  private readonly tails = new Map<string, Promise<void>>();
  /** Per input position, its open turn: a retried attempt at the same record finds it again. */
  private readonly open = new Map<string, WriteTurn>();

  /** Open turns (for tests and metrics). */
  get size(): number {
    return this.open.size;
  }

  /**
   * The turn of the record at `position` (e.g. `topic/partition/offset`) writing `key`. Call it
   * before the record's first `await`; a second call for the same position returns the same turn.
   */
  turn(key: string, position: string): WriteTurn {
    const existing = this.open.get(position);
    if (existing) return existing;
    const ready = this.tails.get(key) ?? Promise.resolve();
    let resolve!: () => void;
    const settled = new Promise<void>((r) => (resolve = r));
    this.tails.set(key, settled);
    let released = false;
    const turn: WriteTurn = {
      ready,
      release: () => {
        if (released) return;
        released = true;
        resolve();
        this.open.delete(position);
        if (this.tails.get(key) === settled) this.tails.delete(key);
      },
    };
    this.open.set(position, turn);
    return turn;
  }
}

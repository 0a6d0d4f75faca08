/**
 * A destination for a stage's outputs. `write` resolves only once the item is durably accepted
 * (Kafka acknowledged it, Elasticsearch indexed it); that resolution is what lets the input's
 * offset be committed. It rejects with a StageError: `dead_letter` disposition for an item refused
 * for good, `fatal` when the sink cannot go on. Retries of transient failures happen inside.
 */
export interface Sink<T> {
  readonly name: string;
  write(item: T): Promise<void>;
  /** Flushes whatever is buffered and releases connections. */
  close(): Promise<void>;
}

import type { Sink } from './sink.js';
import { StageError } from './stage-error.js';
import type { OutgoingRecord, TransportProducer } from './transport.js';

export interface TopicRecord extends OutgoingRecord {
  topic: string;
}

export interface KafkaSinkOptions {
  /** Records gathered into one produce request. */
  maxBatch?: number;
  /** How long a record may wait for companions before the batch is sent. */
  lingerMs?: number;
  /**
   * For compacted state topics: of several records with one key in a batch, send only the last
   * (compaction would keep only it anyway). Every writer is still acknowledged with the send.
   */
  coalesceByKey?: boolean;
}

/**
 * Writes stage outputs to topics. Writes are gathered for `lingerMs` into one produce call per
 * topic (the producer is idempotent and waits for all in-sync replicas), and each `write` resolves
 * only when its record is acknowledged. The number of waiting records is bounded by the stage's
 * in-flight limit, since every record belongs to an admitted input.
 *
 * Per topic, one produce call at a time, in write order: kafkajs lets concurrent `send` calls
 * overtake one another (the first one to a topic waits for its metadata, a later one may not), and
 * consumers rely on per-key order (a spike's STARTED before its ONGOING; on a compacted state topic,
 * the newest state last).
 */
export class KafkaSink implements Sink<TopicRecord> {
  readonly name: string;
  private pending: { record: TopicRecord; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly maxBatch: number;
  private readonly lingerMs: number;
  private readonly coalesceByKey: boolean;
  private inFlight = new Set<Promise<void>>();
  /** The last produce call per topic, settled either way: the next one starts after it. */
  private readonly topicTails = new Map<string, Promise<void>>();

  constructor(
    private readonly producer: TransportProducer,
    options: KafkaSinkOptions & { name?: string } = {},
  ) {
    this.name = options.name ?? 'kafka';
    this.maxBatch = options.maxBatch ?? 500;
    this.lingerMs = options.lingerMs ?? 5;
    this.coalesceByKey = options.coalesceByKey ?? false;
  }

  write(record: TopicRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ record, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.lingerMs);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const byTopic = new Map<string, typeof batch>();
    for (const item of batch) byTopic.set(item.record.topic, [...(byTopic.get(item.record.topic) ?? []), item]);
    for (const [topic, items] of byTopic) {
      const records = this.recordsToSend(items.map(({ record }) => record)).map((record) => ({
        key: record.key,
        value: record.value,
        ...(record.headers ? { headers: record.headers } : {}),
        ...(record.partition === undefined ? {} : { partition: record.partition }),
      }));
      const previous = this.topicTails.get(topic) ?? Promise.resolve();
      const sending = previous
        .then(() => this.producer.send(topic, records))
        .then(
          () => {
            for (const item of items) item.resolve();
          },
          (error: unknown) => {
            // The client already retried; what is left is an outage worth retrying at stage level.
            const failure = new StageError(
              'kafka_unavailable',
              `producing to ${topic} failed: ${String(error)}`,
              this.name,
              {
                cause: error,
              },
            );
            for (const item of items) item.reject(failure);
          },
        );
      this.topicTails.set(topic, sending);
      this.inFlight.add(sending);
      void sending.finally(() => {
        this.inFlight.delete(sending);
        if (this.topicTails.get(topic) === sending) this.topicTails.delete(topic);
      });
    }
  }

  private recordsToSend(records: TopicRecord[]): TopicRecord[] {
    if (!this.coalesceByKey) return records;
    const last = new Map<string, number>();
    records.forEach((record, i) => {
      if (record.key !== null) last.set(record.key.toString(), i);
    });
    return records.filter((record, i) => record.key === null || last.get(record.key.toString()) === i);
  }

  async close(): Promise<void> {
    this.flush();
    await Promise.all([...this.inFlight]);
  }
}

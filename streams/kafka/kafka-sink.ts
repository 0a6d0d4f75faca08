import { TOPIC_MAX_MESSAGE_BYTES } from '../../schemas/record-size-limits.js';
import { classifyProducerError, type ProducerErrorClass } from './classify-producer-error.js';
import type { Sink } from '../runtime/sink.js';
import { StageError } from '../runtime/stage-error.js';
import type { OutgoingRecord, TransportProducer } from '../runtime/transport.js';

export interface TopicRecord extends OutgoingRecord {
  topic: string;
}

export interface KafkaSinkOptions {
  /** Records gathered into one produce request. */
  maxBatch?: number;
  /**
   * Bytes (keys, values, headers and per-record overhead) in one produce request per topic: the
   * broker refuses a batch over the topic's `max.message.bytes` as a whole. Default 512 KiB; a larger
   * record goes alone.
   */
  maxBatchBytes?: number;
  /**
   * A record larger than this is refused at once as `record_too_large`, never sent. Default: what
   * fits the product topics' `max.message.bytes` (schemas/record-size-limits).
   */
  maxRecordBytes?: number;
  /** How long a record may wait for companions before the batch is sent. */
  lingerMs?: number;
  /**
   * For compacted state topics: of several records with one key in a batch, send only the last
   * (compaction would keep only it anyway). Every writer is still acknowledged with the send.
   */
  coalesceByKey?: boolean;
}

/** A record batch's fixed header (magic 2), and a generous bound on one record's own framing. */
const BATCH_OVERHEAD_BYTES = 61;
const RECORD_OVERHEAD_BYTES = 32;

export const DEFAULT_MAX_BATCH_BYTES = 512 * 1024;
export const DEFAULT_MAX_RECORD_BYTES = TOPIC_MAX_MESSAGE_BYTES - BATCH_OVERHEAD_BYTES;

/** A record's size on the wire, near enough to keep batches under the broker's limit. */
export function recordBytes(record: OutgoingRecord): number {
  const key =
    record.key === null ? 0 : typeof record.key === 'string' ? Buffer.byteLength(record.key) : record.key.length;
  let bytes = RECORD_OVERHEAD_BYTES + key + (record.value?.length ?? 0);
  for (const [name, value] of Object.entries(record.headers ?? {})) {
    bytes += Buffer.byteLength(name) + (typeof value === 'string' ? Buffer.byteLength(value) : value.length) + 4;
  }
  return bytes;
}

interface PendingWrite {
  record: TopicRecord;
  bytes: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** One record to send and the writes it acknowledges (several when coalesced by key). */
interface Entry {
  record: TopicRecord;
  bytes: number;
  writes: PendingWrite[];
}

/**
 * Writes stage outputs to topics. Writes are gathered for `lingerMs` into produce calls per topic
 * of at most `maxBatchBytes` (the producer is idempotent and waits for all in-sync replicas), and
 * each `write` resolves only when its record is acknowledged. The number of waiting records is
 * bounded by the stage's in-flight limit, since every record belongs to an admitted input.
 *
 * Per topic, one produce call at a time, in write order: kafkajs lets concurrent `send` calls
 * overtake one another (the first one to a topic waits for its metadata, a later one may not), and
 * consumers rely on per-key order (a spike's STARTED before its ONGOING; on a compacted state topic,
 * the newest state last).
 *
 * Failures (streams/kafka/classify-producer-error): a batch the broker refuses as too large is split
 * until the record at fault is alone, and that record's write is rejected as `record_too_large`
 * (dead-lettered by the stage: no retry can make it fit) while the others are written. An outage,
 * or a refusal an operator must fix, rejects the batch's writes as `kafka_unavailable`: the stage
 * retries them with backoff.
 */
export class KafkaSink implements Sink<TopicRecord> {
  readonly name: string;
  private pending: PendingWrite[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly maxBatch: number;
  private readonly maxBatchBytes: number;
  private readonly maxRecordBytes: number;
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
    this.maxBatchBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
    this.maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    this.lingerMs = options.lingerMs ?? 5;
    this.coalesceByKey = options.coalesceByKey ?? false;
  }

  write(record: TopicRecord): Promise<void> {
    const bytes = recordBytes(record);
    if (bytes > this.maxRecordBytes) {
      return Promise.reject(
        new StageError(
          'record_too_large',
          `a record of ${bytes} bytes for ${record.topic} is more than ${this.maxRecordBytes}, the most a product topic takes`,
          this.name,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ record, bytes, resolve, reject });
      this.pendingBytes += bytes;
      if (this.pending.length >= this.maxBatch || this.pendingBytes >= this.maxBatchBytes) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.lingerMs);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    if (batch.length === 0) return;
    const byTopic = new Map<string, PendingWrite[]>();
    for (const write of batch) byTopic.set(write.record.topic, [...(byTopic.get(write.record.topic) ?? []), write]);
    for (const [topic, writes] of byTopic) {
      // After an outage, the rest of this flush fails with it rather than overtake the failed records.
      let outage: StageError | undefined;
      for (const entries of this.chunks(writes)) {
        const previous = this.topicTails.get(topic) ?? Promise.resolve();
        const sending = previous.then(async () => {
          if (outage) this.fail(entries, outage);
          else outage = await this.send(topic, entries);
        });
        this.topicTails.set(topic, sending);
        this.inFlight.add(sending);
        void sending.finally(() => {
          this.inFlight.delete(sending);
          if (this.topicTails.get(topic) === sending) this.topicTails.delete(topic);
        });
      }
    }
  }

  /** Consecutive runs of writes of at most maxBatchBytes (a larger record alone), coalesced if asked. */
  private chunks(writes: PendingWrite[]): Entry[][] {
    const chunks: PendingWrite[][] = [];
    let current: PendingWrite[] = [];
    let bytes = BATCH_OVERHEAD_BYTES;
    for (const write of writes) {
      if (current.length > 0 && bytes + write.bytes > this.maxBatchBytes) {
        chunks.push(current);
        current = [];
        bytes = BATCH_OVERHEAD_BYTES;
      }
      current.push(write);
      bytes += write.bytes;
    }
    if (current.length > 0) chunks.push(current);
    return chunks.map((chunk) => this.entries(chunk));
  }

  private entries(writes: PendingWrite[]): Entry[] {
    if (!this.coalesceByKey)
      return writes.map((write) => ({ record: write.record, bytes: write.bytes, writes: [write] }));
    // The last record of each key is sent, at its own place; the earlier ones are acknowledged with it.
    const byKey = new Map<string, PendingWrite[]>();
    for (const write of writes) {
      if (write.record.key === null) continue;
      const key = write.record.key.toString();
      byKey.set(key, [...(byKey.get(key) ?? []), write]);
    }
    return writes.flatMap((write): Entry[] => {
      if (write.record.key === null) return [{ record: write.record, bytes: write.bytes, writes: [write] }];
      const same = byKey.get(write.record.key.toString())!;
      return same[same.length - 1] === write ? [{ record: write.record, bytes: write.bytes, writes: same }] : [];
    });
  }

  /**
   * Sends entries in one produce call and settles their writes; never rejects. Returns the failure
   * when the writes were failed as an outage, so that the caller sends nothing after them.
   */
  private async send(topic: string, entries: Entry[]): Promise<StageError | undefined> {
    try {
      await this.producer.send(
        topic,
        entries.map(({ record }) => ({
          key: record.key,
          value: record.value,
          ...(record.headers ? { headers: record.headers } : {}),
          ...(record.partition === undefined ? {} : { partition: record.partition }),
        })),
      );
      for (const entry of entries) for (const write of entry.writes) write.resolve();
      return undefined;
    } catch (error) {
      const kind = classifyProducerError(error);
      if (kind === 'too_large' && entries.length > 1) {
        // Find the record at fault: halves in order, stopping if an outage intervenes.
        const half = Math.ceil(entries.length / 2);
        const first = entries.slice(0, half);
        const rest = entries.slice(half);
        const outage = await this.send(topic, first);
        if (outage === undefined) return this.send(topic, rest);
        this.fail(rest, outage);
        return outage;
      }
      if (kind === 'too_large') {
        const [entry] = entries;
        this.fail(
          entries,
          new StageError(
            'record_too_large',
            `${topic} refused a record of about ${entry!.bytes} bytes as too large: ${String(error)}`,
            this.name,
            { cause: error },
          ),
        );
        return undefined;
      }
      const outage = this.outage(topic, error, kind);
      this.fail(entries, outage);
      return outage;
    }
  }

  private outage(topic: string, error: unknown, kind: ProducerErrorClass): StageError {
    // The client already retried what it could: what is left is an outage worth retrying at stage
    // level, or a refusal (authorisation, a missing topic) that only an operator can lift.
    const what = kind === 'refused' ? 'refused until an operator acts' : 'failed';
    return new StageError('kafka_unavailable', `producing to ${topic} ${what}: ${String(error)}`, this.name, {
      cause: error,
    });
  }

  private fail(entries: Entry[], failure: StageError): void {
    for (const entry of entries) for (const write of entry.writes) write.reject(failure);
  }

  async close(): Promise<void> {
    this.flush();
    await Promise.all([...this.inFlight]);
  }
}

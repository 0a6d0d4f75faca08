/**
 * What the stage runtime needs from a message transport. Two implementations: Kafka (kafkajs) for
 * cluster mode and tests, and in-process topics for the embedded mode. Processors never see either.
 */

export type HeaderValue = Buffer | string | (Buffer | string)[] | undefined;

export interface RawRecord {
  topic: string;
  partition: number;
  /** Kafka offsets are 64-bit; kept as the decimal string the client gives. */
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, HeaderValue>;
  /** Broker or producer timestamp, ms since epoch, as a decimal string. */
  timestamp: string;
}

export interface OutgoingRecord {
  key: string | Buffer | null;
  value: Buffer | null;
  headers?: Record<string, string | Buffer>;
  partition?: number;
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface ConsumerCallbacks {
  /**
   * Hands one record to the runtime and waits until it is admitted — this wait is the
   * back-pressure point. Resolves false when the runtime is closing, or when the record's
   * assignment was replaced while it waited (a rebalance: it was dropped): stop delivering this batch.
   * `heartbeat` keeps the group membership alive while waiting.
   */
  deliver(record: RawRecord, heartbeat: () => Promise<void>): Promise<boolean>;
  /** A new assignment (after every rebalance): positions restart from the committed offsets. */
  onAssignment(assigned: TopicPartition[]): void;
  /** How far behind the partition's end the consumer is, when the transport knows. */
  onLag?(topic: string, partition: number, lag: number): void;
  /** The transport failed for good (the consumer crashed and will not restart). */
  onCrash?(error: Error): void;
}

export interface TransportConsumer {
  /** Connects, subscribes and starts delivering; resolves once consumption has started. */
  start(callbacks: ConsumerCallbacks): Promise<void>;
  /** Stop / restart fetching from every assigned partition. */
  pause(): void;
  resume(): void;
  /** Commits positions (the next offset to read), per partition. */
  commit(offsets: (TopicPartition & { offset: bigint })[]): Promise<void>;
  /** Stops fetching and waits for the delivery in progress to return. */
  stop(): Promise<void>;
  disconnect(): Promise<void>;
}

export interface TransportProducer {
  /** Resolves when every record is acknowledged by all in-sync replicas. */
  send(topic: string, records: OutgoingRecord[]): Promise<void>;
  disconnect(): Promise<void>;
}

export interface TopicSpec {
  topic: string;
  partitions: number;
  /** Defaults to 1 locally; production topics are created by the operator (k8s/topics.yaml). */
  replicationFactor?: number;
  configs?: Record<string, string>;
}

export interface ConsumerOptions {
  groupId: string;
  topics: string[];
  /** Where a group with no committed offset starts. */
  fromBeginning?: boolean;
  /**
   * `balanced` (default) spreads partitions over the group's members; `single-active` gives them all
   * to one member and keeps the others as standbys, for stages whose decisions must not run in two
   * places at once.
   */
  assignment?: 'balanced' | 'single-active';
}

export interface Transport {
  readonly kind: 'kafka' | 'embedded';
  consumer(options: ConsumerOptions): TransportConsumer;
  producer(): TransportProducer;
  /** Creates missing topics; existing ones are left as they are. Idempotent. */
  ensureTopics(specs: TopicSpec[]): Promise<void>;
  /** The next offset to be written, per partition in partition order (what "caught up" means). */
  endOffsets(topic: string): Promise<bigint[]>;
  /**
   * A consumer group's committed positions on a topic, per partition in partition order (null where
   * it has committed nothing): with `endOffsets`, the group's lag.
   */
  committedOffsets(groupId: string, topic: string): Promise<(bigint | null)[]>;
  close(): Promise<void>;
}

/** Header values as strings (the first value when repeated), for processors and dead letters. */
export function headerText(headers: Record<string, HeaderValue>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) result[name] = first.toString();
  }
  return result;
}

import type { Consumer, Kafka, Producer } from 'kafkajs';
import { PartitionAssigners } from 'kafkajs';
import { backoffCeiling, type BackoffPolicy } from '../../processors/retry/backoff.js';
import { singleActiveAssigner, type SingleActiveState } from './single-active-assigner.js';
import { CompressionTypes, Partitioners } from 'kafkajs';
import type {
  ConsumerCallbacks,
  ConsumerOptions,
  OutgoingRecord,
  TopicPartition,
  TopicSpec,
  Transport,
  TransportConsumer,
  TransportProducer,
} from '../runtime/transport.js';

export interface KafkaTransportOptions {
  /** Partitions of one consumer processed side by side (order is kept within each). */
  partitionsConsumedConcurrently?: number;
  /** Bounds what the client prefetches per partition, so memory stays bounded when paused. */
  maxBytesPerPartition?: number;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /**
   * Longest a fetch waits for data. Kept short because a fetch issued while every partition is
   * paused (the in-flight bound) sleeps this long even after a resume.
   */
  maxWaitTimeMs?: number;
}

class KafkaTransportConsumer implements TransportConsumer {
  private readonly consumer: Consumer;
  private running = false;
  private readonly singleActive: SingleActiveState = { active: false };

  constructor(
    kafka: Kafka,
    private readonly options: ConsumerOptions,
    private readonly settings: Required<KafkaTransportOptions>,
  ) {
    this.consumer = kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: settings.sessionTimeoutMs,
      heartbeatInterval: settings.heartbeatIntervalMs,
      maxBytesPerPartition: settings.maxBytesPerPartition,
      maxBytes: settings.maxBytesPerPartition * 8,
      maxWaitTimeInMs: settings.maxWaitTimeMs,
      // A restarted member should get its partitions back quickly rather than wait out rebalances.
      rebalanceTimeout: settings.sessionTimeoutMs * 2,
      retry: { retries: 8 },
      partitionAssigners:
        options.assignment === 'single-active'
          ? [singleActiveAssigner(this.singleActive)]
          : [PartitionAssigners.roundRobin],
    });
  }

  async start(callbacks: ConsumerCallbacks): Promise<void> {
    const { consumer } = this;
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      const assigned: TopicPartition[] = [];
      for (const [topic, partitions] of Object.entries(event.payload.memberAssignment)) {
        for (const partition of partitions) assigned.push({ topic, partition });
      }
      // Told to the leader at the next join, so the active member keeps its partitions.
      this.singleActive.active = assigned.length > 0;
      callbacks.onAssignment(assigned);
    });
    consumer.on(consumer.events.CRASH, (event) => {
      if (!event.payload.restart) callbacks.onCrash?.(event.payload.error);
    });
    await consumer.connect();
    await consumer.subscribe({ topics: this.options.topics, fromBeginning: this.options.fromBeginning ?? true });
    this.running = true;
    await consumer.run({
      autoCommit: false, // offsets are committed by the runtime's watermarks, never by the client
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.settings.partitionsConsumedConcurrently,
      eachBatch: async (payload) => {
        const { batch } = payload;
        callbacks.onLag?.(batch.topic, batch.partition, Number(batch.offsetLag()));
        for (const message of batch.messages) {
          if (!payload.isRunning() || payload.isStale()) break;
          const accepted = await callbacks.deliver(
            {
              topic: batch.topic,
              partition: batch.partition,
              offset: message.offset,
              key: message.key,
              value: message.value,
              headers: message.headers ?? {},
              timestamp: message.timestamp,
            },
            () => payload.heartbeat(),
          );
          if (!accepted) break;
          // Moves the fetch position only: with autoCommit off, nothing is committed by this.
          payload.resolveOffset(message.offset);
        }
      },
    });
  }

  pause(): void {
    if (this.running) this.consumer.pause(this.options.topics.map((topic) => ({ topic })));
  }

  resume(): void {
    if (this.running) this.consumer.resume(this.options.topics.map((topic) => ({ topic })));
  }

  async commit(offsets: (TopicPartition & { offset: bigint })[]): Promise<void> {
    if (offsets.length === 0) return;
    await this.consumer.commitOffsets(
      offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset.toString() })),
    );
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.consumer.stop();
  }

  async disconnect(): Promise<void> {
    this.running = false;
    await this.consumer.disconnect();
  }
}

class KafkaTransportProducer implements TransportProducer {
  private connected: Promise<void> | undefined;

  constructor(private readonly producer: Producer) {}

  async send(topic: string, records: OutgoingRecord[]): Promise<void> {
    if (records.length === 0) return;
    this.connected ??= this.producer.connect();
    await this.connected;
    await this.producer.send({
      topic,
      acks: -1,
      compression: CompressionTypes.None,
      messages: records.map((record) => ({
        key: record.key,
        value: record.value,
        ...(record.headers ? { headers: record.headers } : {}),
        ...(record.partition === undefined ? {} : { partition: record.partition }),
      })),
    });
  }

  async disconnect(): Promise<void> {
    if (this.connected) await this.producer.disconnect();
  }
}

/** Topics that exist but have no leader yet: worth waiting for. */
class TopicsNotReady extends Error {
  override readonly name = 'TopicsNotReady';
  readonly retriable = true;
  constructor(topics: string[]) {
    super(`topics without leaders yet: ${topics.join(', ')}`);
  }
}

const KAFKA_ADMIN_BACKOFF: BackoffPolicy = { baseMs: 100, capMs: 2000 };

/** Runs an admin call again on retriable errors (stale metadata, a topic being created), with backoff. */
export async function withKafkaRetries<T>(call: () => Promise<T>, attempts = 10): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!isRetriableKafkaError(error) || attempt >= attempts) throw error;
      // No jitter: these are one process's own admin calls, not a crowd to spread.
      await new Promise((resolve) => setTimeout(resolve, backoffCeiling(attempt + 1, KAFKA_ADMIN_BACKOFF)));
    }
  }
}

/** Retriable, or (kafkajs's aggregate of per-topic errors) made only of retriable and "already exists". */
function isRetriableKafkaError(error: unknown): boolean {
  const { retriable, errors } = error as { retriable?: boolean; errors?: unknown };
  if (retriable === true) return true;
  if (!Array.isArray(errors) || errors.length === 0) return false;
  return errors.every(
    (e: { retriable?: boolean; type?: string }) => e.retriable === true || e.type === 'TOPIC_ALREADY_EXISTS',
  );
}

/** Cluster mode: real Kafka through kafkajs. */
export function createKafkaTransport(kafka: Kafka, options: KafkaTransportOptions = {}): Transport {
  const settings: Required<KafkaTransportOptions> = {
    partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 3,
    maxBytesPerPartition: options.maxBytesPerPartition ?? 1_048_576,
    sessionTimeoutMs: options.sessionTimeoutMs ?? 30_000,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 3_000,
    maxWaitTimeMs: options.maxWaitTimeMs ?? 250,
  };
  const producers: TransportProducer[] = [];
  return {
    kind: 'kafka',
    consumer: (consumerOptions) => new KafkaTransportConsumer(kafka, consumerOptions, settings),
    producer: () => {
      // Idempotent: a retried send never writes a record twice within the producer's session.
      const producer = new KafkaTransportProducer(
        kafka.producer({
          idempotent: true,
          maxInFlightRequests: 1,
          createPartitioner: Partitioners.DefaultPartitioner,
        }),
      );
      producers.push(producer);
      return producer;
    },
    ensureTopics: async (specs: TopicSpec[]) => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        // Processes starting together race to create the topics they share: another may create a
        // topic between our listing and our request, and a topic someone else just created may not
        // be in this broker's metadata yet ("does not host this topic-partition"). So create what is
        // missing, then wait until every topic asked for has leaders, retrying what is retriable.
        await withKafkaRetries(async () => {
          const existing = new Set(await admin.listTopics());
          const missing = specs.filter((spec) => !existing.has(spec.topic));
          if (missing.length > 0) {
            await admin.createTopics({
              waitForLeaders: true,
              topics: missing.map((spec) => ({
                topic: spec.topic,
                numPartitions: spec.partitions,
                replicationFactor: spec.replicationFactor ?? 1,
                configEntries: Object.entries(spec.configs ?? {}).map(([name, value]) => ({ name, value })),
              })),
            });
          }
          const { topics } = await admin.fetchTopicMetadata({ topics: specs.map((spec) => spec.topic) });
          const leaderless = topics.filter((t) => t.partitions.length === 0 || t.partitions.some((p) => p.leader < 0));
          if (leaderless.length > 0) throw new TopicsNotReady(leaderless.map((t) => t.name));
        });
      } finally {
        await admin.disconnect();
      }
    },
    endOffsets: async (topic: string) => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        // Right after a topic is created (or a leader moves) the metadata can be stale for a moment
        // ("not the leader for that topic-partition"): such errors are retriable, so retry them.
        const offsets = await withKafkaRetries(() => admin.fetchTopicOffsets(topic));
        return offsets.sort((a, b) => a.partition - b.partition).map((o) => BigInt(o.high));
      } finally {
        await admin.disconnect();
      }
    },
    committedOffsets: async (groupId: string, topic: string) => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        const [found] = await admin.fetchOffsets({ groupId, topics: [topic] });
        return (found?.partitions ?? [])
          .sort((a, b) => a.partition - b.partition)
          .map((p) => (p.offset === '-1' ? null : BigInt(p.offset)));
      } finally {
        await admin.disconnect();
      }
    },
    close: async () => {
      await Promise.all(producers.map((p) => p.disconnect()));
    },
  };
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer, Kafka, Producer } from 'kafkajs';
import { PartitionAssigners } from 'kafkajs';
import { backoffCeiling, type BackoffPolicy } from '../../processors/retry/backoff.js';
import { defaultStageLogger } from '../telemetry/logger.js';
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

/** Waits before starting a consumer again after an outage made kafkajs give up. */
const CRASH_RESTART_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 10_000 };

/** Errors that mean the broker is (for now) unreachable or electing, not that the request is wrong. */
const BROKER_OUTAGE_ERRORS: ReadonlySet<string> = new Set([
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSBrokerNotFound',
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
]);

function isBrokerOutageError(error: Error): boolean {
  for (let e: unknown = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (BROKER_OUTAGE_ERRORS.has(e.name)) return true;
  }
  return false;
}

/**
 * kafkajs has no consumer group between a crash and the restarted consumer's join (it restarts by
 * itself after a retriable error, and this transport does after an outage); pause, resume and
 * commit throw this meanwhile. The message is the only mark kafkajs gives it.
 */
function isGroupRestarting(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('Consumer group was not initialized');
}

/** Pause between commit attempts while the group restarts. */
const COMMIT_RETRY_MS = 250;

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

class KafkaTransportConsumer implements TransportConsumer {
  private readonly consumer: Consumer;
  private running = false;
  /** False from a crash until the restarted consumer joins: kafkajs refuses pause and resume meanwhile. */
  private live = false;
  /** What the runtime last asked for, applied again to a restarted consumer. */
  private paused = false;
  private crashRestarts = 0;
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
      // A consumer restarted after a crash (by kafkajs or below) is live again once it has joined.
      if (this.running && !this.live) this.becomeLive();
      callbacks.onAssignment(assigned);
    });
    consumer.on(consumer.events.CRASH, (event) => {
      if (!this.running) return;
      this.live = false;
      if (event.payload.restart) return; // kafkajs starts it again itself
      const error = event.payload.error;
      if (!isBrokerOutageError(error)) {
        callbacks.onCrash?.(error);
        return;
      }
      // kafkajs gives up for good on some errors a broker outage causes ("Failed to find group
      // coordinator" while the broker restarts) although they pass with the outage: start again
      // as the client would for a retriable error. Positions restart from the committed offsets,
      // as after any rebalance, so nothing is skipped.
      this.crashRestarts += 1;
      const delay = backoffCeiling(this.crashRestarts, CRASH_RESTART_BACKOFF);
      defaultStageLogger('warn', 'consumer stopped by a broker outage; starting it again', {
        group: this.options.groupId,
        error: error.message,
        in_ms: delay,
      });
      setTimeout(() => {
        if (!this.running) return;
        this.run(callbacks).then(
          () => (this.crashRestarts = 0),
          (restartError: unknown) => callbacks.onCrash?.(asError(restartError)),
        );
      }, delay).unref();
    });
    await this.run(callbacks);
  }

  private async run(callbacks: ConsumerCallbacks): Promise<void> {
    const { consumer } = this;
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
    if (!this.live) this.becomeLive();
  }

  /** Applies what the runtime last asked for to a consumer that runs (again). */
  private becomeLive(): void {
    this.live = true;
    if (this.paused) this.applyPause();
  }

  private applyPause(): void {
    if (!this.running || !this.live) return; // applied when the consumer is live again
    const topics = this.options.topics.map((topic) => ({ topic }));
    try {
      if (this.paused) this.consumer.pause(topics);
      else this.consumer.resume(topics);
    } catch (error) {
      // Crashed, and kafkajs has not said so yet: the coming join applies what was asked.
      if (!isGroupRestarting(error)) throw error;
      this.live = false;
    }
  }

  pause(): void {
    this.paused = true;
    this.applyPause();
  }

  resume(): void {
    this.paused = false;
    this.applyPause();
  }

  async commit(offsets: (TopicPartition & { offset: bigint })[]): Promise<void> {
    if (offsets.length === 0) return;
    const request = offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset.toString() }));
    // Work that is done is committed once the restarting group has joined again, not failed.
    const deadline = Date.now() + this.settings.sessionTimeoutMs * 2 + CRASH_RESTART_BACKOFF.capMs;
    for (;;) {
      try {
        await this.consumer.commitOffsets(request);
        return;
      } catch (error) {
        if (!this.running || !isGroupRestarting(error) || Date.now() >= deadline) throw error;
        await sleep(COMMIT_RETRY_MS);
      }
    }
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

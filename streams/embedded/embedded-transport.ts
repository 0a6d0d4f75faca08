import type {
  ConsumerCallbacks,
  ConsumerOptions,
  OutgoingRecord,
  RawRecord,
  TopicPartition,
  TopicSpec,
  Transport,
  TransportConsumer,
  TransportProducer,
} from '../runtime/transport.js';

/**
 * In-process topics behind the same interfaces as Kafka, so the same stages run with no broker:
 * the default of `npm start`, and fast tests. Partitions keep order, a consumer gets the records
 * of all its partitions in the order they were appended (so a replay runs the same way every time),
 * committed offsets are kept per group, and `send` resolves once the records are appended. What it
 * does not do: survive the process, or share a group between several consumers (one member per
 * group gets every partition).
 */
interface StoredRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer>;
  timestamp: string;
  /** Broker-wide append order: a consumer of several partitions gets their records in it. */
  sequence: number;
}

/** A record read back with its broker-wide append order. */
interface SequencedRecord {
  record: RawRecord;
  sequence: number;
}

/** Records a consumer reads from one partition per round. */
const CONSUMER_BATCH = 64;

interface EmbeddedTopic {
  partitions: StoredRecord[][];
  roundRobin: number;
}

function toBuffer(value: string | Buffer): Buffer {
  return typeof value === 'string' ? Buffer.from(value) : value;
}

/** FNV-1a: stable key → partition mapping (not Kafka's murmur2; keys only need to stay together). */
function hashKey(key: Buffer | string): number {
  if (typeof key === 'string') key = Buffer.from(key);
  let hash = 0x811c9dc5;
  for (const byte of key) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The partition the embedded broker puts a keyed record in, of `partitions`. */
export function embeddedPartitionOf(key: string, partitions: number): number {
  return hashKey(key) % partitions;
}

export class EmbeddedBroker {
  private readonly topics = new Map<string, EmbeddedTopic>();
  private readonly committed = new Map<string, Map<string, bigint>>();
  private readonly waiters = new Set<() => void>();
  private appended = 0;

  createTopic(spec: TopicSpec): void {
    if (this.topics.has(spec.topic)) return;
    if (!Number.isInteger(spec.partitions) || spec.partitions < 1) {
      throw new Error(`topic ${spec.topic}: partitions must be a positive integer`);
    }
    this.topics.set(spec.topic, { partitions: Array.from({ length: spec.partitions }, () => []), roundRobin: 0 });
  }

  topic(name: string): EmbeddedTopic {
    const topic = this.topics.get(name);
    if (!topic) throw new Error(`unknown topic ${name} (topics are created explicitly, as on the cluster)`);
    return topic;
  }

  append(name: string, records: OutgoingRecord[]): void {
    const topic = this.topic(name);
    for (const record of records) {
      const key = record.key === null ? null : toBuffer(record.key);
      const count = topic.partitions.length;
      const partition = record.partition ?? (key === null ? topic.roundRobin++ % count : hashKey(key) % count);
      const target = topic.partitions[partition];
      if (!target) throw new Error(`topic ${name} has no partition ${partition}`);
      const headers: Record<string, Buffer> = {};
      for (const [header, value] of Object.entries(record.headers ?? {})) headers[header] = toBuffer(value);
      target.push({ key, value: record.value, headers, timestamp: String(Date.now()), sequence: this.appended++ });
    }
    for (const wake of [...this.waiters]) wake();
  }

  /** Records of one partition from `offset` on (a copy of the references; records are immutable). */
  read(name: string, partition: number, offset: bigint): RawRecord[] {
    return this.readSequenced(name, partition, offset).map((r) => r.record);
  }

  /** At most `limit` records of one partition from `offset` on, each with its append order. */
  readSequenced(name: string, partition: number, offset: bigint, limit = Number.POSITIVE_INFINITY): SequencedRecord[] {
    const stored = this.topic(name).partitions[partition] ?? [];
    const result: SequencedRecord[] = [];
    for (let at = Number(offset); at < stored.length && result.length < limit; at++) {
      const { sequence, ...fields } = stored[at]!;
      result.push({ record: { topic: name, partition, offset: String(at), ...fields }, sequence });
    }
    return result;
  }

  endOffsets(name: string): bigint[] {
    return this.topic(name).partitions.map((p) => BigInt(p.length));
  }

  committedOffset(groupId: string, name: string, partition: number): bigint | undefined {
    return this.committed.get(groupId)?.get(`${name}/${partition}`);
  }

  commit(groupId: string, offsets: (TopicPartition & { offset: bigint })[]): void {
    let group = this.committed.get(groupId);
    if (!group) {
      group = new Map();
      this.committed.set(groupId, group);
    }
    for (const o of offsets) group.set(`${o.topic}/${o.partition}`, o.offset);
  }

  /** Resolves on the next append (or after `timeoutMs`). */
  waitForData(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, timeoutMs);
      this.waiters.add(wake);
    });
  }
}

class EmbeddedConsumer implements TransportConsumer {
  private running = false;
  private paused = false;
  private loop: Promise<void> | undefined;
  private wakePaused: (() => void) | undefined;

  constructor(
    private readonly broker: EmbeddedBroker,
    private readonly options: ConsumerOptions,
  ) {}

  async start(callbacks: ConsumerCallbacks): Promise<void> {
    const assigned: TopicPartition[] = [];
    for (const topic of this.options.topics) {
      this.broker.topic(topic).partitions.forEach((_, partition) => assigned.push({ topic, partition }));
    }
    callbacks.onAssignment(assigned);
    this.running = true;
    this.loop = this.consume(assigned, callbacks);
    return Promise.resolve();
  }

  private async consume(assigned: TopicPartition[], callbacks: ConsumerCallbacks): Promise<void> {
    const positions = assigned.map((tp) => {
      const committed = this.broker.committedOffset(this.options.groupId, tp.topic, tp.partition);
      const start =
        committed ?? (this.options.fromBeginning === false ? this.broker.endOffsets(tp.topic)[tp.partition]! : 0n);
      return { ...tp, next: start };
    });
    const heartbeat = (): Promise<void> => Promise.resolve();
    while (this.running) {
      let delivered = 0;
      // The records of every partition, in the order they were appended: no partition starves the
      // others, and a replay reaches the stage in the same order every run, however the producer
      // and this loop happen to interleave (the partitions of a Kafka topic give no such promise).
      const batches = positions.map((position) => {
        const records = this.broker.readSequenced(position.topic, position.partition, position.next, CONSUMER_BATCH);
        const end = this.broker.endOffsets(position.topic)[position.partition]!;
        callbacks.onLag?.(position.topic, position.partition, Number(end - position.next));
        return { position, records };
      });
      // A partition with more waiting than one batch holds back what was appended after its last
      // record read, which the next round delivers in its place.
      const bound = Math.min(
        ...batches.filter((b) => b.records.length === CONSUMER_BATCH).map((b) => b.records.at(-1)!.sequence),
      );
      const round = batches
        .flatMap(({ position, records }) => records.filter((r) => r.sequence <= bound).map((r) => ({ position, ...r })))
        .sort((a, b) => a.sequence - b.sequence);
      for (const { position, record } of round) {
        // pause()/stop() flip these flags from other callbacks while we await.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
        while (this.paused && this.running) await new Promise<void>((resolve) => (this.wakePaused = resolve));
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
        if (!this.running) return;
        // False ends this round, not the consumer (as on Kafka): the refused record is read again
        // on the next round, so a refusal never stalls the partition.
        if (!(await callbacks.deliver(record, heartbeat))) break;
        position.next = BigInt(record.offset) + 1n;
        delivered += 1;
      }
      if (delivered === 0) await this.broker.waitForData(200);
    }
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.wakePaused?.();
  }

  commit(offsets: (TopicPartition & { offset: bigint })[]): Promise<void> {
    this.broker.commit(this.options.groupId, offsets);
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wakePaused?.();
    await this.loop;
  }

  async disconnect(): Promise<void> {
    await this.stop();
  }
}

/** Embedded mode: in-process topics. Pass one broker to several stages to connect them. */
export function createEmbeddedTransport(broker = new EmbeddedBroker()): Transport & { broker: EmbeddedBroker } {
  return {
    kind: 'embedded',
    broker,
    consumer: (options) => new EmbeddedConsumer(broker, options),
    producer: (): TransportProducer => ({
      send: (topic, records) => {
        broker.append(topic, records);
        return Promise.resolve();
      },
      disconnect: () => Promise.resolve(),
    }),
    ensureTopics: (specs) => {
      for (const spec of specs) broker.createTopic(spec);
      return Promise.resolve();
    },
    endOffsets: (topic) => Promise.resolve(broker.endOffsets(topic)),
    committedOffsets: (groupId, topic) =>
      Promise.resolve(
        broker.topic(topic).partitions.map((_, partition) => broker.committedOffset(groupId, topic, partition) ?? null),
      ),
    close: () => Promise.resolve(),
  };
}

import { randomUUID } from 'node:crypto';
import { TAIL_GROUP_PREFIX } from '../pipeline/topics.js';
import type { RawRecord, Transport, TransportConsumer } from './transport.js';

export interface TopicTail {
  /** Resolves once every record that existed when the tail started has been handed over. */
  readonly caughtUp: Promise<void>;
  /** Records handed over so far. */
  received(): number;
  /**
   * Resolves once every record on the topic now (its current end offsets) has been handed over;
   * rejects at once when the tail has failed.
   */
  catchUp(): Promise<void>;
  /**
   * Resolves when the tail is stopped; rejects when its consumer failed for good (a group or topic
   * the broker denies, an error it cannot retry). From then on it follows nothing, even when it had
   * caught up long before, so state built from it is stale: whoever holds such state must stop too.
   */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

export interface TopicTailOptions {
  /** Names the throw-away consumer group, for operators reading `kafka-consumer-groups`. */
  purpose: string;
  /** Gives up waiting for `caughtUp` after this long. Default 120 s. */
  catchUpTimeoutMs?: number;
}

/**
 * Reads a topic from its beginning and keeps following it: how a stage rebuilds state (the entity
 * registry, the dedupe window) from a changelog on start, and learns what other replicas wrote
 * while it runs. Every replica reads every partition, so the group is unique per tail and nothing is
 * ever committed: the log, not the group, is the state's durable home.
 */
export async function tailTopic(
  transport: Transport,
  topic: string,
  onRecord: (record: RawRecord) => void,
  options: TopicTailOptions,
): Promise<TopicTail> {
  const ends = await transport.endOffsets(topic);
  const remaining = new Map<number, bigint>();
  ends.forEach((end, partition) => {
    if (end > 0n) remaining.set(partition, end);
  });
  let count = 0;
  /** Next offset to hand over, per partition. */
  const positions = new Map<number, bigint>();
  let resolveCaughtUp!: () => void;
  let rejectCaughtUp!: (error: Error) => void;
  const caughtUp = new Promise<void>((resolve, reject) => {
    resolveCaughtUp = resolve;
    rejectCaughtUp = reject;
  });
  caughtUp.catch(() => undefined);
  let failure: Error | undefined;
  let resolveDone!: () => void;
  let rejectDone!: (error: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  done.catch(() => undefined); // observed by the holder of the tail
  const timeoutMs = options.catchUpTimeoutMs ?? 120_000;
  const timer = setTimeout(
    () => rejectCaughtUp(new Error(`reading ${topic} to its end took longer than ${timeoutMs} ms`)),
    timeoutMs,
  );
  const settle = (): void => {
    if (remaining.size === 0) {
      clearTimeout(timer);
      resolveCaughtUp();
    }
  };
  settle();

  let stopped = false;
  const consumer: TransportConsumer = transport.consumer({
    groupId: `${TAIL_GROUP_PREFIX}${options.purpose}.${randomUUID()}`,
    topics: [topic],
    fromBeginning: true,
  });
  await consumer.start({
    deliver: (record) => {
      if (stopped) return Promise.resolve(false);
      onRecord(record);
      count += 1;
      positions.set(record.partition, BigInt(record.offset) + 1n);
      const end = remaining.get(record.partition);
      if (end !== undefined && BigInt(record.offset) + 1n >= end) {
        remaining.delete(record.partition);
        settle();
      }
      return Promise.resolve(true);
    },
    onAssignment: () => undefined,
    onCrash: (error) => {
      failure = new Error(`following ${topic} failed: ${error.message}`, { cause: error });
      clearTimeout(timer);
      rejectCaughtUp(failure);
      rejectDone(failure);
    },
  });
  return {
    caughtUp,
    done,
    received: () => count,
    catchUp: async () => {
      // Read through a function: the consumer's crash callback sets it while this waits.
      const failed = (): Error | undefined => failure;
      const early = failed();
      if (early) throw early;
      const target = await transport.endOffsets(topic);
      const deadline = Date.now() + timeoutMs;
      const behind = (): boolean => target.some((end, partition) => (positions.get(partition) ?? 0n) < end);
      while (behind()) {
        const error = failed();
        if (error) throw error;
        if (stopped) throw new Error(`tail of ${topic} stopped before catching up`);
        if (Date.now() > deadline) throw new Error(`catching up with ${topic} took longer than ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await consumer.stop();
      await consumer.disconnect();
      resolveDone();
    },
  };
}

/**
 * Hands over every record the topic holds now, from its beginning, then stops: a one-off read (a
 * report, a benchmark, a test) rather than a follower.
 */
export async function readTopicOnce(
  transport: Transport,
  topic: string,
  onRecord: (record: RawRecord) => void,
  options: TopicTailOptions,
): Promise<void> {
  const tail = await tailTopic(transport, topic, onRecord, options);
  try {
    await tail.caughtUp;
  } finally {
    await tail.stop();
  }
}

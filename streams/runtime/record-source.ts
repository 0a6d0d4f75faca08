import { setTimeout as sleep } from 'node:timers/promises';
import { Observable, Subject } from 'rxjs';
import { EventLoopTurns } from './event-loop-turns.js';
import { InFlightGate } from './in-flight-gate.js';
import type { StageMetrics } from '../telemetry/metrics.js';
import { OffsetWatermarks, type InputHandle } from './offset-watermarks.js';
import type { RawRecord, TopicPartition, Transport, TransportConsumer } from './transport.js';

/**
 * One consumed record and its acknowledgement handle. Declare derived outputs on `ack`
 * (`addOutputs`, `outputAcknowledged`, `seal`, or `complete` for none); the record's offset becomes
 * committable once it and everything before it is complete. `abandon` gives up on it for good: its
 * in-flight slot is freed but its offset is never committed, so a restart redelivers it.
 */
export interface SourceRecord {
  record: RawRecord;
  ack: InputHandle;
  abandon(): void;
}

export interface RecordSourceOptions {
  groupId: string;
  topics: string[];
  fromBeginning?: boolean;
  assignment?: 'balanced' | 'single-active';
  /** Told of every new assignment, before its first record is delivered. */
  onAssignment?: (assigned: TopicPartition[]) => void;
  /** Records handed out and not yet complete or abandoned, at most. */
  maxInFlight: number;
  resumeBelow?: number;
  commitIntervalMs?: number;
  metrics?: StageMetrics;
  log?: (level: 'warn', message: string, fields: Record<string, unknown>) => void;
}

export interface RecordSource {
  /** Hot stream of admitted records; errors if the consumer crashes for good. */
  readonly records$: Observable<SourceRecord>;
  /** Connects and starts consuming. */
  start(): Promise<void>;
  /** Stop fetching, wait (up to `drainMs`) for handed-out records to complete, commit, disconnect. */
  stop(drainMs: number): Promise<void>;
  /** Commits what is committable now. */
  commit(): Promise<void>;
  readonly inFlight: number;
  readonly maxInFlightObserved: number;
  readonly commits: number;
}

/**
 * The Kafka (or embedded) source as an RxJS stream of acknowledgeable records, with the three
 * promises the runtime rests on: offsets committed only through completed records (watermarks),
 * at most `maxInFlight` records outstanding (partitions paused at the bound, never an unbounded
 * buffer), and a stop that drains and commits.
 */
export function createRecordSource(transport: Transport, options: RecordSourceOptions): RecordSource {
  const consumer: TransportConsumer = transport.consumer({
    groupId: options.groupId,
    topics: options.topics,
    ...(options.fromBeginning === undefined ? {} : { fromBeginning: options.fromBeginning }),
    ...(options.assignment === undefined ? {} : { assignment: options.assignment }),
  });
  const log = options.log ?? (() => undefined);
  const metrics = options.metrics;
  const watermarks = new OffsetWatermarks();
  const lastCommitted = new Map<string, bigint>();
  const gate = new InFlightGate(options.maxInFlight, options.resumeBelow ?? Math.floor(options.maxInFlight / 2), {
    pause: () => consumer.pause(),
    resume: () => consumer.resume(),
    onChange: (n) => metrics?.inFlight.set(n),
  });
  const subject = new Subject<SourceRecord>();
  const turns = new EventLoopTurns();
  let commits = 0;
  /** Bumped by every assignment: a record handed over under an earlier one is of a stale generation. */
  let generation = 0;
  let commitTimer: NodeJS.Timeout | undefined;
  let committing: Promise<void> | undefined;

  const commit = async (): Promise<void> => {
    if (committing) return committing;
    const offsets = watermarks.committable(lastCommitted);
    if (offsets.length === 0) return;
    committing = consumer
      .commit(offsets)
      .then(() => {
        for (const o of offsets) lastCommitted.set(OffsetWatermarks.partitionKey(o.topic, o.partition), o.offset);
        commits += 1;
        metrics?.commits.inc();
      })
      .catch((error: unknown) => {
        // Typically a rebalance in progress; the next tick (or the final commit) tries again.
        log('warn', 'offset commit failed', { error: String(error) });
      })
      .finally(() => {
        committing = undefined;
      });
    return committing;
  };

  return {
    records$: subject.asObservable(),
    async start() {
      commitTimer = setInterval(() => void commit(), options.commitIntervalMs ?? 1000);
      await consumer.start({
        deliver: async (record, heartbeat) => {
          const handedOverIn = generation;
          if (!(await gate.admit(heartbeat))) return false;
          if (generation !== handedOverIn) {
            // The group rebalanced while the record waited at the gate: it belongs to the old
            // generation, whose positions were reset. Tracked now, it would make offsets past the
            // new generation's unprocessed records committable. Drop it untracked (its batch stops
            // here); the new generation delivers it again from the committed offset.
            gate.release();
            return false;
          }
          if (watermarks.isRewind(record.topic, record.partition, record.offset)) {
            // The transport went back to the committed offset (a rebalance): start this partition over.
            watermarks.reset(record.topic, record.partition);
            lastCommitted.delete(OffsetWatermarks.partitionKey(record.topic, record.partition));
          }
          let released = false;
          const release = (): void => {
            if (released) return;
            released = true;
            gate.release();
          };
          const ack = watermarks.track(record.topic, record.partition, record.offset, release);
          subject.next({
            record,
            ack,
            abandon: () => {
              if (released) return;
              release();
            },
          });
          // The processor's synchronous part ran inside next(): past the budget, give timers and
          // I/O a turn, then heartbeat (a failure, the group rebalancing, must reach the client).
          if (turns.due()) {
            await turns.take();
            await heartbeat();
          }
          return true;
        },
        onAssignment: (assigned) => {
          // A new generation restarts from the committed offsets; earlier in-flight records still
          // finish on detached handles, and their outputs are idempotent.
          generation += 1;
          watermarks.resetAll();
          lastCommitted.clear();
          options.onAssignment?.(assigned);
        },
        onLag: (topic, partition, lag) => metrics?.lag.set(topic, partition, lag),
        onCrash: (error) => subject.error(error),
      });
    },
    async stop(drainMs: number) {
      const deadline = Date.now() + drainMs;
      // Order matters: the group must still be live for the final commit (kafkajs forgets it on
      // stop), so pause fetching and drain first, commit, and only then leave the group.
      gate.close();
      consumer.pause();
      while (gate.inFlight > 0 && Date.now() < deadline) await sleep(20);
      if (gate.inFlight > 0) {
        // Only a broker keeps what was not committed; the embedded log ends with the process.
        const fate = transport.kind === 'kafka' ? 'they will be redelivered' : 'they end with the process';
        log('warn', `stopped with records in flight; ${fate}`, { inFlight: gate.inFlight });
      }
      if (commitTimer) clearInterval(commitTimer);
      await committing;
      await commit();
      await consumer.stop().catch((error: unknown) => log('warn', 'consumer stop failed', { error: String(error) }));
      subject.complete();
      await consumer.disconnect().catch(() => undefined);
    },
    commit,
    get inFlight() {
      return gate.inFlight;
    },
    get maxInFlightObserved() {
      return gate.maxInFlightObserved;
    },
    get commits() {
      return commits;
    },
  };
}

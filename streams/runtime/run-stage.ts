import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { isObservable, lastValueFrom, toArray, type Observable } from 'rxjs';
import { fullJitterDelay, type BackoffPolicy } from '../../processors/retry/backoff.js';
import { DeadLetterWriter } from './dead-letter-writer.js';
import { defaultStageLogger, type StageLogger } from '../telemetry/logger.js';
import type { StageMetrics } from '../telemetry/metrics.js';
import type { InputHandle } from './offset-watermarks.js';
import { createRecordSource, type SourceRecord } from './record-source.js';
import type { Sink } from './sink.js';
import { asStageError, StageError } from './stage-error.js';
import { headerText, type RawRecord, type TopicPartition, type Transport } from './transport.js';
import { NAME_PREFIX } from '../pipeline/topics.js';

/** What a processor sees: the decoded value and where it came from. No Kafka types leak through. */
export interface Envelope<T> {
  value: T;
  key: string | null;
  headers: Record<string, string>;
  topic: string;
  partition: number;
  offset: string;
  /** Record timestamp, ms since epoch. */
  timestamp: number;
}

/** One derived output, addressed to a named sink. `id` names it in a dead letter if it is refused. */
export interface StageOutput {
  sink: string;
  item: unknown;
  id?: string;
}

/** A processor maps one input to zero or more outputs: an array, a promise of one, or an Observable. */
export type Processor<In> = (input: Envelope<In>) => Observable<StageOutput> | Promise<StageOutput[]> | StageOutput[];

export type { LogLevel, StageLogger } from '../telemetry/logger.js';

/**
 * The product's log (streams/telemetry/logger: JSON lines on stderr, each stage through its own
 * child logger); never record bodies (only coordinates and error codes reach a log).
 */
export const stderrLogger: StageLogger = defaultStageLogger;

export interface StageConfig<In> {
  /** Processor name: metric label, dead-letter header, default consumer group `neon.<name>`. */
  name: string;
  inputTopics: string[];
  groupId?: string;
  fromBeginning?: boolean;
  /** How the group shares partitions; see ConsumerOptions.assignment. Default `balanced`. */
  assignment?: 'balanced' | 'single-active';
  /** Told of every new assignment (after each rebalance), before its first record is processed. */
  onAssignment?: (assigned: TopicPartition[]) => void;
  /** Bytes → value; throws a StageError (undecodable, unknown_schema, invalid_record) for poison. */
  decode: (record: RawRecord) => In;
  process: Processor<In>;
  // Sinks take different item types; the processor decides which item goes where.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  sinks: Record<string, Sink<any>>;
  /** Inputs admitted but not complete, at most (the back-pressure bound). Default 1,000. */
  maxInFlight?: number;
  /** Paused partitions resume when in-flight work falls to this. Default maxInFlight / 2. */
  resumeBelow?: number;
  commitIntervalMs?: number;
  /** Drain budget on stop; the whole stop stays within 30 s. Default 25 s. */
  shutdownTimeoutMs?: number;
  /** Attempts of a processor failing with a retriable error before the stage gives up. Default 5. */
  maxProcessorAttempts?: number;
  backoff?: BackoffPolicy;
  metrics?: StageMetrics;
  log?: StageLogger;
  /** Where permanent failures go. Default `neon.dlq`. */
  deadLetterTopic?: string;
}

export interface StageStats {
  inFlight: number;
  maxInFlightObserved: number;
  received: number;
  completed: number;
  deadLettered: number;
  commits: number;
}

export interface RunningStage {
  /** Resolves after a clean stop; rejects with the fatal error if the stage died. */
  readonly done: Promise<void>;
  /**
   * Stop fetching, drain, commit, close — idempotent. `drainMs` overrides the drain budget (0: do
   * not wait for in-flight records; their offsets stay uncommitted and they are redelivered).
   */
  stop(drainMs?: number): Promise<void>;
  stats(): StageStats;
}

/** A record's failure during a stop that ran out of time: not its fault, so neither dead-lettered nor fatal. */
class AbandonedAtStop extends Error {
  override readonly name = 'AbandonedAtStop';
  constructor(readonly failure: StageError) {
    super(failure.message);
  }
}

/** The dead-letter topic's name among the sinks, in `neon_stage_retries_total`. */
const DEAD_LETTER_SINK = 'dead-letters';

/**
 * Full jitter spreads retries of many inputs instead of synchronising them. The loops count their
 * first retry as 0 (sinks, dead letters) or 1 (the processor): either way a ceiling of base · 2^attempt.
 */
function backoffMs(attempt: number, policy: BackoffPolicy): number {
  return fullJitterDelay(attempt + 1, policy);
}

function collect(result: Observable<StageOutput> | Promise<StageOutput[]> | StageOutput[]): Promise<StageOutput[]> {
  if (isObservable(result)) return lastValueFrom(result.pipe(toArray()));
  return Promise.resolve(result);
}

/**
 * Runs one processor over its input topics: at-least-once, with offsets committed only up to the
 * highest contiguous input whose every output was acknowledged (or dead-lettered), in-flight work
 * bounded by pausing partitions, poison dead-lettered with its original bytes, and a graceful stop.
 * Idempotence is the sinks' job: deterministic ids and keys make redelivery harmless.
 */
export async function startStage<In>(transport: Transport, config: StageConfig<In>): Promise<RunningStage> {
  const stage = config.name;
  const log = config.log ?? stderrLogger;
  const maxInFlight = config.maxInFlight ?? 1000;
  const backoff = config.backoff ?? { baseMs: 100, capMs: 10_000 };
  const maxProcessorAttempts = config.maxProcessorAttempts ?? 5;
  const shutdownTimeoutMs = config.shutdownTimeoutMs ?? 25_000;
  const metrics = config.metrics;

  const source = createRecordSource(transport, {
    groupId: config.groupId ?? `${NAME_PREFIX}neon.${stage}`,
    topics: config.inputTopics,
    ...(config.fromBeginning === undefined ? {} : { fromBeginning: config.fromBeginning }),
    ...(config.assignment === undefined ? {} : { assignment: config.assignment }),
    ...(config.onAssignment === undefined ? {} : { onAssignment: config.onAssignment }),
    maxInFlight,
    ...(config.resumeBelow === undefined ? {} : { resumeBelow: config.resumeBelow }),
    ...(config.commitIntervalMs === undefined ? {} : { commitIntervalMs: config.commitIntervalMs }),
    ...(metrics ? { metrics } : {}),
    log: (level, message, fields) => log(level, message, { stage, ...fields }),
  });
  const producer = transport.producer();
  const deadLetters = new DeadLetterWriter(producer, stage, config.deadLetterTopic);
  const stats = { received: 0, completed: 0, deadLettered: 0 };
  let stopping: Promise<void> | undefined;
  let fatal: StageError | undefined;
  let resolveDone!: () => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  done.catch(() => undefined); // observed by the caller; never an unhandled rejection here

  const deadLetter = async (record: RawRecord, error: StageError, outputId?: string): Promise<void> => {
    metrics?.errors.inc(error.code);
    // The dead-letter topic is a sink like any other: a failed write is an outage, waited out with
    // the sinks' backoff while the input stays unacknowledged (its offset uncommitted, so nothing is
    // lost). Only a stop that ran out of time gives the input up, to be redelivered.
    for (let attempt = 0; ; attempt++) {
      try {
        await deadLetters.write(record, error, outputId);
        break;
      } catch (cause) {
        const failure = new StageError(
          'kafka_unavailable',
          `dead letter for ${record.topic}/${record.partition}@${record.offset} failed: ${String(cause)}`,
          stage,
          { cause },
        );
        if (stopDeadlinePassed()) throw new AbandonedAtStop(failure);
        if (attempt === 0) {
          log('warn', 'dead-letter write failed; retrying', {
            stage,
            topic: record.topic,
            partition: record.partition,
            offset: record.offset,
            error: String(cause),
          });
        }
        metrics?.retries.inc(DEAD_LETTER_SINK);
        metrics?.errors.inc(failure.code);
        await sleep(backoffMs(attempt, backoff));
      }
    }
    stats.deadLettered += 1;
    metrics?.discarded.inc('dead_lettered');
    metrics?.deadLetters.inc(error.code);
    log('warn', 'dead-lettered', {
      stage,
      code: error.code,
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      ...(outputId === undefined ? {} : { output: outputId }),
    });
  };

  const writeOutput = async (record: RawRecord, handle: InputHandle, output: StageOutput): Promise<void> => {
    const sink = config.sinks[output.sink];
    if (!sink) throw new StageError('internal', `processor emitted to unknown sink "${output.sink}"`, stage);
    for (let attempt = 0; ; attempt++) {
      try {
        await sink.write(output.item);
        metrics?.sent.inc(sink.name);
        handle.outputAcknowledged();
        return;
      } catch (error) {
        const failure = asStageError(error, sink.name);
        if (failure.disposition === 'dead_letter') {
          await deadLetter(record, failure, output.id);
          handle.outputAcknowledged();
          return;
        }
        // An outage: keep the input unacknowledged and retry; the in-flight bound holds the
        // consumer back meanwhile. Only a stop that ran out of time gives up (uncommitted: redelivered).
        if (stopDeadlinePassed()) throw new AbandonedAtStop(failure);
        if (failure.disposition === 'fatal') throw failure;
        metrics?.retries.inc(sink.name);
        metrics?.errors.inc(failure.code);
        await sleep(backoffMs(attempt, backoff));
      }
    }
  };

  const handleRecord = async ({ record, ack: handle }: SourceRecord): Promise<void> => {
    const started = performance.now();
    stats.received += 1;
    metrics?.received.inc();
    let value: In;
    try {
      value = config.decode(record);
    } catch (error) {
      await deadLetter(record, asStageError(error, stage));
      handle.complete();
      return;
    }
    const envelope: Envelope<In> = {
      value,
      key: record.key?.toString() ?? null,
      headers: headerText(record.headers),
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      timestamp: Number(record.timestamp),
    };
    let outputs: StageOutput[] | undefined;
    for (let attempt = 1; outputs === undefined; attempt++) {
      try {
        outputs = await collect(config.process(envelope));
      } catch (error) {
        const failure = asStageError(error, stage);
        // Past the stop's deadline a failure says more about the shutdown (a closed embedder or
        // client) than about the record: give it up uncommitted, to be redelivered.
        if (stopDeadlinePassed()) throw new AbandonedAtStop(failure);
        if (failure.disposition === 'dead_letter') {
          await deadLetter(record, failure);
          handle.complete();
          return;
        }
        if (failure.disposition === 'fatal' || attempt >= maxProcessorAttempts) throw failure;
        metrics?.errors.inc(failure.code);
        await sleep(backoffMs(attempt, backoff));
      }
    }
    handle.addOutputs(outputs.length);
    handle.seal();
    if (outputs.length === 0) metrics?.discarded.inc('filtered');
    await Promise.all(outputs.map((output) => writeOutput(record, handle, output)));
    stats.completed += 1;
    metrics?.processingSeconds.observe((performance.now() - started) / 1000);
  };

  let stopDeadline = Number.POSITIVE_INFINITY;
  const stopDeadlinePassed = (): boolean => Date.now() >= stopDeadline;

  const fail = (error: unknown): void => {
    fatal ??= asStageError(error, stage);
    log('error', 'stage failed', { stage, code: fatal.code, error: fatal.message });
    void stop();
  };

  // An input that failed fatally never completes: abandon it (its offset is never committed, so a
  // restart redelivers it) so that the stop does not wait for it.
  const handleSafely = async (item: SourceRecord): Promise<void> => {
    try {
      await handleRecord(item);
    } catch (error) {
      item.abandon();
      if (error instanceof AbandonedAtStop) {
        log('info', 'record given up at stop, uncommitted', {
          stage,
          code: error.failure.code,
          topic: item.record.topic,
          partition: item.record.partition,
          offset: item.record.offset,
        });
        return;
      }
      fail(error);
    }
  };
  // Concurrency is bounded where records enter: the source hands out at most maxInFlight of them
  // (pausing partitions at the bound), so each is simply handled as it arrives — no operator queue.
  source.records$.subscribe({
    next: (item) => void handleSafely(item),
    error: (error: unknown) => fail(new StageError('kafka_unavailable', `consumer crashed: ${String(error)}`, stage)),
  });

  const stop = (drainMs = shutdownTimeoutMs): Promise<void> => {
    stopping ??= (async () => {
      stopDeadline = Date.now() + drainMs;
      await source.stop(drainMs);
      await Promise.allSettled(Object.values(config.sinks).map((sink) => sink.close()));
      await producer.disconnect().catch(() => undefined);
      if (fatal) rejectDone(fatal);
      else resolveDone();
    })();
    return stopping;
  };

  await source.start();

  return {
    done,
    stop,
    stats: () => ({
      ...stats,
      commits: source.commits,
      inFlight: source.inFlight,
      maxInFlightObserved: source.maxInFlightObserved,
    }),
  };
}

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { STAGE_ERROR_CODES, type StageErrorCode } from '../runtime/stage-error.js';

/**
 * One naming scheme for every stage. Every label value is bounded: stage and sink names come from
 * code, error codes from the closed StageErrorCode list, discard reasons from a closed union, and
 * topic/partition from the consumer's assignment. Raw error text can never become a label because
 * the helpers below do not accept a string where a code is expected.
 *
 * Retried work is counted in `retries`, not in `errors` or `discarded`: a retry is not a loss.
 */

export const METRIC_PREFIX = 'neon_';

export const METRIC_NAMES = {
  received: 'neon_stage_records_received_total',
  sent: 'neon_stage_records_sent_total',
  errors: 'neon_stage_errors_total',
  discarded: 'neon_stage_records_discarded_total',
  processingSeconds: 'neon_stage_processing_seconds',
  inFlight: 'neon_stage_in_flight',
  lag: 'neon_consumer_lag',
  commits: 'neon_stage_offset_commits_total',
  retries: 'neon_stage_retries_total',
  deadLetters: 'neon_dead_letters_total',
} as const;

/** Publish → acknowledged by the datastore, per datastore (recorded by the index stages). */
export const FRESHNESS_METRIC = 'neon_freshness_seconds';

/** Why a record left a stage without an output. */
export const DISCARD_REASONS = ['dead_lettered', 'filtered', 'duplicate'] as const;
export type DiscardReason = (typeof DISCARD_REASONS)[number];

/** From a trivial in-memory processor (1 ms) to an LLM call or a bulk write under back-pressure (30 s). */
export const PROCESSING_SECONDS_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** A registry with Node's process metrics (CPU, heap, event-loop lag, GC) under the `neon_` prefix. */
export function createMetricsRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  return registry;
}

export interface StageMetrics {
  readonly stage: string;
  received: { inc(count?: number): void };
  sent: { inc(sink: string, count?: number): void };
  errors: { inc(code: StageErrorCode, count?: number): void };
  discarded: { inc(reason: DiscardReason, count?: number): void };
  processingSeconds: {
    observe(seconds: number): void;
    /** Returns a function that records the elapsed time and returns it in seconds. */
    startTimer(): () => number;
  };
  inFlight: { inc(count?: number): void; dec(count?: number): void; set(value: number): void };
  lag: {
    set(topic: string, partition: number, messages: number): void;
    /** Drops the series of a partition this stage no longer owns, so a stale lag is not reported. */
    remove(topic: string, partition: number): void;
  };
  commits: { inc(count?: number): void };
  /** Records written to the dead-letter topic, by the closed error code that sent them there. */
  deadLetters: { inc(code: StageErrorCode, count?: number): void };
  retries: { inc(sink: string, count?: number): void };
}

/**
 * Every stage in one process shares the same metric objects: registering a name twice would throw,
 * and two families with one name would be invalid exposition anyway. Exported for the stages'
 * own metric families (spikes, LLM calls), which follow the same rule.
 */
export function counter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Counter) return existing;
  if (existing !== undefined) throw new TypeError(`metric ${name} is already registered with another type`);
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
}

export function gauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Gauge<L> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Gauge) return existing;
  if (existing !== undefined) throw new TypeError(`metric ${name} is already registered with another type`);
  return new Gauge<L>({ name, help, labelNames, registers: [registry] });
}

export function histogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: readonly number[],
): Histogram<L> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Histogram) return existing;
  if (existing !== undefined) throw new TypeError(`metric ${name} is already registered with another type`);
  return new Histogram<L>({ name, help, labelNames, buckets: [...buckets], registers: [registry] });
}

const KNOWN_CODES: ReadonlySet<string> = new Set(STAGE_ERROR_CODES);
const KNOWN_REASONS: ReadonlySet<string> = new Set(DISCARD_REASONS);

/**
 * The metrics of one stage, with the `stage` label bound. Safe to call again for the same or
 * another stage on the same registry: the families are registered once and shared.
 */
export function stageMetrics(registry: Registry, stage: string): StageMetrics {
  const received = counter(registry, METRIC_NAMES.received, 'Records a stage took from its input.', ['stage']);
  const sent = counter(registry, METRIC_NAMES.sent, 'Records a sink acknowledged.', ['stage', 'sink']);
  const errors = counter(registry, METRIC_NAMES.errors, 'Failures, by closed error code.', ['stage', 'code']);
  const discarded = counter(
    registry,
    METRIC_NAMES.discarded,
    'Records that left a stage without an output, by reason.',
    ['stage', 'reason'],
  );
  const processing = histogram(
    registry,
    METRIC_NAMES.processingSeconds,
    'Time from taking a record to acknowledging its outputs.',
    ['stage'],
    PROCESSING_SECONDS_BUCKETS,
  );
  const inFlight = gauge(registry, METRIC_NAMES.inFlight, 'Records taken and not yet acknowledged.', ['stage']);
  const lag = gauge(registry, METRIC_NAMES.lag, 'Messages between the committed offset and the end of the partition.', [
    'stage',
    'topic',
    'partition',
  ]);
  const commits = counter(registry, METRIC_NAMES.commits, 'Offset commits.', ['stage']);
  const deadLetters = counter(registry, METRIC_NAMES.deadLetters, 'Records dead-lettered, by error code.', [
    'stage',
    'code',
  ]);
  const retries = counter(registry, METRIC_NAMES.retries, 'Items resent to a sink after a transient failure.', [
    'stage',
    'sink',
  ]);

  return {
    stage,
    received: { inc: (count = 1) => received.inc({ stage }, count) },
    sent: { inc: (sink, count = 1) => sent.inc({ stage, sink }, count) },
    errors: {
      // A cast can smuggle raw text past the type; it still must not become a label.
      inc: (code, count = 1) => errors.inc({ stage, code: KNOWN_CODES.has(code) ? code : 'internal' }, count),
    },
    discarded: {
      inc: (reason, count = 1) => {
        if (!KNOWN_REASONS.has(reason)) throw new TypeError(`unknown discard reason`);
        discarded.inc({ stage, reason }, count);
      },
    },
    processingSeconds: {
      observe: (seconds) => processing.observe({ stage }, seconds),
      startTimer: () => processing.startTimer({ stage }),
    },
    inFlight: {
      inc: (count = 1) => inFlight.inc({ stage }, count),
      dec: (count = 1) => inFlight.dec({ stage }, count),
      set: (value) => inFlight.set({ stage }, value),
    },
    lag: {
      set: (topic, partition, messages) => lag.set({ stage, topic, partition: String(partition) }, messages),
      remove: (topic, partition) => lag.remove({ stage, topic, partition: String(partition) }),
    },
    commits: { inc: (count = 1) => commits.inc({ stage }, count) },
    deadLetters: {
      inc: (code, count = 1) => deadLetters.inc({ stage, code: KNOWN_CODES.has(code) ? code : 'internal' }, count),
    },
    retries: { inc: (sink, count = 1) => retries.inc({ stage, sink }, count) },
  };
}

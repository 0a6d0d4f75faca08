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

/** From a live article indexed within a second to a replay of last month's news. */
export const FRESHNESS_SECONDS_BUCKETS: readonly number[] = [
  0.5,
  1,
  2,
  5,
  10,
  30,
  60,
  300,
  900,
  3600,
  6 * 3600,
  86_400,
  7 * 86_400,
];

/** From a short local answer to a long answer after retries and a wait for a slot. */
export const LLM_LATENCY_BUCKETS: readonly number[] = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];

/** From a cached spike list (ms) to an LLM-written answer (seconds). */
export const HTTP_SECONDS_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** One metric family as `/metrics` shows it: its name, type, help line and label names (and buckets). */
export interface MetricFamily<T extends MetricType = MetricType, L extends string = string> {
  readonly type: T;
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  /** Histograms only. */
  readonly buckets?: readonly number[];
}

const family = <T extends MetricType, L extends string>(spec: MetricFamily<T, L>): MetricFamily<T, L> => spec;

/**
 * Every metric family the product exposes, declared here once; the modules that record them
 * (stage runtime, article publisher, index, extract and spike stages, the LLM client, the API)
 * register them from this table, so a name, help text or label set is never written twice and
 * one place lists what `/metrics` can show. Node's process metrics (`neon_process_*`,
 * `neon_nodejs_*`) come from prom-client's defaults.
 */
export const METRIC_FAMILIES = {
  // The stage runtime (every stage; the article publisher counts as stage `intake`).
  stageReceived: family({
    type: 'counter',
    name: METRIC_NAMES.received,
    help: 'Records a stage took from its input.',
    labelNames: ['stage'],
  }),
  stageSent: family({
    type: 'counter',
    name: METRIC_NAMES.sent,
    help: 'Records a sink acknowledged.',
    labelNames: ['stage', 'sink'],
  }),
  stageErrors: family({
    type: 'counter',
    name: METRIC_NAMES.errors,
    help: 'Failures, by closed error code.',
    labelNames: ['stage', 'code'],
  }),
  stageDiscarded: family({
    type: 'counter',
    name: METRIC_NAMES.discarded,
    help: 'Records that left a stage without an output, by reason.',
    labelNames: ['stage', 'reason'],
  }),
  stageProcessingSeconds: family({
    type: 'histogram',
    name: METRIC_NAMES.processingSeconds,
    help: 'Time from taking a record to acknowledging its outputs.',
    labelNames: ['stage'],
    buckets: PROCESSING_SECONDS_BUCKETS,
  }),
  stageInFlight: family({
    type: 'gauge',
    name: METRIC_NAMES.inFlight,
    help: 'Records taken and not yet acknowledged.',
    labelNames: ['stage'],
  }),
  consumerLag: family({
    type: 'gauge',
    name: METRIC_NAMES.lag,
    help: 'Messages between the committed offset and the end of the partition.',
    labelNames: ['stage', 'topic', 'partition'],
  }),
  stageCommits: family({
    type: 'counter',
    name: METRIC_NAMES.commits,
    help: 'Offset commits.',
    labelNames: ['stage'],
  }),
  deadLetters: family({
    type: 'counter',
    name: METRIC_NAMES.deadLetters,
    help: 'Records dead-lettered, by error code.',
    labelNames: ['stage', 'code'],
  }),
  stageRetries: family({
    type: 'counter',
    name: METRIC_NAMES.retries,
    help: 'Items resent to a sink after a transient failure.',
    labelNames: ['stage', 'sink'],
  }),
  // The index stages.
  freshness: family({
    type: 'histogram',
    name: FRESHNESS_METRIC,
    help: 'Seconds from an article’s publish time until its document was acknowledged by the datastore.',
    labelNames: ['datastore'],
    buckets: FRESHNESS_SECONDS_BUCKETS,
  }),
  // The spike detector.
  spikeMentions: family({
    type: 'counter',
    name: 'neon_spike_mentions_total',
    help: 'Mentions seen by the spike detector, by outcome.',
    labelNames: ['outcome'],
  }),
  spikeAlerts: family({
    type: 'counter',
    name: 'neon_spike_alerts_total',
    help: 'Spike alert states sent.',
    labelNames: ['granularity', 'state'],
  }),
  spikeTrackedEntities: family({
    type: 'gauge',
    name: 'neon_spike_tracked_entities',
    help: 'Entities the spike detector holds counts for.',
    labelNames: [],
  }),
  spikeOpenEpisodes: family({
    type: 'gauge',
    name: 'neon_spike_open_episodes',
    help: 'Spike episodes currently open.',
    labelNames: [],
  }),
  // Extraction.
  extractChunks: family({
    type: 'counter',
    name: 'neon_extract_chunks_total',
    help: 'Unique chunks seen by extraction, by outcome.',
    labelNames: ['outcome'],
  }),
  extractInteractions: family({
    type: 'counter',
    name: 'neon_extract_interactions_total',
    help: 'Interactions written, by variant.',
    labelNames: ['variant'],
  }),
  extractRepeated: family({
    type: 'counter',
    name: 'neon_extract_repeated_interactions_total',
    help: 'Interactions not written because the same statement (time, text, pair of entities) just was: a sentence two chunks share, or both directions of one link.',
    labelNames: ['variant'],
  }),
  extractRejected: family({
    type: 'counter',
    name: 'neon_extract_rejected_tuples_total',
    help: 'Tuples an LLM reply held that grounding refused, by reason.',
    labelNames: ['reason'],
  }),
  extractRepaired: family({
    type: 'counter',
    name: 'neon_extract_repaired_replies_total',
    help: 'Invalid replies fixed by the one retry.',
    labelNames: ['variant'],
  }),
  extractM2Batches: family({
    type: 'counter',
    name: 'neon_extract_m2_batches_total',
    help: 'M2 batches extracted, by what closed them.',
    labelNames: ['closed_by'],
  }),
  extractBackfilledChunks: family({
    type: 'counter',
    name: 'neon_extract_backfilled_chunks_total',
    help: 'Earlier chunks of an entity that started spiking, by outcome: extracted (M1) for it, over_cap (past the per-episode cap, not extracted) or failed (given up).',
    labelNames: ['outcome'],
  }),
  // The LLM client.
  llmCalls: family({
    type: 'counter',
    name: 'neon_llm_calls_total',
    help: 'Completions asked for, by how they ended.',
    labelNames: ['purpose', 'outcome'],
  }),
  llmTokens: family({
    type: 'counter',
    name: 'neon_llm_tokens_total',
    help: 'Tokens billed by the endpoint (cached answers excluded), by direction.',
    labelNames: ['purpose', 'direction'],
  }),
  llmCost: family({
    type: 'counter',
    name: 'neon_llm_cost_estimate_total',
    help: 'Estimated cost of the tokens billed, in the unit of NEON_LLM_PRICE_IN_PER_1K / NEON_LLM_PRICE_OUT_PER_1K.',
    labelNames: ['purpose'],
  }),
  llmLatency: family({
    type: 'histogram',
    name: 'neon_llm_latency_seconds',
    help: 'Time of an uncached completion, waiting for a slot and retries included.',
    labelNames: ['purpose'],
    buckets: LLM_LATENCY_BUCKETS,
  }),
  llmFailures: family({
    type: 'counter',
    name: 'neon_llm_failures_total',
    help: 'Completions that failed, by closed error code.',
    labelNames: ['code'],
  }),
  llmRetries: family({
    type: 'counter',
    name: 'neon_llm_retries_total',
    help: 'Attempts that failed transiently and were tried again, by error code.',
    labelNames: ['code'],
  }),
  llmCacheHits: family({
    type: 'counter',
    name: 'neon_llm_cache_hits_total',
    help: 'Completions answered from the response cache.',
    labelNames: ['layer'],
  }),
  llmInFlight: family({
    type: 'gauge',
    name: 'neon_llm_requests_in_flight',
    help: 'Requests holding one of the concurrency slots.',
    labelNames: [],
  }),
  llmQueued: family({
    type: 'gauge',
    name: 'neon_llm_requests_queued',
    help: 'Requests waiting for a concurrency slot.',
    labelNames: [],
  }),
  // The HTTP API.
  httpRequestSeconds: family({
    type: 'histogram',
    name: 'neon_http_request_seconds',
    help: 'API request latency by route and status class.',
    labelNames: ['route', 'method', 'status'],
    buckets: HTTP_SECONDS_BUCKETS,
  }),
} as const;

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
 * and two families with one name would be invalid exposition anyway. The product registers the
 * families of METRIC_FAMILIES through counterOf, gaugeOf and histogramOf below.
 */
function counter<L extends string>(
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

function gauge<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Gauge<L> {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Gauge) return existing;
  if (existing !== undefined) throw new TypeError(`metric ${name} is already registered with another type`);
  return new Gauge<L>({ name, help, labelNames, registers: [registry] });
}

function histogram<L extends string>(
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

/** A family of METRIC_FAMILIES on a registry, registered on first use and shared after. */
export function counterOf<L extends string>(registry: Registry, spec: MetricFamily<'counter', L>): Counter<L> {
  return counter(registry, spec.name, spec.help, spec.labelNames);
}

export function gaugeOf<L extends string>(registry: Registry, spec: MetricFamily<'gauge', L>): Gauge<L> {
  return gauge(registry, spec.name, spec.help, spec.labelNames);
}

export function histogramOf<L extends string>(registry: Registry, spec: MetricFamily<'histogram', L>): Histogram<L> {
  return histogram(registry, spec.name, spec.help, spec.labelNames, spec.buckets ?? []);
}

const KNOWN_CODES: ReadonlySet<string> = new Set(STAGE_ERROR_CODES);
const KNOWN_REASONS: ReadonlySet<string> = new Set(DISCARD_REASONS);

/**
 * The metrics of one stage, with the `stage` label bound. Safe to call again for the same or
 * another stage on the same registry: the families are registered once and shared.
 */
export function stageMetrics(registry: Registry, stage: string): StageMetrics {
  const families = METRIC_FAMILIES;
  const received = counterOf(registry, families.stageReceived);
  const sent = counterOf(registry, families.stageSent);
  const errors = counterOf(registry, families.stageErrors);
  const discarded = counterOf(registry, families.stageDiscarded);
  const processing = histogramOf(registry, families.stageProcessingSeconds);
  const inFlight = gaugeOf(registry, families.stageInFlight);
  const lag = gaugeOf(registry, families.consumerLag);
  const commits = counterOf(registry, families.stageCommits);
  const deadLetters = counterOf(registry, families.deadLetters);
  const retries = counterOf(registry, families.stageRetries);

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

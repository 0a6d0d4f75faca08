import type { Registry } from 'prom-client';
import { counter, gauge, histogram } from '../telemetry/metrics.js';
import type { ChatModelErrorCode } from '../../processors/extract/chat-model.js';
import type { CacheLayer } from '../../processors/extract/response-cache.js';

export const LLM_METRIC_NAMES = {
  calls: 'neon_llm_calls_total',
  tokens: 'neon_llm_tokens_total',
  cost: 'neon_llm_cost_estimate_total',
  latency: 'neon_llm_latency_seconds',
  failures: 'neon_llm_failures_total',
  retries: 'neon_llm_retries_total',
  cacheHits: 'neon_llm_cache_hits_total',
  inFlight: 'neon_llm_requests_in_flight',
  queued: 'neon_llm_requests_queued',
} as const;

/** Callers named in the `purpose` label; any other purpose is counted as `other`. */
export const DEFAULT_LLM_PURPOSES = ['m1', 'm2', 'answer'] as const;

/** One complete() call ends in exactly one of these. */
export type CallOutcome = 'ok' | 'cached' | 'failed';

const ERROR_CODES = {
  llm_unavailable: true,
  llm_rate_limited: true,
  llm_timeout: true,
  llm_budget_exhausted: true,
  llm_rejected: true,
  llm_unauthorized: true,
} as const satisfies Record<ChatModelErrorCode, true>;

/** From a short local answer to a long answer after retries and a wait for a slot. */
export const LLM_LATENCY_BUCKETS: readonly number[] = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];

export interface LlmMetrics {
  call(purpose: string, outcome: CallOutcome): void;
  tokens(purpose: string, prompt: number, completion: number): void;
  cost(purpose: string, amount: number): void;
  latency(purpose: string, seconds: number): void;
  failure(code: ChatModelErrorCode): void;
  retry(code: ChatModelErrorCode): void;
  cacheHit(layer: CacheLayer): void;
  inFlight(delta: number): void;
  queued(delta: number): void;
}

/**
 * The LLM client's families, on the stages' registry and naming scheme. Labels stay bounded:
 * purposes outside the known list become `other`, and error codes outside the closed list (only
 * reachable through a cast) become `llm_unavailable`, so raw text never becomes a label. Gauges are
 * moved by deltas, so several clients on one registry add up instead of overwriting each other.
 */
export function llmMetrics(registry: Registry, purposes: readonly string[] = DEFAULT_LLM_PURPOSES): LlmMetrics {
  const known = new Set(purposes);
  const purposeLabel = (purpose: string): string => (known.has(purpose) ? purpose : 'other');
  const codeLabel = (code: string): string => (Object.hasOwn(ERROR_CODES, code) ? code : 'llm_unavailable');

  const calls = counter(registry, LLM_METRIC_NAMES.calls, 'Completions asked for, by how they ended.', [
    'purpose',
    'outcome',
  ]);
  const tokens = counter(
    registry,
    LLM_METRIC_NAMES.tokens,
    'Tokens billed by the endpoint (cached answers excluded), by direction.',
    ['purpose', 'direction'],
  );
  const cost = counter(
    registry,
    LLM_METRIC_NAMES.cost,
    'Estimated cost of the tokens billed, in the unit of NEON_LLM_PRICE_IN_PER_1K / NEON_LLM_PRICE_OUT_PER_1K.',
    ['purpose'],
  );
  const latency = histogram(
    registry,
    LLM_METRIC_NAMES.latency,
    'Time of an uncached completion, waiting for a slot and retries included.',
    ['purpose'],
    LLM_LATENCY_BUCKETS,
  );
  const failures = counter(registry, LLM_METRIC_NAMES.failures, 'Completions that failed, by closed error code.', [
    'code',
  ]);
  const retries = counter(
    registry,
    LLM_METRIC_NAMES.retries,
    'Attempts that failed transiently and were tried again, by error code.',
    ['code'],
  );
  const cacheHits = counter(registry, LLM_METRIC_NAMES.cacheHits, 'Completions answered from the response cache.', [
    'layer',
  ]);
  const inFlight = gauge(registry, LLM_METRIC_NAMES.inFlight, 'Requests holding one of the concurrency slots.', []);
  const queued = gauge(registry, LLM_METRIC_NAMES.queued, 'Requests waiting for a concurrency slot.', []);

  return {
    call: (purpose, outcome) => calls.inc({ purpose: purposeLabel(purpose), outcome }),
    tokens: (purpose, prompt, completion) => {
      const label = purposeLabel(purpose);
      tokens.inc({ purpose: label, direction: 'prompt' }, prompt);
      tokens.inc({ purpose: label, direction: 'completion' }, completion);
    },
    cost: (purpose, amount) => cost.inc({ purpose: purposeLabel(purpose) }, amount),
    latency: (purpose, seconds) => latency.observe({ purpose: purposeLabel(purpose) }, seconds),
    failure: (code) => failures.inc({ code: codeLabel(code) }),
    retry: (code) => retries.inc({ code: codeLabel(code) }),
    cacheHit: (layer) => cacheHits.inc({ layer }),
    inFlight: (delta) => inFlight.inc(delta),
    queued: (delta) => queued.inc(delta),
  };
}

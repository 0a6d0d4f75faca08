import type { Registry } from 'prom-client';
import { counterOf, gaugeOf, histogramOf, METRIC_FAMILIES } from '../telemetry/metrics.js';
import type { ChatModelErrorCode } from '../../processors/extract/chat-model.js';
import type { CacheLayer } from './response-cache.js';

const F = METRIC_FAMILIES;

export const LLM_METRIC_NAMES = {
  calls: F.llmCalls.name,
  tokens: F.llmTokens.name,
  cost: F.llmCost.name,
  latency: F.llmLatency.name,
  failures: F.llmFailures.name,
  retries: F.llmRetries.name,
  cacheHits: F.llmCacheHits.name,
  inFlight: F.llmInFlight.name,
  queued: F.llmQueued.name,
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

  const calls = counterOf(registry, F.llmCalls);
  const tokens = counterOf(registry, F.llmTokens);
  const cost = counterOf(registry, F.llmCost);
  const latency = histogramOf(registry, F.llmLatency);
  const failures = counterOf(registry, F.llmFailures);
  const retries = counterOf(registry, F.llmRetries);
  const cacheHits = counterOf(registry, F.llmCacheHits);
  const inFlight = gaugeOf(registry, F.llmInFlight);
  const queued = gaugeOf(registry, F.llmQueued);

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

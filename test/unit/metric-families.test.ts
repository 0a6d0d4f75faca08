import type { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { startProductRuntime, type ProductRuntime } from '../../bin/commands/product-runtime.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { llmMetrics } from '../../streams/llm/llm-metrics.js';
import { createMetricsRegistry, METRIC_FAMILIES, type MetricFamily } from '../../streams/telemetry/metrics.js';

interface Exposed {
  name: string;
  type: string;
  help: string;
  labelNames: string[];
  buckets: number[] | undefined;
}

/** What `/metrics` declares for each family: name, type, help and label names (and buckets). */
async function exposedFamilies(registry: Registry): Promise<Exposed[]> {
  const families = await registry.getMetricsAsJSON();
  return families
    .filter((family) => !/^neon_(process_|nodejs_)/.test(family.name))
    .map((family) => {
      const metric = registry.getSingleMetric(family.name) as unknown as {
        labelNames?: string[];
        upperBounds?: number[];
      };
      return {
        name: family.name,
        type: String(family.type),
        help: family.help,
        labelNames: [...(metric.labelNames ?? [])],
        buckets: metric.upperBounds === undefined ? undefined : [...metric.upperBounds],
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The families `/metrics` showed before their declarations were gathered into METRIC_FAMILIES, by
 * name, type and label names: dashboards, alerts (infra/kubernetes/observability.ts) and scrapers
 * depend on them, so a rename or a label change must be deliberate and show up here.
 */
const PUBLISHED: readonly [string, string, readonly string[]][] = [
  ['neon_consumer_lag', 'gauge', ['stage', 'topic', 'partition']],
  ['neon_dead_letters_total', 'counter', ['stage', 'code']],
  ['neon_extract_backfilled_chunks_total', 'counter', ['outcome']],
  ['neon_extract_chunks_total', 'counter', ['outcome']],
  ['neon_extract_interactions_total', 'counter', ['variant']],
  ['neon_extract_m2_batches_total', 'counter', ['closed_by']],
  ['neon_extract_rejected_tuples_total', 'counter', ['reason']],
  ['neon_extract_repaired_replies_total', 'counter', ['variant']],
  ['neon_extract_repeated_interactions_total', 'counter', ['variant']],
  ['neon_freshness_seconds', 'histogram', ['datastore']],
  ['neon_http_request_seconds', 'histogram', ['route', 'method', 'status']],
  ['neon_llm_cache_hits_total', 'counter', ['layer']],
  ['neon_llm_calls_total', 'counter', ['purpose', 'outcome']],
  ['neon_llm_cost_estimate_total', 'counter', ['purpose']],
  ['neon_llm_failures_total', 'counter', ['code']],
  ['neon_llm_latency_seconds', 'histogram', ['purpose']],
  ['neon_llm_requests_in_flight', 'gauge', []],
  ['neon_llm_requests_queued', 'gauge', []],
  ['neon_llm_retries_total', 'counter', ['code']],
  ['neon_llm_tokens_total', 'counter', ['purpose', 'direction']],
  ['neon_spike_alerts_total', 'counter', ['granularity', 'state']],
  ['neon_spike_mentions_total', 'counter', ['outcome']],
  ['neon_spike_open_episodes', 'gauge', []],
  ['neon_spike_tracked_entities', 'gauge', []],
  ['neon_stage_errors_total', 'counter', ['stage', 'code']],
  ['neon_stage_in_flight', 'gauge', ['stage']],
  ['neon_stage_offset_commits_total', 'counter', ['stage']],
  ['neon_stage_processing_seconds', 'histogram', ['stage']],
  ['neon_stage_records_discarded_total', 'counter', ['stage', 'reason']],
  ['neon_stage_records_received_total', 'counter', ['stage']],
  ['neon_stage_records_sent_total', 'counter', ['stage', 'sink']],
  ['neon_stage_retries_total', 'counter', ['stage', 'sink']],
];

let runtime: ProductRuntime | undefined;
const registry = createMetricsRegistry();

beforeAll(async () => {
  // The LLM client registers its families when one is configured; none is here, so ask for them.
  llmMetrics(registry);
  runtime = await startProductRuntime({
    mode: 'embedded',
    transport: createEmbeddedTransport(),
    datastore: new EmbeddedDatastore('neon'),
    config: loadProductConfig({ NEON_EMBEDDER: 'hashing' }),
    api: { port: 0 },
    metricsPort: null,
    say: () => undefined,
    log: () => undefined,
    registry,
  });
});

afterAll(async () => {
  await runtime?.stop(0);
});

describe('the metric families', () => {
  it('are all declared in METRIC_FAMILIES, exactly as the running product exposes them', async () => {
    const declared = Object.values<MetricFamily>(METRIC_FAMILIES)
      .map((family) => ({
        name: family.name,
        type: family.type,
        help: family.help,
        labelNames: [...family.labelNames],
        buckets: family.buckets === undefined ? undefined : [...family.buckets],
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
    expect(await exposedFamilies(registry)).toEqual(declared);
  });

  it('keep the published names, types and labels', async () => {
    const exposed = (await exposedFamilies(registry)).map((f) => [f.name, f.type, f.labelNames]);
    expect(exposed).toEqual(PUBLISHED.map(([name, type, labels]) => [name, type, [...labels]]));
  });

  it('name each family once, under the neon_ prefix', () => {
    const names = Object.values(METRIC_FAMILIES).map((family) => family.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^neon_[a-z0-9_]+$/);
  });
});

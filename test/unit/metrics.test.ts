import { Gauge } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  createMetricsRegistry,
  METRIC_NAMES,
  PROCESSING_SECONDS_BUCKETS,
  stageMetrics,
  type DiscardReason,
} from '../../streams/telemetry/metrics.js';
import type { StageErrorCode } from '../../streams/runtime/stage-error.js';

async function values(registry: ReturnType<typeof createMetricsRegistry>, name: string) {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) throw new Error(`${name} is not registered`);
  return (await metric.get()).values;
}

describe('createMetricsRegistry', () => {
  it('collects the default Node metrics under the neon_ prefix', async () => {
    const text = await createMetricsRegistry().metrics();
    expect(text).toContain('neon_process_cpu_user_seconds_total');
    expect(text).toContain('neon_nodejs_eventloop_lag_seconds');
    expect(text).not.toMatch(/^process_cpu/m);
  });

  it('can leave the default metrics out', () => {
    expect(createMetricsRegistry({ defaultMetrics: false }).getMetricsAsArray()).toHaveLength(0);
  });

  it('gives each call its own registry, so default metrics never collide', () => {
    expect(() => [createMetricsRegistry(), createMetricsRegistry()]).not.toThrow();
  });
});

describe('stageMetrics', () => {
  it('registers every family with the documented name, type and labels', () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    stageMetrics(registry, 'chunk');
    const families = Object.fromEntries(
      registry.getMetricsAsArray().map((m) => {
        const labelNames = (m as unknown as { labelNames: string[] }).labelNames;
        return [m.name, { type: m.type, labelNames }];
      }),
    );
    expect(families).toEqual({
      neon_stage_records_received_total: { type: 'counter', labelNames: ['stage'] },
      neon_stage_records_sent_total: { type: 'counter', labelNames: ['stage', 'sink'] },
      neon_stage_errors_total: { type: 'counter', labelNames: ['stage', 'code'] },
      neon_stage_records_discarded_total: { type: 'counter', labelNames: ['stage', 'reason'] },
      neon_stage_processing_seconds: { type: 'histogram', labelNames: ['stage'] },
      neon_stage_in_flight: { type: 'gauge', labelNames: ['stage'] },
      neon_consumer_lag: { type: 'gauge', labelNames: ['stage', 'topic', 'partition'] },
      neon_stage_offset_commits_total: { type: 'counter', labelNames: ['stage'] },
      neon_stage_retries_total: { type: 'counter', labelNames: ['stage', 'sink'] },
      neon_dead_letters_total: { type: 'counter', labelNames: ['stage', 'code'] },
    });
    expect(Object.keys(families).sort()).toEqual(Object.values(METRIC_NAMES).sort());
  });

  it('records each helper under the bound stage label', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const m = stageMetrics(registry, 'index');
    m.received.inc();
    m.received.inc(4);
    m.sent.inc('elasticsearch', 3);
    m.errors.inc('es_document_rejected');
    m.discarded.inc('duplicate', 2);
    m.processingSeconds.observe(0.02);
    m.inFlight.inc(5);
    m.inFlight.dec(2);
    m.lag.set('neon.chunks', 2, 17);
    m.commits.inc();
    m.retries.inc('elasticsearch', 7);

    expect(await values(registry, METRIC_NAMES.received)).toEqual([{ labels: { stage: 'index' }, value: 5 }]);
    expect(await values(registry, METRIC_NAMES.sent)).toEqual([
      { labels: { stage: 'index', sink: 'elasticsearch' }, value: 3 },
    ]);
    expect(await values(registry, METRIC_NAMES.errors)).toEqual([
      { labels: { stage: 'index', code: 'es_document_rejected' }, value: 1 },
    ]);
    expect(await values(registry, METRIC_NAMES.discarded)).toEqual([
      { labels: { stage: 'index', reason: 'duplicate' }, value: 2 },
    ]);
    expect(await values(registry, METRIC_NAMES.inFlight)).toEqual([{ labels: { stage: 'index' }, value: 3 }]);
    expect(await values(registry, METRIC_NAMES.lag)).toEqual([
      { labels: { stage: 'index', topic: 'neon.chunks', partition: '2' }, value: 17 },
    ]);
    expect(await values(registry, METRIC_NAMES.commits)).toEqual([{ labels: { stage: 'index' }, value: 1 }]);
    expect(await values(registry, METRIC_NAMES.retries)).toEqual([
      { labels: { stage: 'index', sink: 'elasticsearch' }, value: 7 },
    ]);
  });

  it('buckets processing time from 1 ms to 30 s', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const m = stageMetrics(registry, 'embed');
    m.processingSeconds.observe(0.0005);
    m.processingSeconds.observe(45);
    const buckets = (await values(registry, METRIC_NAMES.processingSeconds))
      .filter((v) => 'metricName' in v && v.metricName === 'neon_stage_processing_seconds_bucket')
      .map((v) => v.labels.le);
    expect(buckets).toEqual([...PROCESSING_SECONDS_BUCKETS, '+Inf']);
    expect(PROCESSING_SECONDS_BUCKETS[0]).toBe(0.001);
    expect(PROCESSING_SECONDS_BUCKETS.at(-1)).toBe(30);
    const elapsed = m.processingSeconds.startTimer()();
    expect(elapsed).toBeGreaterThanOrEqual(0);
  });

  it('shares one family between two stages on one registry, with one label set each', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const chunk = stageMetrics(registry, 'chunk');
    const dedupe = stageMetrics(registry, 'dedupe');
    chunk.received.inc(2);
    dedupe.received.inc(3);
    chunk.errors.inc('invalid_record');
    dedupe.errors.inc('invalid_record');

    const families = registry.getMetricsAsArray().map((m) => m.name);
    expect(families.filter((n) => n === METRIC_NAMES.received)).toHaveLength(1);
    expect(families).toHaveLength(Object.keys(METRIC_NAMES).length);
    expect(await values(registry, METRIC_NAMES.received)).toEqual([
      { labels: { stage: 'chunk' }, value: 2 },
      { labels: { stage: 'dedupe' }, value: 3 },
    ]);
    expect(await values(registry, METRIC_NAMES.errors)).toHaveLength(2);

    const text = await registry.metrics();
    expect(text.match(/^# TYPE neon_stage_records_received_total counter$/gm)).toHaveLength(1);
  });

  it('keeps two registries apart', async () => {
    const a = createMetricsRegistry({ defaultMetrics: false });
    const b = createMetricsRegistry({ defaultMetrics: false });
    stageMetrics(a, 'chunk').received.inc();
    stageMetrics(b, 'chunk');
    expect(await values(b, METRIC_NAMES.received)).toEqual([]);
  });

  it('drops a revoked partition from the lag gauge', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const m = stageMetrics(registry, 'chunk');
    m.lag.set('t', 0, 5);
    m.lag.set('t', 1, 6);
    m.lag.remove('t', 0);
    expect(await values(registry, METRIC_NAMES.lag)).toEqual([
      { labels: { stage: 'chunk', topic: 't', partition: '1' }, value: 6 },
    ]);
  });

  it('never lets raw error text become a label, even through a cast', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const m = stageMetrics(registry, 'chunk');
    m.errors.inc('connect ECONNREFUSED 127.0.0.1:9200' as StageErrorCode);
    expect(await values(registry, METRIC_NAMES.errors)).toEqual([
      { labels: { stage: 'chunk', code: 'internal' }, value: 1 },
    ]);
    expect(() => m.discarded.inc('because I said so' as DiscardReason)).toThrow(TypeError);
  });

  it('refuses a name already taken by another metric type', () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    new Gauge({ name: METRIC_NAMES.received, help: 'not a counter', registers: [registry] });
    expect(() => stageMetrics(registry, 'chunk')).toThrow(/another type/);
  });

  it('does not type-check raw text as a code or reason', () => {
    const m = stageMetrics(createMetricsRegistry({ defaultMetrics: false }), 'chunk');
    // @ts-expect-error an arbitrary string is not a StageErrorCode
    m.errors.inc('socket hang up');
    // @ts-expect-error an arbitrary string is not a DiscardReason
    expect(() => m.discarded.inc('other')).toThrow(TypeError);
  });
});

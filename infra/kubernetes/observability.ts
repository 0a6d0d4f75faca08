import { NAMESPACE, PART_OF, PORTS } from './cluster-names.js';
import type { Manifest } from './kafka-resources.js';

/**
 * What operators watch: a Service over every process's metrics port with a ServiceMonitor for the
 * Prometheus operator, the alerting rules, and the Grafana dashboard. Every metric named here is
 * one the code registers (test/unit/kubernetes-manifests.test.ts checks).
 */

/** Freshness SLO: 95 % of documents searchable within this long of their article's publish time. */
export const FRESHNESS_SLO_SECONDS = 600;

export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: 'warning' | 'critical' };
  annotations: { summary: string; description: string; runbook_url: string };
}

const RUNBOOK = 'https://github.com/neon-stream/neon-stream/blob/main/k8s/README.md';

function rule(
  alert: string,
  expr: string,
  forDuration: string,
  severity: 'warning' | 'critical',
  summary: string,
  description: string,
): AlertRule {
  return {
    alert,
    expr,
    for: forDuration,
    labels: { severity },
    annotations: { summary, description, runbook_url: `${RUNBOOK}#${alert.toLowerCase()}` },
  };
}

export const ALERT_RULES: readonly AlertRule[] = [
  rule(
    'NeonConsumerLagGrowing',
    'sum by (stage) (neon_consumer_lag) > 1000 and sum by (stage) (deriv(neon_consumer_lag[15m])) > 0',
    '15m',
    'warning',
    'Stage {{ $labels.stage }} falls behind',
    'Lag of {{ $labels.stage }} is {{ $value }} records and still growing after 15 minutes.',
  ),
  rule(
    'NeonDeadLetterRate',
    'sum by (stage, code) (rate(neon_dead_letters_total[10m])) > 0.05',
    '10m',
    'warning',
    'Stage {{ $labels.stage }} dead-letters {{ $labels.code }}',
    'More than 3 records a minute of {{ $labels.stage }} go to neon.dlq with {{ $labels.code }}.',
  ),
  rule(
    'NeonDeadLetterShare',
    'sum by (stage) (rate(neon_dead_letters_total[15m])) / sum by (stage) (rate(neon_stage_records_received_total[15m])) > 0.05',
    '15m',
    'critical',
    'Stage {{ $labels.stage }} refuses more than 5 % of its input',
    'A share this high means bad input or a bug, not bad luck; the records are in neon.dlq.',
  ),
  rule(
    'NeonLlmBudgetExhausted',
    'sum(increase(neon_llm_failures_total{code="llm_budget_exhausted"}[10m])) > 0',
    '5m',
    'warning',
    'The hourly LLM token budget is spent',
    'Extraction waits (lag grows on news.chunks.unique) until the budget refills at the next hour.',
  ),
  rule(
    'NeonFreshnessSloBreached',
    `histogram_quantile(0.95, sum by (le, datastore) (rate(neon_freshness_seconds_bucket[15m]))) > ${FRESHNESS_SLO_SECONDS}`,
    '15m',
    'critical',
    'News reaches {{ $labels.datastore }} later than the freshness SLO',
    `The 95th percentile from publish time to searchable is {{ $value }} s (SLO ${FRESHNESS_SLO_SECONDS} s).`,
  ),
  rule(
    'NeonNoSpikesProcessed',
    'sum(rate(neon_stage_records_sent_total{stage="dedupe"}[30m])) > 0 and sum(rate(neon_spike_mentions_total[30m])) == 0',
    '30m',
    'critical',
    'Mentions are produced but the spike detector processes none',
    'Dedupe writes entity.mentions while the spikes stage counts nothing: spike alerts have stopped.',
  ),
  rule(
    'NeonProcessDown',
    `up{job="neon-metrics"} == 0`,
    '5m',
    'critical',
    '{{ $labels.pod }} does not answer scrapes',
    'A process is down or its metrics port unreachable.',
  ),
  rule(
    'NeonQueryLatencyHigh',
    'histogram_quantile(0.95, sum by (le, route) (rate(neon_http_request_seconds_bucket{route=~"/v1/(ask|search)"}[10m]))) > 2',
    '10m',
    'warning',
    '{{ $labels.route }} p95 above 2 s',
    'Questions are slow: check Elasticsearch load and the LLM latency panel.',
  ),
];

export function metricsService(): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'neon-metrics',
      namespace: NAMESPACE,
      labels: { 'app.kubernetes.io/part-of': PART_OF, 'neon-stream.io/metrics': 'true' },
    },
    spec: {
      // Headless: Prometheus scrapes every pod behind it, never a load-balanced one.
      clusterIP: 'None',
      selector: { 'app.kubernetes.io/part-of': PART_OF },
      ports: [{ name: 'metrics', port: PORTS.metrics, targetPort: 'metrics', protocol: 'TCP' }],
    },
  };
}

export function serviceMonitor(): Manifest {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: 'neon-stream', namespace: NAMESPACE, labels: { 'app.kubernetes.io/part-of': PART_OF } },
    spec: {
      selector: { matchLabels: { 'neon-stream.io/metrics': 'true' } },
      endpoints: [
        {
          port: 'metrics',
          path: '/metrics',
          interval: '30s',
          // The job is the Service's name (neon-metrics); `process` says which Deployment a pod is of.
          relabelings: [
            { sourceLabels: ['__meta_kubernetes_pod_label_app_kubernetes_io_component'], targetLabel: 'process' },
          ],
        },
      ],
    },
  };
}

export function prometheusRule(): Manifest {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'neon-stream', namespace: NAMESPACE, labels: { 'app.kubernetes.io/part-of': PART_OF } },
    spec: { groups: [{ name: 'neon-stream', rules: ALERT_RULES }] },
  };
}

interface Panel {
  title: string;
  unit: string;
  targets: { expr: string; legend: string }[];
}

const PANELS: readonly Panel[] = [
  {
    title: 'Throughput per stage (records/s in)',
    unit: 'ops',
    targets: [{ expr: 'sum by (stage) (rate(neon_stage_records_received_total[5m]))', legend: '{{stage}}' }],
  },
  {
    title: 'Output per stage and sink (records/s)',
    unit: 'ops',
    targets: [
      { expr: 'sum by (stage, sink) (rate(neon_stage_records_sent_total[5m]))', legend: '{{stage}} → {{sink}}' },
    ],
  },
  {
    title: 'Consumer lag per stage (records)',
    unit: 'short',
    targets: [{ expr: 'sum by (stage) (neon_consumer_lag)', legend: '{{stage}}' }],
  },
  {
    title: 'Freshness: publish → searchable',
    unit: 's',
    targets: [
      {
        expr: 'histogram_quantile(0.5, sum by (le, datastore) (rate(neon_freshness_seconds_bucket[10m])))',
        legend: 'p50 {{datastore}}',
      },
      {
        expr: 'histogram_quantile(0.95, sum by (le, datastore) (rate(neon_freshness_seconds_bucket[10m])))',
        legend: 'p95 {{datastore}}',
      },
    ],
  },
  {
    title: 'Dead letters by stage and reason (records/min)',
    unit: 'short',
    targets: [{ expr: 'sum by (stage, code) (rate(neon_dead_letters_total[5m])) * 60', legend: '{{stage}} {{code}}' }],
  },
  {
    title: 'LLM tokens (per minute)',
    unit: 'short',
    targets: [
      {
        expr: 'sum by (purpose, direction) (rate(neon_llm_tokens_total[5m])) * 60',
        legend: '{{purpose}} {{direction}}',
      },
    ],
  },
  {
    title: 'LLM cost (estimate, per hour)',
    unit: 'currencyUSD',
    targets: [{ expr: 'sum by (purpose) (rate(neon_llm_cost_estimate_total[1h])) * 3600', legend: '{{purpose}}' }],
  },
  {
    title: 'Query latency',
    unit: 's',
    targets: [0.5, 0.95, 0.99].map((q) => ({
      expr: `histogram_quantile(${q}, sum by (le, route) (rate(neon_http_request_seconds_bucket{route=~"/v1/(ask|search)"}[5m])))`,
      legend: `p${q * 100} {{route}}`,
    })),
  },
  {
    title: 'Stage processing time p95',
    unit: 's',
    targets: [
      {
        expr: 'histogram_quantile(0.95, sum by (le, stage) (rate(neon_stage_processing_seconds_bucket[5m])))',
        legend: '{{stage}}',
      },
    ],
  },
  {
    title: 'Spike alerts sent (per hour)',
    unit: 'short',
    targets: [
      {
        expr: 'sum by (granularity, state) (increase(neon_spike_alerts_total[1h]))',
        legend: '{{granularity}} {{state}}',
      },
    ],
  },
];

/** Grafana dashboard (schema 39), two panels a row, with a Prometheus data-source variable. */
export function grafanaDashboard(): Record<string, unknown> {
  return {
    uid: 'neon-stream',
    title: 'neon-stream',
    tags: ['neon-stream'],
    timezone: 'utc',
    schemaVersion: 39,
    version: 1,
    editable: true,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    templating: {
      list: [{ name: 'datasource', type: 'datasource', query: 'prometheus', label: 'Prometheus', current: {} }],
    },
    panels: PANELS.map((panel, index) => ({
      id: index + 1,
      type: 'timeseries',
      title: panel.title,
      datasource: { type: 'prometheus', uid: '${datasource}' },
      gridPos: { h: 8, w: 12, x: (index % 2) * 12, y: Math.floor(index / 2) * 8 },
      fieldConfig: { defaults: { unit: panel.unit }, overrides: [] },
      options: { legend: { displayMode: 'table', placement: 'right' }, tooltip: { mode: 'multi' } },
      targets: panel.targets.map((target, t) => ({
        refId: String.fromCharCode(65 + t),
        datasource: { type: 'prometheus', uid: '${datasource}' },
        expr: target.expr,
        legendFormat: target.legend,
      })),
    })),
  };
}

/** Every PromQL expression above, for the test that holds them to the registered metric names. */
export function allExpressions(): string[] {
  return [...ALERT_RULES.map((r) => r.expr), ...PANELS.flatMap((p) => p.targets.map((t) => t.expr))];
}

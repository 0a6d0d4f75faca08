import { DEPLOYED_PROCESSES, type ProcessDescriptor } from '../../streams/pipeline/stage-catalog.js';
import { SHUTDOWN_BUDGET_MS } from '../../streams/runtime/stop-on-signals.js';
import {
  CONFIG_MAPS,
  ELASTICSEARCH_CA_SECRET,
  IMAGE,
  KAFKA_BOOTSTRAP,
  KAFKA_CA_SECRET,
  MOUNTS,
  NAMESPACE,
  PART_OF,
  PORTS,
  SECRETS,
  TOPIC_PARTITIONS,
  kafkaUserName,
} from './cluster-names.js';
import type { Manifest } from './kafka-resources.js';

/** A stopping process drains within SHUTDOWN_BUDGET_MS, then exits; the pod gets that plus margin. */
export const TERMINATION_GRACE_S = SHUTDOWN_BUDGET_MS / 1000 + 15;

interface SecretEnv {
  name: string;
  secret: string;
  key: string;
  /** The process runs without it (a feature stays off). */
  optional: boolean;
}

/** How one process is deployed; everything else is the same for all. */
interface DeploymentPlan {
  process: ProcessDescriptor;
  args: string[];
  cpu: { request: string; limit: string };
  memory: string;
  /** Scaled by KEDA on its group's lag, up to the partitions; undefined: fixed `replicas`. */
  scaling: { min: number; lagThreshold: number; cpuPercent?: number } | { replicas: number; why: string };
  elasticsearch?: 'indexer' | 'query';
  secrets: SecretEnv[];
  /** Calls endpoints outside the cluster (feeds, LLM, embeddings, webhooks). */
  externalHttps: boolean;
  ports: { name: string; port: number }[];
}

const LLM_KEY: SecretEnv = { name: 'NEON_LLM_KEY', secret: SECRETS.llm, key: 'api_key', optional: true };
const EMBEDDINGS_KEY: SecretEnv = {
  name: 'NEON_EMBEDDINGS_KEY',
  secret: SECRETS.embeddings,
  key: 'api_key',
  optional: true,
};

const pipeline = (stage: string, api = false): string[] => [
  'pipeline',
  '--stages',
  stage,
  ...(api ? ['--api-host', '0.0.0.0', '--api-port', String(PORTS.api)] : ['--no-api']),
  '--metrics-host',
  '0.0.0.0',
  '--metrics-port',
  String(PORTS.metrics),
];

const METRICS_PORT = { name: 'metrics', port: PORTS.metrics };

function plan(process: ProcessDescriptor): DeploymentPlan {
  const base = { process, secrets: [] as SecretEnv[], externalHttps: false, ports: [METRICS_PORT] };
  switch (process.name) {
    case 'intake':
      return {
        ...base,
        args: [
          'intake',
          '--feeds',
          `${MOUNTS.feeds}/feeds.yaml`,
          '--host',
          '0.0.0.0',
          '--port',
          String(PORTS.intake),
          '--metrics-host',
          '0.0.0.0',
          '--metrics-port',
          String(PORTS.metrics),
        ],
        cpu: { request: '250m', limit: '1' },
        memory: '512Mi',
        scaling: { replicas: 1, why: 'feeds are polled by one poller (its state is on one volume)' },
        secrets: [{ name: 'NEON_INTAKE_TOKENS', secret: SECRETS.intakeTokens, key: 'tokens', optional: true }],
        externalHttps: true,
        ports: [METRICS_PORT, { name: 'intake', port: PORTS.intake }],
      };
    case 'markup':
      return {
        ...base,
        args: pipeline('markup'),
        cpu: { request: '500m', limit: '1' },
        memory: '1Gi',
        scaling: { min: 1, lagThreshold: 200 },
      };
    case 'chunk':
      return {
        ...base,
        args: pipeline('chunk'),
        cpu: { request: '200m', limit: '1' },
        memory: '512Mi',
        scaling: { min: 1, lagThreshold: 500 },
      };
    case 'dedupe':
      return {
        ...base,
        args: pipeline('dedupe'),
        cpu: { request: '500m', limit: '1' },
        memory: '1536Mi',
        // One active member decides for every partition; the second is a warm standby.
        scaling: { replicas: 2, why: 'single-active group: one member dedupes, the other stands by' },
      };
    case 'spikes':
      return {
        ...base,
        args: pipeline('spikes'),
        cpu: { request: '250m', limit: '1' },
        memory: '1Gi',
        scaling: { min: 1, lagThreshold: 1000 },
      };
    case 'extract':
      return {
        ...base,
        args: pipeline('extract'),
        cpu: { request: '500m', limit: '1' },
        memory: '1Gi',
        scaling: { min: 1, lagThreshold: 100 },
        secrets: [LLM_KEY],
        externalHttps: true,
      };
    case 'index-chunks':
    case 'index-interactions':
      return {
        ...base,
        args: pipeline(process.name),
        // The local embedding model runs here: most of the pipeline's CPU.
        cpu: { request: '1', limit: '2' },
        memory: '2Gi',
        scaling: { min: 1, lagThreshold: 500 },
        elasticsearch: 'indexer',
        secrets: [EMBEDDINGS_KEY],
        externalHttps: true,
      };
    case 'query':
      return {
        ...base,
        args: pipeline('query', true),
        cpu: { request: '500m', limit: '2' },
        memory: '2Gi',
        scaling: { min: 2, lagThreshold: 5, cpuPercent: 70 },
        elasticsearch: 'query',
        secrets: [
          { name: 'NEON_API_KEYS', secret: SECRETS.apiKeys, key: 'keys', optional: false },
          LLM_KEY,
          EMBEDDINGS_KEY,
        ],
        externalHttps: true,
        ports: [METRICS_PORT, { name: 'http', port: PORTS.api }],
      };
    case 'webhooks':
      return {
        ...base,
        args: pipeline('webhooks'),
        cpu: { request: '100m', limit: '500m' },
        memory: '512Mi',
        scaling: { min: 1, lagThreshold: 100 },
        secrets: [
          { name: 'NEON_WEBHOOK_URLS', secret: SECRETS.webhooks, key: 'urls', optional: true },
          { name: 'NEON_WEBHOOK_SECRET', secret: SECRETS.webhooks, key: 'secret', optional: true },
        ],
        externalHttps: true,
      };
  }
}

export function deploymentName(process: string): string {
  return `neon-${process}`;
}

export function processLabels(process: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': deploymentName(process),
    'app.kubernetes.io/part-of': PART_OF,
    'app.kubernetes.io/component': process,
  };
}

function podLabels(p: DeploymentPlan): Record<string, string> {
  return {
    ...processLabels(p.process.name),
    // NetworkPolicies open egress by these, not by name.
    ...(p.elasticsearch ? { 'neon-stream.io/elasticsearch': 'true' } : {}),
    ...(p.externalHttps ? { 'neon-stream.io/external-https': 'true' } : {}),
  };
}

function volumes(p: DeploymentPlan): { volumes: Manifest[]; mounts: Manifest[] } {
  const volumes: Manifest[] = [
    { name: 'tmp', emptyDir: { sizeLimit: '256Mi' } },
    { name: 'kafka-ca', secret: { secretName: KAFKA_CA_SECRET, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
  ];
  const mounts: Manifest[] = [
    { name: 'tmp', mountPath: MOUNTS.tmp },
    { name: 'kafka-ca', mountPath: MOUNTS.kafkaCa, readOnly: true },
  ];
  if (p.elasticsearch) {
    volumes.push({
      name: 'es-ca',
      secret: { secretName: ELASTICSEARCH_CA_SECRET, items: [{ key: 'ca.crt', path: 'ca.crt' }] },
    });
    mounts.push({ name: 'es-ca', mountPath: MOUNTS.elasticsearchCa, readOnly: true });
  }
  if (p.process.name === 'intake') {
    volumes.push({ name: 'feeds', configMap: { name: CONFIG_MAPS.feeds } });
    mounts.push({ name: 'feeds', mountPath: MOUNTS.feeds, readOnly: true });
    // Feed state (ETags, items seen) survives restarts, so a restart fetches only what is new.
    volumes.push({ name: 'data', persistentVolumeClaim: { claimName: 'neon-intake-state' } });
  } else {
    volumes.push({ name: 'data', emptyDir: { sizeLimit: '256Mi' } });
  }
  mounts.push({ name: 'data', mountPath: MOUNTS.data });
  if (p.secrets.some((s) => s.name === 'NEON_LLM_KEY')) {
    volumes.push({ name: 'llm-cache', emptyDir: { sizeLimit: '1Gi' } });
    mounts.push({ name: 'llm-cache', mountPath: MOUNTS.llmCache });
  }
  return { volumes, mounts };
}

function container(p: DeploymentPlan): Manifest {
  const { mounts } = volumes(p);
  return {
    name: 'neon',
    image: IMAGE,
    imagePullPolicy: 'IfNotPresent',
    args: p.args,
    ports: p.ports.map((port) => ({ name: port.name, containerPort: port.port, protocol: 'TCP' })),
    envFrom: [
      { configMapRef: { name: CONFIG_MAPS.product } },
      { configMapRef: { name: CONFIG_MAPS.kafka } },
      ...(p.elasticsearch ? [{ configMapRef: { name: CONFIG_MAPS.elasticsearch } }] : []),
    ],
    env: [
      { name: 'KAFKA_SASL_USERNAME', value: kafkaUserName(p.process.name) },
      // Strimzi writes each KafkaUser's generated password into a Secret of the user's name.
      {
        name: 'KAFKA_SASL_PASSWORD',
        valueFrom: { secretKeyRef: { name: kafkaUserName(p.process.name), key: 'password' } },
      },
      ...(p.elasticsearch
        ? [
            {
              name: 'ES_API_KEY',
              valueFrom: {
                secretKeyRef: {
                  name: p.elasticsearch === 'indexer' ? SECRETS.esIndexer : SECRETS.esQuery,
                  key: 'api_key',
                },
              },
            },
          ]
        : []),
      ...p.secrets.map((s) => ({
        name: s.name,
        valueFrom: { secretKeyRef: { name: s.secret, key: s.key, ...(s.optional ? { optional: true } : {}) } },
      })),
    ],
    resources: {
      requests: { cpu: p.cpu.request, memory: p.memory },
      limits: { cpu: p.cpu.limit, memory: p.memory },
    },
    // Started: the model is loaded and state rebuilt from the compacted topics, which can take minutes.
    startupProbe: { httpGet: { path: '/livez', port: 'metrics' }, periodSeconds: 5, failureThreshold: 60 },
    // Live: no stage has died. Restarting cures that; it would not cure an unreachable broker.
    livenessProbe: {
      httpGet: { path: '/livez', port: 'metrics' },
      periodSeconds: 10,
      timeoutSeconds: 3,
      failureThreshold: 3,
    },
    // Ready: Kafka (and Elasticsearch, where used) answer; holds rollouts and, for the API, traffic.
    readinessProbe: {
      httpGet: { path: '/readyz', port: 'metrics' },
      periodSeconds: 10,
      timeoutSeconds: 3,
      failureThreshold: 3,
    },
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    volumeMounts: mounts,
  };
}

function deployment(p: DeploymentPlan): Manifest {
  const name = deploymentName(p.process.name);
  const fixed = 'replicas' in p.scaling ? p.scaling : undefined;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: NAMESPACE,
      labels: processLabels(p.process.name),
      annotations: {
        'neon-stream.io/what': p.process.what,
        ...(fixed ? { 'neon-stream.io/replicas': fixed.why } : {}),
      },
    },
    spec: {
      // Scaled processes leave `replicas` to KEDA, so re-applying the manifests does not fight it.
      ...(fixed ? { replicas: fixed.replicas } : {}),
      revisionHistoryLimit: 5,
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
      // A replica holding volume state (intake) is replaced, not doubled.
      strategy:
        p.process.name === 'intake'
          ? { type: 'Recreate' }
          : { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: podLabels(p) },
        spec: {
          serviceAccountName: 'neon-processes',
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: TERMINATION_GRACE_S,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 10001,
            runAsGroup: 10001,
            fsGroup: 10001,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          // Replicas of one process spread over nodes, so a node loss takes at most one.
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'ScheduleAnyway',
              labelSelector: { matchLabels: { 'app.kubernetes.io/name': name } },
            },
          ],
          containers: [container(p)],
          volumes: volumes(p).volumes,
        },
      },
    },
  };
}

function disruptionBudget(p: DeploymentPlan): Manifest {
  const name = deploymentName(p.process.name);
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: NAMESPACE, labels: processLabels(p.process.name) },
    spec: {
      // One replica at a time leaves during a drain: its partitions move to the others (or wait, at
      // one replica, for the replacement), and nothing uncommitted is lost either way.
      maxUnavailable: 1,
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
    },
  };
}

function scaledObject(p: DeploymentPlan): Manifest | undefined {
  if ('replicas' in p.scaling) return undefined;
  const name = deploymentName(p.process.name);
  const group = p.process.group!;
  const [topic] = p.process.reads;
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name, namespace: NAMESPACE, labels: processLabels(p.process.name) },
    spec: {
      scaleTargetRef: { name },
      minReplicaCount: p.scaling.min,
      // A member beyond the partition count would sit idle.
      maxReplicaCount: TOPIC_PARTITIONS,
      pollingInterval: 15,
      cooldownPeriod: 300,
      advanced: {
        horizontalPodAutoscalerConfig: {
          behavior: {
            // Every scale step rebalances the group: add quickly, remove slowly.
            scaleDown: { stabilizationWindowSeconds: 300, policies: [{ type: 'Pods', value: 1, periodSeconds: 120 }] },
          },
        },
      },
      triggers: [
        {
          type: 'kafka',
          authenticationRef: { name: 'neon-keda-kafka' },
          metadata: {
            bootstrapServers: KAFKA_BOOTSTRAP,
            consumerGroup: group,
            topic,
            lagThreshold: String(p.scaling.lagThreshold),
            offsetResetPolicy: 'earliest',
            allowIdleConsumers: 'false',
            scaleToZeroOnInvalidOffset: 'false',
          },
        },
        ...(p.scaling.cpuPercent === undefined
          ? []
          : [{ type: 'cpu', metricType: 'Utilization', metadata: { value: String(p.scaling.cpuPercent) } }]),
      ],
    },
  };
}

export function processManifests(): Manifest[] {
  const plans = DEPLOYED_PROCESSES.map(plan);
  return plans.flatMap((p) => [
    deployment(p),
    disruptionBudget(p),
    ...[scaledObject(p)].filter((m): m is Manifest => m !== undefined),
  ]);
}

/** The environment each process gets from literals and Secrets (ConfigMaps come on top), for tests. */
export function deploymentPlans(): readonly DeploymentPlan[] {
  return DEPLOYED_PROCESSES.map(plan);
}

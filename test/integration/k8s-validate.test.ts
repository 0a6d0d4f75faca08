import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOverlays, validateKustomization } from '../../infra/k8s-validation/overlays.js';
import { ensureK8sValidationTools, type K8sValidationTools } from '../../infra/k8s-validation/tools.js';
import { validateManifests, type ValidationReport } from '../../infra/k8s-validation/validate.js';

/**
 * The Kubernetes manifests, validated the way a cluster would check them but offline: every overlay
 * under k8s/overlays is rendered with kustomize and checked by kubeconform against the pinned
 * Kubernetes schemas and the operators' CRD schemas, strictly (unknown fields and kinds without a
 * schema fail). The negative cases prove that the validator can fail at all.
 */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const overlays = await listOverlays(join(repoRoot, 'k8s', 'overlays'));

let tools: K8sValidationTools;

beforeAll(async () => {
  // Cold: builds kubeconform and kustomize and lays out the schemas (about a minute on 2 cores);
  // afterwards everything comes from the cache, without network.
  tools = await ensureK8sValidationTools({ log: (line) => void process.stderr.write(`[k8s-validation] ${line}\n`) });
}, 600_000);

function describeProblems(report: ValidationReport): string {
  return report.problems.map((p) => `${p.source}: ${p.kind} ${p.name}: ${p.message}`).join('\n');
}

describe('k8s/overlays', () => {
  it('has at least one overlay (a directory with a kustomization.yaml)', () => {
    expect(overlays.length, 'no directory with a kustomization.yaml under k8s/overlays').toBeGreaterThan(0);
  });

  it.each(overlays.map((dir) => [relative(repoRoot, dir), dir] as const))(
    '%s renders with kustomize and every resource is valid',
    async (label, dir) => {
      const report = await validateKustomization(dir, tools, label);
      expect(report.problems, describeProblems(report)).toEqual([]);
      expect(report.resources).toBeGreaterThan(0);
    },
  );
});

/** One valid resource of each kind the manifests use, so every kind is known to have a schema. */
const VALID: Record<string, string> = {
  Namespace: `
apiVersion: v1
kind: Namespace
metadata: {name: neon}`,
  ServiceAccount: `
apiVersion: v1
kind: ServiceAccount
metadata: {name: intake, namespace: neon}`,
  ConfigMap: `
apiVersion: v1
kind: ConfigMap
metadata: {name: neon-config, namespace: neon}
data: {KAFKA_BROKERS: "neon-kafka-bootstrap.neon.svc:9092"}`,
  Secret: `
apiVersion: v1
kind: Secret
metadata: {name: kafka-sasl, namespace: neon}
type: Opaque
stringData: {password: secret}`,
  Deployment: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: intake, namespace: neon, labels: {app: intake}}
spec:
  replicas: 2
  selector: {matchLabels: {app: intake}}
  template:
    metadata: {labels: {app: intake}}
    spec:
      serviceAccountName: intake
      containers:
        - name: intake
          image: neon-stream:0.1.0
          args: [stage, intake]
          ports: [{name: metrics, containerPort: 9464}]
          envFrom: [{configMapRef: {name: neon-config}}]
          resources: {requests: {cpu: 100m, memory: 256Mi}, limits: {memory: 512Mi}}
          readinessProbe: {httpGet: {path: /healthz, port: metrics}}`,
  Service: `
apiVersion: v1
kind: Service
metadata: {name: intake, namespace: neon, labels: {app: intake}}
spec:
  selector: {app: intake}
  ports: [{name: metrics, port: 9464, targetPort: metrics}]`,
  PodDisruptionBudget: `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: intake, namespace: neon}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: intake}}`,
  NetworkPolicy: `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: intake, namespace: neon}
spec:
  podSelector: {matchLabels: {app: intake}}
  policyTypes: [Ingress]
  ingress: [{ports: [{port: 9464, protocol: TCP}]}]`,
  Ingress: `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: query, namespace: neon}
spec:
  rules:
    - host: neon.example.com
      http:
        paths: [{path: /, pathType: Prefix, backend: {service: {name: query, port: {number: 8080}}}}]`,
  KafkaNodePool: `
apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaNodePool
metadata: {name: combined, namespace: neon, labels: {strimzi.io/cluster: neon}}
spec:
  replicas: 3
  roles: [controller, broker]
  storage:
    type: jbod
    volumes: [{id: 0, type: persistent-claim, size: 100Gi, deleteClaim: false, kraftMetadata: shared}]`,
  Kafka: `
apiVersion: kafka.strimzi.io/v1beta2
kind: Kafka
metadata: {name: neon, namespace: neon, annotations: {strimzi.io/kraft: enabled, strimzi.io/node-pools: enabled}}
spec:
  kafka:
    version: 3.9.1
    metadataVersion: 3.9-IV0
    listeners: [{name: plain, port: 9092, type: internal, tls: false}]
    config: {default.replication.factor: 3, min.insync.replicas: 2}
  entityOperator: {topicOperator: {}, userOperator: {}}`,
  KafkaTopic: `
apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaTopic
metadata: {name: neon.articles.raw, namespace: neon, labels: {strimzi.io/cluster: neon}}
spec: {partitions: 6, replicas: 3, config: {retention.ms: 604800000}}`,
  KafkaUser: `
apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaUser
metadata: {name: intake, namespace: neon, labels: {strimzi.io/cluster: neon}}
spec:
  authentication: {type: scram-sha-512}
  authorization:
    type: simple
    acls: [{resource: {type: topic, name: neon., patternType: prefix}, operations: [Read, Write, Describe]}]`,
  Elasticsearch: `
apiVersion: elasticsearch.k8s.elastic.co/v1
kind: Elasticsearch
metadata: {name: neon, namespace: neon}
spec:
  version: 8.19.4
  nodeSets:
    - name: default
      count: 3
      config: {node.store.allow_mmap: true}`,
  ScaledObject: `
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: intake, namespace: neon}
spec:
  scaleTargetRef: {name: intake}
  minReplicaCount: 1
  maxReplicaCount: 6
  pollingInterval: 30
  triggers:
    - type: kafka
      metadata: {bootstrapServers: "neon-kafka-bootstrap.neon.svc:9092", consumerGroup: intake, topic: neon.articles.raw, lagThreshold: "100"}
      authenticationRef: {name: kafka-auth}`,
  TriggerAuthentication: `
apiVersion: keda.sh/v1alpha1
kind: TriggerAuthentication
metadata: {name: kafka-auth, namespace: neon}
spec:
  secretTargetRef: [{parameter: password, name: kafka-sasl, key: password}]`,
  ServiceMonitor: `
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: intake, namespace: neon}
spec:
  selector: {matchLabels: {app: intake}}
  endpoints: [{port: metrics, interval: 30s, path: /metrics}]`,
  PrometheusRule: `
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: neon, namespace: neon}
spec:
  groups:
    - name: neon
      rules:
        - alert: ConsumerLagHigh
          expr: sum(kafka_consumergroup_lag) > 1000
          for: 10m
          labels: {severity: warning}
          annotations: {summary: Consumer lag is high}`,
};

const stream = (...documents: string[]): string => documents.map((d) => d.trim()).join('\n---\n');

/** Validates one broken resource among all the valid ones: exactly it must be reported. */
async function onlyProblem(broken: string): Promise<{ kind: string; name: string; message: string }> {
  const report = await validateManifests({ text: stream(...Object.values(VALID), broken), source: 'fixture' }, tools);
  expect(report.resources).toBe(Object.keys(VALID).length + 1);
  expect(report.problems, describeProblems(report)).toHaveLength(1);
  expect(report.ok).toBe(false);
  const [problem] = report.problems;
  expect(problem!.source).toBe('fixture');
  return problem!;
}

describe('the validator', () => {
  it('accepts a valid resource of every kind the manifests use', async () => {
    const report = await validateManifests({ text: stream(...Object.values(VALID)), source: 'valid' }, tools);
    expect(report.problems, describeProblems(report)).toEqual([]);
    expect(report.resources).toBe(Object.keys(VALID).length);
  });

  it('rejects a Deployment with a misspelt field (replica: for replicas:)', async () => {
    const problem = await onlyProblem(VALID.Deployment!.replace('replicas: 2', 'replica: 2'));
    expect(problem.kind).toBe('Deployment');
    expect(problem.message).toMatch(/\/spec.*additional properties 'replica' not allowed/);
  });

  it('rejects a KafkaTopic whose partitions is not a number', async () => {
    const problem = await onlyProblem(VALID.KafkaTopic!.replace('partitions: 6', 'partitions: "six"'));
    expect(problem.kind).toBe('KafkaTopic');
    expect(problem.message).toMatch(/\/spec\/partitions.*got string, want integer/);
  });

  it('rejects a ScaledObject with an unknown field', async () => {
    const problem = await onlyProblem(VALID.ScaledObject!.replace('pollingInterval: 30', 'pollingIntervall: 30'));
    expect(problem.kind).toBe('ScaledObject');
    expect(problem.message).toMatch(/additional properties 'pollingIntervall' not allowed/);
  });

  it('rejects a kind it has no schema for', async () => {
    const problem = await onlyProblem('apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: gadget}');
    expect(problem).toMatchObject({ kind: 'Widget', name: 'gadget' });
    expect(problem.message).toMatch(/could not find schema for Widget/);
  });

  it("checks a custom resource's metadata as Kubernetes does (a misspelt labels:)", async () => {
    const problem = await onlyProblem(
      VALID.Elasticsearch!.replace('namespace: neon}', 'namespace: neon, lables: {a: b}}'),
    );
    expect(problem.kind).toBe('Elasticsearch');
    expect(problem.message).toMatch(/\/metadata.*additional properties 'lables' not allowed/);
  });

  it('rejects a wrong type deep inside an operator resource (Elasticsearch nodeSets count)', async () => {
    const problem = await onlyProblem(VALID.Elasticsearch!.replace('count: 3', 'count: three'));
    expect(problem.message).toMatch(/\/spec\/nodeSets\/0\/count.*want integer/);
  });
});

describe('kustomize rendering', () => {
  let dir: string;
  beforeAll(async () => {
    // A small base and two overlays, one of which patches in a mistake.
    dir = await mkdtemp(join(tmpdir(), 'neon-k8s-'));
    const files: Record<string, string> = {
      'base/resources.yaml': stream(VALID.Namespace!, VALID.Deployment!, VALID.KafkaTopic!),
      'base/kustomization.yaml': 'resources: [resources.yaml]\n',
      'overlays/good/kustomization.yaml': 'resources: [../../base]\nnamespace: neon\nlabels: [{pairs: {env: test}}]\n',
      'overlays/bad/kustomization.yaml': [
        'resources: [../../base]',
        'patches:',
        '  - target: {kind: KafkaTopic}',
        '    patch: |',
        '      - {op: replace, path: /spec/replicas, value: "three"}',
        '',
      ].join('\n'),
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finds the overlays, renders them and reports a mistake an overlay patched in', async () => {
    const found = await listOverlays(join(dir, 'overlays'));
    expect(found.map((d) => relative(dir, d))).toEqual(['overlays/bad', 'overlays/good']);
    const good = await validateKustomization(join(dir, 'overlays/good'), tools, 'good');
    expect(good).toEqual({ ok: true, resources: 3, problems: [] });
    const bad = await validateKustomization(join(dir, 'overlays/bad'), tools, 'bad');
    expect(bad.problems.map((p) => [p.source, p.kind])).toEqual([['bad', 'KafkaTopic']]);
    expect(bad.problems[0]!.message).toMatch(/\/spec\/replicas.*got string, want integer/);
  });

  it('fails loudly when kustomize cannot build', async () => {
    await expect(validateKustomization(join(dir, 'base', 'missing'), tools)).rejects.toThrow(/kustomize build/);
  });
});

describe('the cache', () => {
  it('answers from the cache the second time, without rebuilding', async () => {
    const started = Date.now();
    const again = await ensureK8sValidationTools({ log: (line) => expect.fail(`unexpected set-up step: ${line}`) });
    expect(again).toEqual(tools);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

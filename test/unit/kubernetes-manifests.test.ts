import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { allExpressions, ALERT_RULES } from '../../infra/kubernetes/observability.js';
import { serviceRoles } from '../../infra/kubernetes/elasticsearch-roles.js';
import { staleFiles } from '../../infra/kubernetes/render-manifests.js';
import { datastoreNames } from '../../streams/elasticsearch/datastore-templates.js';
import { externalInfrastructureFromEnv, kafkaSecurityFromEnv } from '../../schemas/connection-config.js';
import { PRODUCT_ENVIRONMENT, environmentVariable } from '../../schemas/product-environment.js';
import { DEPLOYED_PROCESSES, STAGE_CATALOG, TAIL_GROUP_PREFIX } from '../../streams/pipeline/stage-catalog.js';
import { SHUTDOWN_BUDGET_MS } from '../../streams/runtime/stop-on-signals.js';
import { localTopicSpecs, TOPICS } from '../../streams/pipeline/topics.js';

/**
 * The Kubernetes manifests checked against the code they deploy: the schema validation with the
 * real validator is test/integration/k8s-validate.test.ts; this file checks what a schema cannot —
 * that the topics, users, ACLs, Deployments, environment and alerts agree with the product.
 */
type Json = Record<string, unknown>;
const ROOT = join(import.meta.dirname, '..', '..');
const BASE = join(ROOT, 'k8s', 'base');

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return name.endsWith('.yaml') && name !== 'kustomization.yaml' ? [path] : [];
  });
}

const resources: Json[] = yamlFiles(BASE).flatMap((path) =>
  parseAllDocuments(readFileSync(path, 'utf8'))
    .map((doc) => doc.toJS() as unknown)
    .filter((value): value is Json => typeof value === 'object' && value !== null),
);

const get = (value: unknown, ...keys: (string | number)[]): unknown =>
  keys.reduce<unknown>(
    (v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
    value,
  );
const named = (kind: string, name?: string): Json[] =>
  resources.filter((r) => r['kind'] === kind && (name === undefined || get(r, 'metadata', 'name') === name));
const one = (kind: string, name: string): Json => {
  const found = named(kind, name);
  expect(found, `${kind}/${name}`).toHaveLength(1);
  return found[0]!;
};

interface Container {
  name: string;
  env?: {
    name: string;
    value?: string;
    valueFrom?: {
      secretKeyRef?: { name: string; key: string; optional?: boolean };
      configMapKeyRef?: { name: string; key: string };
    };
  }[];
  envFrom?: { configMapRef?: { name: string } }[];
  volumeMounts?: { name: string; mountPath: string }[];
  securityContext?: Json;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  livenessProbe?: Json;
  readinessProbe?: Json;
  startupProbe?: Json;
  ports?: { name: string; containerPort: number }[];
}

function podSpec(workload: Json): Json {
  return get(workload, 'spec', 'template', 'spec') as Json;
}
function containers(workload: Json): Container[] {
  const spec = podSpec(workload);
  return [...((spec['initContainers'] as Container[] | undefined) ?? []), ...(spec['containers'] as Container[])];
}

const deployments = named('Deployment').filter((d) => get(d, 'metadata', 'namespace') === 'neon');

describe('rendered from the code', () => {
  it('k8s/base/generated is what `npm run k8s:generate` renders now', () => {
    expect(staleFiles(), 'run npm run k8s:generate').toEqual([]);
  });
});

describe('Kafka topics', () => {
  it('every topic the code uses has exactly one KafkaTopic with the partitions, retention and compaction the code creates locally', () => {
    const topics = named('KafkaTopic');
    expect(topics.map((t) => get(t, 'spec', 'topicName')).sort()).toEqual(Object.values(TOPICS).sort());
    for (const spec of localTopicSpecs()) {
      const topic = topics.find((t) => get(t, 'spec', 'topicName') === spec.topic)!;
      expect(get(topic, 'spec', 'partitions'), spec.topic).toBe(spec.partitions);
      expect(get(topic, 'spec', 'replicas'), spec.topic).toBe(3);
      expect(get(topic, 'spec', 'config', 'min.insync.replicas')).toBe(2);
      for (const [key, value] of Object.entries(spec.configs ?? {})) {
        expect(get(topic, 'spec', 'config', key), `${spec.topic} ${key}`).toBe(value);
      }
    }
    expect(
      get(
        topics.find((t) => get(t, 'spec', 'topicName') === TOPICS.registry),
        'spec',
        'config',
        'cleanup.policy',
      ),
    ).toBe('compact');
    expect(
      get(
        topics.find((t) => get(t, 'spec', 'topicName') === TOPICS.spikeState),
        'spec',
        'config',
        'cleanup.policy',
      ),
    ).toBe('compact');
  });
});

interface AclRule {
  resource: { type: string; name: string; patternType: string };
  operations: string[];
}

/** The (resource, operation) pairs a user's ACLs grant, as `topic:literal:news.articles:Read`. */
function grants(user: Json): string[] {
  const acls = get(user, 'spec', 'authorization', 'acls') as AclRule[];
  return acls
    .flatMap((a) => a.operations.map((op) => `${a.resource.type}:${a.resource.patternType}:${a.resource.name}:${op}`))
    .sort();
}

describe('Kafka users and ACLs', () => {
  it.each(DEPLOYED_PROCESSES.map((p) => [p.name, p] as const))(
    '%s may read its input, write its outputs and the DLQ, nothing else',
    (name, process) => {
      const user = one('KafkaUser', `neon-${name}`);
      expect(get(user, 'spec', 'authentication', 'type')).toBe('scram-sha-512');
      const expected = new Set<string>();
      const topic = (t: string, op: string) => expected.add(`topic:literal:${t}:${op}`);
      for (const t of [...process.reads, ...process.follows]) {
        topic(t, 'Read');
        topic(t, 'Describe');
      }
      for (const t of process.writes) {
        topic(t, 'Write');
        topic(t, 'Describe');
      }
      if (process.group) expected.add(`group:literal:${process.group}:Read`);
      if (process.follows.length > 0) expected.add(`group:prefix:${TAIL_GROUP_PREFIX}:Read`);
      if (process.describesAll) {
        for (const t of Object.values(TOPICS)) topic(t, 'Describe');
        for (const stage of STAGE_CATALOG) expected.add(`group:literal:${stage.group}:Describe`);
      }
      expect(grants(user)).toEqual([...expected].sort());
      expect(process.writes).toContain(TOPICS.deadLetters);
    },
  );

  it('there is no user beyond the processes and KEDA, and KEDA may only describe the scaled groups and their inputs', () => {
    expect(
      named('KafkaUser')
        .map((u) => get(u, 'metadata', 'name'))
        .sort(),
    ).toEqual([...DEPLOYED_PROCESSES.map((p) => `neon-${p.name}`), 'neon-keda'].sort());
    for (const grant of grants(one('KafkaUser', 'neon-keda'))) expect(grant).toMatch(/:Describe$/);
  });

  it('the cluster authorises with ACLs and the only listener is TLS with SCRAM logins', () => {
    const kafka = one('Kafka', 'neon');
    expect(get(kafka, 'spec', 'kafka', 'authorization', 'type')).toBe('simple');
    const listeners = get(kafka, 'spec', 'kafka', 'listeners') as Json[];
    expect(listeners).toHaveLength(1);
    expect(listeners[0]).toMatchObject({ tls: true, port: 9093, authentication: { type: 'scram-sha-512' } });
    expect(get(kafka, 'spec', 'entityOperator', 'userOperator')).toBeDefined();
  });
});

describe('Deployments', () => {
  it('one per process, each running it under its own Kafka user', () => {
    expect(deployments.map((d) => get(d, 'metadata', 'name')).sort()).toEqual(
      DEPLOYED_PROCESSES.map((p) => `neon-${p.name}`).sort(),
    );
    for (const process of DEPLOYED_PROCESSES) {
      const [container] = containers(one('Deployment', `neon-${process.name}`));
      const args = (container as unknown as { args: string[] }).args;
      if (process.name === 'intake') expect(args[0]).toBe('intake');
      else expect(args.slice(0, 3)).toEqual(['pipeline', '--stages', process.name]);
      expect(args.includes('--no-api')).toBe(process.name !== 'query' && process.name !== 'intake');
      const env = Object.fromEntries((container!.env ?? []).map((e) => [e.name, e]));
      expect(env['KAFKA_SASL_USERNAME']?.value).toBe(`neon-${process.name}`);
      expect(env['KAFKA_SASL_PASSWORD']?.valueFrom?.secretKeyRef).toEqual({
        name: `neon-${process.name}`,
        key: 'password',
      });
    }
  });

  it.each(deployments.map((d) => [get(d, 'metadata', 'name') as string, d] as const))(
    '%s meets the restricted Pod Security Standard',
    (_, deployment) => {
      const spec = podSpec(deployment);
      expect(get(spec, 'securityContext', 'runAsNonRoot')).toBe(true);
      expect(get(spec, 'securityContext', 'runAsUser')).toBeGreaterThan(0);
      expect(get(spec, 'securityContext', 'seccompProfile', 'type')).toBe('RuntimeDefault');
      expect(spec['automountServiceAccountToken']).toBe(false);
      expect(spec['hostNetwork'] ?? false).toBe(false);
      for (const volume of spec['volumes'] as Json[]) expect(volume['hostPath'], 'no hostPath').toBeUndefined();
      for (const c of containers(deployment)) {
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(get(c.securityContext, 'privileged') ?? false).toBe(false);
        expect(get(c.securityContext, 'capabilities', 'add')).toBeUndefined();
      }
    },
  );

  it.each(deployments.map((d) => [get(d, 'metadata', 'name') as string, d] as const))(
    '%s has probes on the health endpoints, requests and limits, and time to drain',
    (_, deployment) => {
      const spec = podSpec(deployment);
      expect(spec['terminationGracePeriodSeconds']).toBeGreaterThan(SHUTDOWN_BUDGET_MS / 1000);
      for (const c of containers(deployment)) {
        expect(get(c.livenessProbe, 'httpGet', 'path')).toBe('/livez');
        expect(get(c.readinessProbe, 'httpGet', 'path')).toBe('/readyz');
        expect(get(c.startupProbe, 'httpGet', 'path')).toBe('/livez');
        // The probes reach the port the process serves them on.
        const port = get(c.livenessProbe, 'httpGet', 'port');
        const metrics = c.ports?.find((p) => p.name === port);
        expect(metrics?.containerPort).toBe(9464);
        expect((c as unknown as { args: string[] }).args.join(' ')).toMatch(
          /--metrics-host 0\.0\.0\.0 --metrics-port 9464/,
        );
        for (const what of ['requests', 'limits'] as const) {
          expect(c.resources?.[what]?.['cpu'], `${what}.cpu`).toBeDefined();
          expect(c.resources?.[what]?.['memory'], `${what}.memory`).toBeDefined();
        }
      }
    },
  );

  it('every Deployment has a PodDisruptionBudget selecting its pods', () => {
    for (const deployment of deployments) {
      const name = get(deployment, 'metadata', 'name') as string;
      const pdb = one('PodDisruptionBudget', name);
      const selector = get(pdb, 'spec', 'selector', 'matchLabels') as Record<string, string>;
      const labels = get(deployment, 'spec', 'template', 'metadata', 'labels') as Record<string, string>;
      for (const [k, v] of Object.entries(selector)) expect(labels[k], `${name} ${k}`).toBe(v);
    }
  });
});

describe('autoscaling on lag', () => {
  it('each consumer stage scales on its own group and input, never past the input’s partitions', () => {
    const topics = named('KafkaTopic');
    const scaled = named('ScaledObject');
    const trigger = get(one('TriggerAuthentication', 'neon-keda-kafka'), 'metadata', 'name');
    for (const object of scaled) {
      const target = get(object, 'spec', 'scaleTargetRef', 'name') as string;
      const stage = STAGE_CATALOG.find((s) => `neon-${s.name}` === target)!;
      expect(stage, target).toBeDefined();
      const kafkaTriggers = (get(object, 'spec', 'triggers') as Json[]).filter((t) => t['type'] === 'kafka');
      expect(kafkaTriggers).toHaveLength(1);
      const metadata = kafkaTriggers[0]!['metadata'] as Record<string, string>;
      expect(metadata['consumerGroup']).toBe(stage.group);
      expect(stage.reads).toContain(metadata['topic']);
      expect(metadata['allowIdleConsumers']).toBe('false');
      expect(get(kafkaTriggers[0], 'authenticationRef', 'name')).toBe(trigger);
      const partitions = get(
        topics.find((t) => get(t, 'spec', 'topicName') === metadata['topic']),
        'spec',
        'partitions',
      );
      expect(get(object, 'spec', 'maxReplicaCount')).toBeLessThanOrEqual(partitions as number);
      expect(get(object, 'spec', 'minReplicaCount')).toBeGreaterThanOrEqual(1);
      // KEDA owns the replica count of what it scales.
      expect(get(one('Deployment', target), 'spec', 'replicas')).toBeUndefined();
    }
    // Every stage but single-active dedupe scales; intake runs one poller.
    expect(scaled.map((s) => get(s, 'spec', 'scaleTargetRef', 'name')).sort()).toEqual(
      STAGE_CATALOG.filter((s) => s.name !== 'dedupe')
        .map((s) => `neon-${s.name}`)
        .sort(),
    );
  });
});

/** The environment a container ends up with, with a stand-in value for each Secret. */
function environmentOf(container: Container): {
  env: Record<string, string>;
  fromSecret: Set<string>;
  names: string[];
} {
  const env: Record<string, string> = {};
  const fromSecret = new Set<string>();
  const names: string[] = [];
  for (const source of container.envFrom ?? []) {
    const map = one('ConfigMap', source.configMapRef!.name);
    for (const [k, v] of Object.entries(map['data'] as Record<string, string>)) {
      env[k] = v;
      names.push(k);
    }
  }
  for (const e of container.env ?? []) {
    names.push(e.name);
    if (e.valueFrom?.secretKeyRef) {
      fromSecret.add(e.name);
      if (!e.valueFrom.secretKeyRef.optional) env[e.name] = `secret-${e.name.toLowerCase()}-value`;
    } else if (e.valueFrom?.configMapKeyRef) {
      const { name, key } = e.valueFrom.configMapKeyRef;
      const value = (one('ConfigMap', name)['data'] as Record<string, string>)[key];
      expect(value, `${e.name}: ConfigMap ${name} has no ${key}`).toBeDefined();
      env[e.name] = value!;
    } else if (e.value !== undefined) env[e.name] = e.value;
  }
  return { env, fromSecret, names };
}

describe('configuration from ConfigMaps, credentials from Secrets, no drift from the product', () => {
  const pem = join(mkdtempSync(join(tmpdir(), 'neon-k8s-')), 'ca.crt');
  writeFileSync(pem, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  const workloads = [...deployments, one('Job', 'neon-es-api-keys')];

  it.each(workloads.map((w) => [get(w, 'metadata', 'name') as string, w] as const))(
    '%s sets only declared variables, secrets only from Secrets, and passes the product’s configuration check',
    (name, workload) => {
      // Our image's containers (the Job's kubectl container is not the product).
      const ours = containers(workload).filter(
        (c) => (c as unknown as { image: string }).image === 'neon-stream:0.1.0',
      );
      expect(ours.length).toBeGreaterThan(0);
      for (const container of ours) {
        const { env, fromSecret, names } = environmentOf(container);
        expect(new Set(names).size, `${name}: a variable set twice`).toBe(names.length);
        for (const variable of names) {
          const declared = environmentVariable(variable);
          expect(declared, `${name}: ${variable} is not in schemas/product-environment.ts`).toBeDefined();
          expect(declared!.scope, `${name}: ${variable}`).toBe('deployment');
          expect(
            fromSecret.has(variable),
            `${name}: ${variable} ${declared!.secret ? 'must' : 'need not'} come from a Secret`,
          ).toBe(declared!.secret);
        }
        // The files the configuration names are mounted where it says.
        const mounts = (container.volumeMounts ?? []).map((m) => m.mountPath);
        for (const file of ['KAFKA_CA_FILE', 'ES_CA_FILE'].filter((v) => env[v])) {
          expect(mounts, `${name}: ${file}`).toContain(dirname(env[file]!));
          env[file] = pem;
        }
        for (const dir of ['NEON_DATA_DIR', 'NEON_LLM_CACHE_DIR'].filter((v) => env[v] && v !== 'NEON_LLM_CACHE_DIR')) {
          expect(mounts, `${name}: ${dir} must be writable`).toContain(env[dir]);
        }
        if (names.includes('NEON_LLM_KEY')) expect(mounts).toContain(env['NEON_LLM_CACHE_DIR']);
        expect(() => loadProductConfig(env)).not.toThrow();
        if (env['KAFKA_BROKERS']) {
          const security = kafkaSecurityFromEnv(env);
          expect(security.tls?.caCertificate).toContain('BEGIN CERTIFICATE');
          expect(security.sasl?.mechanism).toBe('scram-sha-512');
        }
        if (env['ES_URL']) {
          const infra = externalInfrastructureFromEnv({ KAFKA_BROKERS: 'unused:9092', ...env });
          expect(infra?.elasticsearch.url).toMatch(/^https:/);
          expect(infra?.elasticsearch.caCertificate).toContain('BEGIN CERTIFICATE');
          expect(Boolean(infra?.elasticsearch.apiKey) || Boolean(infra?.elasticsearch.password), name).toBe(true);
        }
      }
    },
  );

  it('no ConfigMap holds a credential', () => {
    for (const map of named('ConfigMap')) {
      for (const key of Object.keys((map['data'] as Record<string, string> | undefined) ?? {})) {
        expect(environmentVariable(key)?.secret ?? false, key).toBe(false);
      }
    }
    expect(PRODUCT_ENVIRONMENT.length).toBeGreaterThan(0);
  });

  it('the Elasticsearch API keys: the indexers may manage only the datastores, the query service may only read them', () => {
    const roles = serviceRoles('neon');
    const names = (['chunks', 'interactions'] as const).map((k) => datastoreNames(k, 'neon'));
    const covers = (patterns: string[], index: string) =>
      patterns.some((p) => (p.endsWith('*') ? index.startsWith(p.slice(0, -1)) : p === index));
    for (const role of [roles.indexer, roles.query]) {
      for (const n of names) {
        expect(covers(role.indices[0]!.names, n.alias)).toBe(true);
        expect(covers(role.indices[0]!.names, `${n.indexPrefix}2025.03`)).toBe(true);
      }
      expect(covers(role.indices[0]!.names, '.security')).toBe(false);
      expect(covers(role.indices[0]!.names, 'other-index')).toBe(false);
    }
    expect(roles.query.cluster).toEqual([]);
    // Reading only: not write, index, create*, delete* or manage.
    for (const privilege of roles.query.indices.flatMap((i) => i.privileges)) {
      expect(['read', 'view_index_metadata']).toContain(privilege);
    }
    // The Deployments use the key of their role.
    for (const deployment of deployments) {
      const [container] = containers(deployment);
      const key = container!.env?.find((e) => e.name === 'ES_API_KEY')?.valueFrom?.secretKeyRef?.name;
      const name = get(deployment, 'metadata', 'name');
      if (name === 'neon-index-chunks' || name === 'neon-index-interactions') expect(key).toBe('neon-es-indexer');
      else if (name === 'neon-query') expect(key).toBe('neon-es-query');
      else expect(key, String(name)).toBeUndefined();
    }
  });
});

describe('network policies', () => {
  const policies = named('NetworkPolicy');
  const podLabels = [...deployments, one('Job', 'neon-es-api-keys')].map(
    (w) => get(w, 'spec', 'template', 'metadata', 'labels') as Record<string, string>,
  );
  const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
    Object.entries(selector).every(([k, v]) => labels[k] === v);

  it('deny everything by default for every neon-stream pod', () => {
    const deny = one('NetworkPolicy', 'neon-default-deny');
    expect(get(deny, 'spec', 'policyTypes')).toEqual(['Ingress', 'Egress']);
    expect(get(deny, 'spec', 'ingress')).toBeUndefined();
    expect(get(deny, 'spec', 'egress')).toBeUndefined();
    for (const labels of podLabels)
      expect(selects(get(deny, 'spec', 'podSelector', 'matchLabels') as Record<string, string>, labels)).toBe(true);
  });

  it('every policy opening a flow for neon-stream pods selects at least one of them', () => {
    for (const policy of policies.filter(
      (p) =>
        get(p, 'spec', 'podSelector', 'matchLabels', 'app.kubernetes.io/part-of') === 'neon-stream' ||
        (get(p, 'spec', 'podSelector', 'matchLabels', 'app.kubernetes.io/name') as string | undefined)?.startsWith(
          'neon-',
        ) === true,
    )) {
      const selector = get(policy, 'spec', 'podSelector', 'matchLabels') as Record<string, string>;
      expect(
        podLabels.some((labels) => selects(selector, labels)),
        String(get(policy, 'metadata', 'name')),
      ).toBe(true);
    }
  });

  it('only the datastore users reach Elasticsearch', () => {
    const egress = one('NetworkPolicy', 'neon-egress-elasticsearch');
    const selector = get(egress, 'spec', 'podSelector', 'matchLabels') as Record<string, string>;
    const reaching = deployments.filter((d) =>
      selects(selector, get(d, 'spec', 'template', 'metadata', 'labels') as Record<string, string>),
    );
    expect(reaching.map((d) => get(d, 'metadata', 'name')).sort()).toEqual([
      'neon-index-chunks',
      'neon-index-interactions',
      'neon-query',
    ]);
  });
});

describe('the query API from outside', () => {
  it('the Ingress routes to the query Service, whose port is the API container port', () => {
    const ingress = one('Ingress', 'neon-query');
    const backend = get(ingress, 'spec', 'rules', 0, 'http', 'paths', 0, 'backend', 'service') as {
      name: string;
      port: { name: string };
    };
    const service = one('Service', backend.name);
    const port = (get(service, 'spec', 'ports') as { name: string; targetPort: string }[]).find(
      (p) => p.name === backend.port.name,
    )!;
    const [container] = containers(one('Deployment', 'neon-query'));
    expect(container!.ports?.find((p) => p.name === port.targetPort)?.containerPort).toBe(8080);
    expect(get(ingress, 'spec', 'tls', 0, 'secretName')).toBeDefined();
  });
});

describe('observability', () => {
  const registered = new Set<string>();
  const scan = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) scan(path);
      else if (path.endsWith('.ts'))
        for (const m of readFileSync(path, 'utf8').matchAll(/['`](neon_[a-z0-9_]+)['`]/g)) registered.add(m[1]!);
    }
  };
  for (const dir of ['streams', 'processors', 'service']) scan(join(ROOT, dir));

  it('every metric the alerts and the dashboard query is one the code registers', () => {
    const used = new Set(
      allExpressions().flatMap((e) =>
        [...e.matchAll(/\b(neon_[a-z0-9_]+)/g)].map((m) => m[1]!.replace(/_(bucket|count|sum)$/, '')),
      ),
    );
    expect(used.size).toBeGreaterThan(8);
    expect([...used].filter((m) => !registered.has(m))).toEqual([]);
  });

  it('every alert has a runbook section in k8s/README.md', () => {
    const readme = readFileSync(join(ROOT, 'k8s', 'README.md'), 'utf8');
    for (const rule of ALERT_RULES) expect(readme, rule.alert).toMatch(new RegExp(`^#+ .*${rule.alert}`, 'm'));
  });

  it('the ServiceMonitor scrapes the metrics Service, which selects every process', () => {
    const monitor = one('ServiceMonitor', 'neon-stream');
    const service = one('Service', 'neon-metrics');
    const selector = get(monitor, 'spec', 'selector', 'matchLabels') as Record<string, string>;
    for (const [k, v] of Object.entries(selector)) expect(get(service, 'metadata', 'labels', k)).toBe(v);
    expect(get(monitor, 'spec', 'endpoints', 0, 'port')).toBe('metrics');
    for (const deployment of deployments) {
      const labels = get(deployment, 'spec', 'template', 'metadata', 'labels') as Record<string, string>;
      for (const [k, v] of Object.entries(get(service, 'spec', 'selector') as Record<string, string>))
        expect(labels[k]).toBe(v);
    }
  });
});

describe('the container image', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

  it('is multi-stage, built with npm run build, and runs the built CLI as a non-root user', () => {
    expect(dockerfile.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^RUN npm run build$/m);
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(finalStage).toMatch(/^USER [1-9][0-9]*:[1-9][0-9]*$/m);
    expect(finalStage).toMatch(/ENTRYPOINT \[.*"\/app\/dist\/bin\/neon\.js"\]/);
    expect(finalStage).toMatch(/COPY --from=build \/app\/dist dist/);
  });

  it('copies only what exists, and the Deployments run the image with arguments it understands', () => {
    for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const source of m[1]!.split(' ')) expect(() => statSync(join(ROOT, source)), source).not.toThrow();
    }
    const image = new Set(
      deployments.map((d) => containers(d)[0]!).map((c) => (c as unknown as { image: string }).image),
    );
    expect([...image]).toEqual(['neon-stream:0.1.0']);
  });

  it('ships the sample feed and feed list that neon start reads, and lets them into the build context', () => {
    expect(dockerfile).toMatch(/^COPY samples samples$/m);
    expect(readFileSync(join(ROOT, '.dockerignore'), 'utf8')).toMatch(/^!samples\/$/m);
  });
});

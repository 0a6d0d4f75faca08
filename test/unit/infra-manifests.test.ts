/**
 * The compose file and the Kubernetes manifests are not executed by any test here (no Docker, no
 * cluster), so these checks keep them parseable and pinned to the same versions as the local
 * launchers: bumping infra/versions.ts without them fails this file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { containerRuntimeAvailable } from '../../infra/containers.js';
import { ELASTICSEARCH_IMAGE, ELASTICSEARCH_VERSION, KAFKA_IMAGE, KAFKA_VERSION } from '../../infra/versions.js';

/** Every topic the product uses; k8s/base/generated/kafka-topics.yaml must declare exactly these. */
const EXPECTED_TOPICS = [
  'news.articles',
  'news.marked',
  'news.chunks',
  'news.chunks.unique',
  'entity.mentions',
  'entity.registry',
  'entity.spikes',
  'entity.spike-state',
  'neon.interactions',
  'neon.queries',
  'neon.answers',
  'neon.dlq',
];

const root = fileURLToPath(new URL('../../', import.meta.url));
const composePath = `${root}infra/docker-compose.yml`;
const k8sDir = `${root}k8s/base/`;
const k8sFiles = readdirSync(k8sDir, { recursive: true, encoding: 'utf8' })
  .filter((f) => (f.endsWith('.yaml') || f.endsWith('.yml')) && f !== 'kustomization.yaml')
  .sort();

type Manifest = Record<string, unknown>;

/** Parses every document of a file, failing the test with the parser's messages if any has errors. */
function documents(path: string): Manifest[] {
  const docs = parseAllDocuments(readFileSync(path, 'utf8'));
  const list = Array.isArray(docs) ? docs : [];
  const problems = list.flatMap((d) => [...d.errors, ...d.warnings].map((e) => e.message));
  expect(problems, path).toEqual([]);
  // Comment-only documents (a header before the first `---`) hold nothing to check.
  return list.map((d) => d.toJS() as unknown).filter((v): v is Manifest => isRecord(v));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Follows a path of keys through nested objects; undefined as soon as one is missing. */
function at(value: unknown, ...keys: string[]): unknown {
  return keys.reduce<unknown>((v, k) => (isRecord(v) ? v[k] : undefined), value);
}

function k8sResources(kind: string): Manifest[] {
  return k8sFiles.flatMap((f) => documents(k8sDir + f)).filter((d) => d['kind'] === kind);
}

describe('infra/docker-compose.yml', () => {
  // Parsed inside each test so a parse error fails a test rather than the whole file's collection.
  const compose = (): Manifest | undefined => documents(composePath)[0];

  it('is a single document with kafka and elasticsearch services', () => {
    expect(documents(composePath)).toHaveLength(1);
    expect(Object.keys(at(compose(), 'services') as object).sort()).toEqual(['elasticsearch', 'kafka']);
  });

  it('uses the pinned images', () => {
    expect(at(compose(), 'services', 'kafka', 'image')).toBe(KAFKA_IMAGE);
    expect(at(compose(), 'services', 'elasticsearch', 'image')).toBe(ELASTICSEARCH_IMAGE);
  });

  it('publishes every port on 127.0.0.1 only', () => {
    for (const service of ['kafka', 'elasticsearch']) {
      const ports = at(compose(), 'services', service, 'ports');
      expect(Array.isArray(ports) && ports.length > 0, service).toBe(true);
      for (const port of ports as unknown[]) expect(String(port)).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    }
  });
});

describe('k8s manifests', () => {
  it('finds the expected files', () => {
    expect(k8sFiles).toEqual([
      'config.yaml',
      'elasticsearch-api-keys.yaml',
      'elasticsearch.yaml',
      'generated/kafka-topics.yaml',
      'generated/kafka-users.yaml',
      'generated/monitoring.yaml',
      'generated/processes.yaml',
      'ingress.yaml',
      'kafka.yaml',
      'keda.yaml',
      'namespace.yaml',
      'network-policies.yaml',
      'node-tuning.yaml',
      'services.yaml',
    ]);
  });

  it.each(k8sFiles)('%s parses without errors and every resource has apiVersion and kind', (file) => {
    const docs = documents(k8sDir + file);
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      expect(typeof doc['apiVersion']).toBe('string');
      expect(typeof doc['kind']).toBe('string');
    }
  });

  it('runs the pinned Kafka version in KRaft mode with node pools', () => {
    const [kafka, ...others] = k8sResources('Kafka');
    expect(others).toHaveLength(0);
    expect(at(kafka, 'spec', 'kafka', 'version')).toBe(KAFKA_VERSION);
    expect(at(kafka, 'metadata', 'annotations')).toMatchObject({
      'strimzi.io/kraft': 'enabled',
      'strimzi.io/node-pools': 'enabled',
    });
    const pools = k8sResources('KafkaNodePool');
    expect(pools.map((p) => at(p, 'metadata', 'labels', 'strimzi.io/cluster'))).toEqual([
      at(kafka, 'metadata', 'name'),
    ]);
  });

  it('runs the pinned Elasticsearch version', () => {
    const [elasticsearch, ...others] = k8sResources('Elasticsearch');
    expect(others).toHaveLength(0);
    expect(at(elasticsearch, 'spec', 'version')).toBe(ELASTICSEARCH_VERSION);
  });

  it('declares exactly the expected topics, each on the Strimzi cluster', () => {
    const topics = k8sResources('KafkaTopic');
    const names = topics.map((t) => at(t, 'spec', 'topicName') ?? at(t, 'metadata', 'name'));
    for (const name of names) expect(EXPECTED_TOPICS).toContain(name);
    expect([...names].sort()).toEqual([...EXPECTED_TOPICS].sort());
    const cluster = at(k8sResources('Kafka')[0], 'metadata', 'name');
    for (const topic of topics) {
      expect(at(topic, 'metadata', 'labels', 'strimzi.io/cluster')).toBe(cluster);
    }
  });
});

describe('containerRuntimeAvailable', () => {
  it('answers with a boolean instead of hanging', async () => {
    const started = Date.now();
    const available = await containerRuntimeAvailable(2000);
    expect(typeof available).toBe('boolean');
    expect(Date.now() - started).toBeLessThan(3000);
  }, 5000);
});

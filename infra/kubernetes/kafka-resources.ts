import {
  DEPLOYED_PROCESSES,
  STAGE_CATALOG,
  TAIL_GROUP_PREFIX,
  type ProcessDescriptor,
} from '../../streams/pipeline/stage-catalog.js';
import { localTopicSpecs, NAME_PREFIX, TOPICS } from '../../streams/pipeline/topics.js';
import {
  KAFKA_CLUSTER,
  KEDA_KAFKA_USER,
  NAMESPACE,
  PART_OF,
  SECRETS,
  TOPIC_PARTITIONS,
  TOPIC_REPLICAS,
  kafkaUserName,
} from './cluster-names.js';

export type Manifest = Record<string, unknown>;

export type AclOperation = 'Read' | 'Write' | 'Describe';

export interface Acl {
  resource: { type: 'topic' | 'group'; name: string; patternType: 'literal' | 'prefix' };
  operations: AclOperation[];
  host: '*';
}

const OPERATION_ORDER: readonly AclOperation[] = ['Describe', 'Read', 'Write'];

/** Accumulates operations per resource, so a topic read and written gets one rule with both. */
class AclSet {
  private readonly rules = new Map<string, Acl>();

  grant(
    type: Acl['resource']['type'],
    name: string,
    patternType: Acl['resource']['patternType'],
    ops: AclOperation[],
  ): void {
    const key = `${type}/${patternType}/${name}`;
    const rule = this.rules.get(key) ?? { resource: { type, name, patternType }, operations: [], host: '*' as const };
    rule.operations = OPERATION_ORDER.filter((op) => rule.operations.includes(op) || ops.includes(op));
    this.rules.set(key, rule);
  }

  list(): Acl[] {
    return [...this.rules.values()].sort((a, b) =>
      `${a.resource.type}/${a.resource.name}`.localeCompare(`${b.resource.type}/${b.resource.name}`),
    );
  }
}

/**
 * Exactly what a process needs: Read (and Describe) on what it consumes and follows, Write on what
 * it produces (the dead-letter topic included), Read on its own group — and on the throw-away
 * groups of its follows — and, for the status page of the query service, Describe (offsets, never
 * records) on every topic and stage group.
 */
export function processAcls(process: ProcessDescriptor): Acl[] {
  const acls = new AclSet();
  for (const topic of [...process.reads, ...process.follows])
    acls.grant('topic', topic, 'literal', ['Describe', 'Read']);
  for (const topic of process.writes) acls.grant('topic', topic, 'literal', ['Describe', 'Write']);
  if (process.group !== null) acls.grant('group', process.group, 'literal', ['Read']);
  if (process.follows.length > 0) acls.grant('group', TAIL_GROUP_PREFIX, 'prefix', ['Read']);
  if (process.describesAll) {
    for (const topic of Object.values(TOPICS)) acls.grant('topic', topic, 'literal', ['Describe']);
    for (const stage of STAGE_CATALOG) acls.grant('group', stage.group, 'literal', ['Describe']);
  }
  return acls.list();
}

/** KEDA reads each scaled group's lag: Describe on those groups and their input topics. */
export function kedaAcls(): Acl[] {
  const acls = new AclSet();
  for (const stage of STAGE_CATALOG) {
    acls.grant('group', stage.group, 'literal', ['Describe']);
    for (const topic of stage.reads) acls.grant('topic', topic, 'literal', ['Describe']);
  }
  return acls.list();
}

function labels(component: string): Record<string, string> {
  return {
    'strimzi.io/cluster': KAFKA_CLUSTER,
    'app.kubernetes.io/part-of': PART_OF,
    'app.kubernetes.io/component': component,
  };
}

export function kafkaUsers(): Manifest[] {
  if (NAME_PREFIX !== '') throw new Error('render the manifests without NEON_TOPIC_PREFIX');
  const users: Manifest[] = DEPLOYED_PROCESSES.map((process) => ({
    apiVersion: 'kafka.strimzi.io/v1beta2',
    kind: 'KafkaUser',
    metadata: { name: kafkaUserName(process.name), namespace: NAMESPACE, labels: labels(process.name) },
    spec: {
      // Strimzi generates the password into the Secret of the same name (key `password`).
      authentication: { type: 'scram-sha-512' },
      authorization: { type: 'simple', acls: processAcls(process) },
    },
  }));
  users.push({
    apiVersion: 'kafka.strimzi.io/v1beta2',
    kind: 'KafkaUser',
    metadata: { name: KEDA_KAFKA_USER, namespace: NAMESPACE, labels: labels('keda') },
    spec: {
      // KEDA's TriggerAuthentication needs the user name and password in one Secret, so this user's
      // password is taken from that Secret rather than generated.
      authentication: {
        type: 'scram-sha-512',
        password: { valueFrom: { secretKeyRef: { name: SECRETS.kedaKafka, key: 'password' } } },
      },
      authorization: { type: 'simple', acls: kedaAcls() },
    },
  });
  return users;
}

/** What each topic carries, as an annotation a person reading `kubectl describe` sees. */
const TOPIC_PURPOSE: Record<string, string> = {
  [TOPICS.articles]: 'articles from intake, keyed by article id',
  [TOPICS.marked]: 'articles with sentences, entity mentions and <e> markup',
  [TOPICS.chunks]: 'windows of sentences with entity ids and time',
  [TOPICS.uniqueChunks]: 'chunks left after near-duplicate removal (also the dedupe window, rebuilt on start)',
  [TOPICS.mentions]: 'entity mentions, keyed by entity, counted by the spike detector',
  [TOPICS.registry]: 'the entity registry, latest state per entity (compacted)',
  [TOPICS.spikes]: 'spike alert states, kept 90 days (the spike list and what was already sent)',
  [TOPICS.spikeState]: 'per-entity counts and episodes, latest per entity (compacted)',
  [TOPICS.interactions]: 'timestamped entity interactions',
  [TOPICS.queries]: 'questions for the query stage',
  [TOPICS.answers]: 'answers, keyed by question id',
  [TOPICS.deadLetters]: 'records refused for good, with the reason in headers, kept 14 days',
};

export function kafkaTopics(): Manifest[] {
  return localTopicSpecs(TOPIC_PARTITIONS).map((spec) => ({
    apiVersion: 'kafka.strimzi.io/v1beta2',
    kind: 'KafkaTopic',
    metadata: {
      name: spec.topic,
      namespace: NAMESPACE,
      labels: { 'strimzi.io/cluster': KAFKA_CLUSTER, 'app.kubernetes.io/part-of': PART_OF },
      annotations: { 'neon-stream.io/carries': TOPIC_PURPOSE[spec.topic] ?? spec.topic },
    },
    spec: {
      topicName: spec.topic,
      partitions: spec.partitions,
      replicas: TOPIC_REPLICAS,
      // acks=all writes survive one broker loss; configs (retention, compaction) as the code creates locally.
      config: { 'min.insync.replicas': 2, ...spec.configs },
    },
  }));
}

import { DEAD_LETTER_MAX_MESSAGE_BYTES, TOPIC_MAX_MESSAGE_BYTES } from '../../schemas/record-size-limits.js';
import type { TopicSpec } from '../runtime/transport.js';

/** The product's topic names; Kubernetes creates the same set from k8s/topics.yaml. */
export const TOPIC_NAMES = {
  articles: 'news.articles',
  marked: 'news.marked',
  chunks: 'news.chunks',
  uniqueChunks: 'news.chunks.unique',
  mentions: 'entity.mentions',
  registry: 'entity.registry',
  spikes: 'entity.spikes',
  spikeState: 'entity.spike-state',
  interactions: 'neon.interactions',
  queries: 'neon.queries',
  answers: 'neon.answers',
  deadLetters: 'neon.dlq',
} as const;

export const TOPIC_PREFIX_PATTERN = /^[A-Za-z0-9._-]{0,100}$/;

/**
 * `NEON_TOPIC_PREFIX` (default none) goes in front of every topic and consumer group, so several
 * deployments (staging and production, or an end-to-end test) can share one Kafka cluster without
 * seeing each other. An invalid prefix is reported by the configuration check at start-up.
 */
export const NAME_PREFIX: string = TOPIC_PREFIX_PATTERN.test(process.env.NEON_TOPIC_PREFIX ?? '')
  ? (process.env.NEON_TOPIC_PREFIX ?? '')
  : '';

/**
 * Followed topics are read by throw-away groups (every replica reads every partition), all named
 * under this prefix: the one group ACL a following process needs besides its own group.
 */
export const TAIL_GROUP_PREFIX = `${NAME_PREFIX}neon.tail.`;

type Prefixed<T extends Record<string, string>> = { readonly [K in keyof T]: string };

function prefixed<T extends Record<string, string>>(names: T, prefix: string): Prefixed<T> {
  return Object.fromEntries(Object.entries(names).map(([key, name]) => [key, `${prefix}${name}`])) as Prefixed<T>;
}

/** The topics this process uses: the names above with NEON_TOPIC_PREFIX. */
export const TOPICS = prefixed(TOPIC_NAMES, NAME_PREFIX);

export type TopicName = (typeof TOPIC_NAMES)[keyof typeof TOPIC_NAMES];

const DAY_MS = 86_400_000;

/** Partitions of every topic, locally and in production. */
export const PRODUCT_PARTITIONS = 6;

/** Local and embedded topic layout: partitions like production, replication 1 on one broker. */
export function localTopicSpecs(partitions = PRODUCT_PARTITIONS): TopicSpec[] {
  return Object.values(TOPICS).map((topic) => ({
    topic,
    partitions,
    replicationFactor: 1,
    configs: {
      // Set rather than inherited from the broker, so that intake's bounds (schemas/record-size-limits)
      // and the producers' batch caps hold whatever the cluster's default.
      'max.message.bytes': String(
        topic === TOPICS.deadLetters ? DEAD_LETTER_MAX_MESSAGE_BYTES : TOPIC_MAX_MESSAGE_BYTES,
      ),
      ...(topic === TOPICS.deadLetters ? { 'retention.ms': String(14 * DAY_MS) } : {}),
      // Past spikes are listed from here, and the detector learns from it what it already sent.
      ...(topic === TOPICS.spikes ? { 'retention.ms': String(90 * DAY_MS) } : {}),
      // The latest state per entity is kept forever: markup rebuilds its registry and the spike
      // detector its counts from these on start.
      ...(topic === TOPICS.registry || topic === TOPICS.spikeState ? { 'cleanup.policy': 'compact' } : {}),
    },
  }));
}

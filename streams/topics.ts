import type { TopicSpec } from './transport.js';

/** The product's topics (DESIGN §2); Kubernetes creates the same set from k8s/topics.yaml. */
export const TOPICS = {
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

export type TopicName = (typeof TOPICS)[keyof typeof TOPICS];

const DAY_MS = 86_400_000;

/** Local and embedded topic layout: 6 partitions like production, replication 1 on one broker. */
export function localTopicSpecs(partitions = 6): TopicSpec[] {
  return Object.values(TOPICS).map((topic) => ({
    topic,
    partitions,
    replicationFactor: 1,
    ...(topic === TOPICS.deadLetters ? { configs: { 'retention.ms': String(14 * DAY_MS) } } : {}),
    // Past spikes are listed from here, and the detector learns from it what it already sent.
    ...(topic === TOPICS.spikes ? { configs: { 'retention.ms': String(90 * DAY_MS) } } : {}),
    // The latest state per entity is kept forever: markup rebuilds its registry and the spike
    // detector its counts from these on start.
    ...(topic === TOPICS.registry || topic === TOPICS.spikeState ? { configs: { 'cleanup.policy': 'compact' } } : {}),
  }));
}

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
    // The registry's latest state per entity is kept forever: markup rebuilds from it on start.
    ...(topic === TOPICS.registry ? { configs: { 'cleanup.policy': 'compact' } } : {}),
  }));
}

import { NAME_PREFIX, TOPICS } from './topics.js';

export { TAIL_GROUP_PREFIX } from './topics.js';

/**
 * The processors of the product as deployed: each is its own consumer group, reads its input
 * topics, follows some topics for state (without a group), and writes its outputs. One source of
 * truth for `neon pipeline --stages`, lag per stage (`neon topics`, `/v1/status`) and the
 * Kubernetes topics and ACLs, which tests check against this list.
 */
export interface StageDescriptor {
  /** As `neon pipeline --stages` names it; the consumer group is `neon.<name>`. */
  name: StageName;
  group: string;
  /** Consumed by the group: its lag is the stage's lag. */
  reads: readonly string[];
  /** Read from the beginning without a group, to rebuild or follow state. */
  follows: readonly string[];
  /** Produced to (the dead-letter topic included). */
  writes: readonly string[];
  /** Datastores it writes (index stages) or reads (query). */
  datastores: readonly ('chunks' | 'interactions')[];
  /**
   * Reads every stage's lag (the status page): describes — offsets only, never records — every
   * topic and every stage's group.
   */
  describesAll?: boolean;
  what: string;
}

export const STAGE_NAMES = [
  'markup',
  'chunk',
  'dedupe',
  'spikes',
  'extract',
  'index-chunks',
  'index-interactions',
  'query',
  'webhooks',
] as const;

export type StageName = (typeof STAGE_NAMES)[number];

const dlq = TOPICS.deadLetters;

export const STAGE_CATALOG: readonly StageDescriptor[] = [
  {
    name: 'markup',
    group: `${NAME_PREFIX}neon.markup`,
    reads: [TOPICS.articles],
    follows: [TOPICS.registry],
    writes: [TOPICS.marked, TOPICS.registry, dlq],
    datastores: [],
    what: 'entities, aliases, dates and <e> markup; the entity registry',
  },
  {
    name: 'chunk',
    group: `${NAME_PREFIX}neon.chunk`,
    reads: [TOPICS.marked],
    follows: [],
    writes: [TOPICS.chunks, dlq],
    datastores: [],
    what: 'overlapping windows of sentences',
  },
  {
    name: 'dedupe',
    group: `${NAME_PREFIX}neon.dedupe`,
    reads: [TOPICS.chunks],
    follows: [TOPICS.uniqueChunks],
    writes: [TOPICS.uniqueChunks, TOPICS.mentions, dlq],
    datastores: [],
    what: 'near-duplicate chunks merged (MinHash-LSH + trigram Jaccard); entity mentions',
  },
  {
    name: 'spikes',
    group: `${NAME_PREFIX}neon.spikes`,
    reads: [TOPICS.mentions],
    // The counts and what was already sent are rebuilt from these; interactions are what an alert cites.
    follows: [TOPICS.spikeState, TOPICS.spikes, TOPICS.interactions],
    writes: [TOPICS.spikes, TOPICS.spikeState, dlq],
    datastores: [],
    what: 'per-entity counts by day and hour; spike episodes',
  },
  {
    name: 'extract',
    group: `${NAME_PREFIX}neon.extract`,
    reads: [TOPICS.uniqueChunks],
    follows: [TOPICS.spikes],
    writes: [TOPICS.interactions, dlq],
    datastores: [],
    what: 'NEON entity interactions (LLM M1/M2, or the offline extractor)',
  },
  {
    name: 'index-chunks',
    group: `${NAME_PREFIX}neon.index-chunks`,
    reads: [TOPICS.uniqueChunks],
    follows: [],
    writes: [dlq],
    datastores: ['chunks'],
    what: 'unique chunks embedded into the chunks datastore',
  },
  {
    name: 'index-interactions',
    group: `${NAME_PREFIX}neon.index-interactions`,
    reads: [TOPICS.interactions],
    follows: [],
    writes: [dlq],
    datastores: ['interactions'],
    what: 'interactions embedded into the interactions datastore',
  },
  {
    name: 'query',
    group: `${NAME_PREFIX}neon.query`,
    reads: [TOPICS.queries],
    // Entity linking reads the registry; the API beside it (same Deployment) lists and streams spikes.
    follows: [TOPICS.registry, TOPICS.spikes],
    writes: [TOPICS.answers, dlq],
    datastores: ['chunks', 'interactions'],
    describesAll: true,
    what: 'questions from neon.queries answered on neon.answers',
  },
  {
    name: 'webhooks',
    group: `${NAME_PREFIX}neon.webhooks`,
    reads: [TOPICS.spikes],
    follows: [],
    writes: [dlq],
    datastores: [],
    what: 'spike alerts POSTed to the configured webhooks',
  },
];

/**
 * Every process that touches Kafka when deployed: the catalog's stages plus intake (feeds and
 * `POST /v1/articles`), which is not a consumer but publishes the pipeline's input.
 */
export interface ProcessDescriptor extends Omit<StageDescriptor, 'name' | 'group'> {
  name: StageName | 'intake';
  /** Null for a process without a consumer group of its own. */
  group: string | null;
}

export const INTAKE_PROCESS: ProcessDescriptor = {
  name: 'intake',
  group: null,
  reads: [],
  follows: [],
  writes: [TOPICS.articles, dlq],
  datastores: [],
  what: 'feeds polled and POSTed articles, normalised onto news.articles',
};

export const DEPLOYED_PROCESSES: readonly ProcessDescriptor[] = [INTAKE_PROCESS, ...STAGE_CATALOG];

export function stageDescriptor(name: StageName): StageDescriptor {
  return STAGE_CATALOG.find((s) => s.name === name)!;
}

/** Parses `--stages a,b` (or `all`), listing every unknown name at once. */
export function parseStageList(text: string): { ok: true; stages: StageName[] } | { ok: false; problem: string } {
  const wanted = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (wanted.length === 0 || wanted.includes('all')) return { ok: true, stages: [...STAGE_NAMES] };
  const unknown = wanted.filter((s) => !(STAGE_NAMES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    return { ok: false, problem: `unknown stage(s) ${unknown.join(', ')}; known: ${STAGE_NAMES.join(', ')}` };
  }
  return { ok: true, stages: [...new Set(wanted)] as StageName[] };
}

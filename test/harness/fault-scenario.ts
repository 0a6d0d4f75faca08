import type { Client } from '@elastic/elasticsearch';
import { createHash } from 'node:crypto';
import { createServer, Socket, type Server } from 'node:net';
import type { Admin } from 'kafkajs';
import { Registry } from 'prom-client';
import { expect } from 'vitest';
import { BUNDLED_SAMPLE } from '../../streams/stages/intake-sources.js';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { HashingEmbedder } from '../../processors/embed/hashing-embedder.js';
import { ALL_ENTITIES } from '../../processors/extract/extraction-targets.js';
import {
  OfflineInteractionExtractor,
  type InteractionExtractor,
} from '../../processors/extract/interaction-extractor.js';
import type { PairBatchOptions } from '../../processors/extract/pair-batches.js';
import { IntakeRejection } from '../../processors/intake/article-input.js';
import { normalizeArticle, SUMMARY_MIN_TEXT_CHARS } from '../../processors/intake/normalize-article.js';
import { readJsonlArticles } from '../../streams/archives/read-jsonl-articles.js';
import { SpikeDetector } from '../../processors/spikes/detect-spikes.js';
import { decodeRecord } from '../../schemas/avro-codec.js';
import type { Article, InteractionVariant, Mention, SpikeAlert } from '../../schemas/records.generated.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import type { Datastore } from '../../streams/datastore/datastore.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { DLQ_HEADERS } from '../../streams/runtime/dead-letter-writer.js';
import { stageMetrics } from '../../streams/telemetry/metrics.js';
import type { RunningStage, StageLogger } from '../../streams/runtime/run-stage.js';
import { startChunkStage } from '../../streams/stages/chunk-stage.js';
import { startDedupeStage } from '../../streams/stages/dedupe-stage.js';
import { startExtractStage } from '../../streams/stages/extract-stage.js';
import { startChunkIndexStage, startInteractionIndexStage } from '../../streams/stages/index-stage.js';
import { startMarkupStage } from '../../streams/stages/markup-stage.js';
import { pipelineTopics, type PipelineTopics } from '../../streams/pipeline/pipeline-topics.js';
import { startSpikeStage } from '../../streams/stages/spike-stage.js';
import { withKafkaRetries } from '../../streams/kafka/kafka-transport.js';
import { TOPIC_NAMES } from '../../streams/pipeline/topics.js';
import type { Transport } from '../../streams/runtime/transport.js';
import { runNeon, type CliRun } from '../../devkit/cli-process.js';
import { freshIndex, freshTopic } from '../../devkit/fresh-names.js';
import { freshPipelineTopics } from '../../devkit/spike-topics.js';
import { findFreePorts } from '../../infra/ports.js';
import { committedToEnd, waitUntil } from '../../devkit/kafka-progress.js';
import { readTopicOnce } from '../../streams/runtime/topic-tail.js';
import { readRawTopic, readTopicRecords } from './topic-contents.js';

/**
 * Fault scenarios on the product's own stages: the whole processing chain (markup with its entity
 * registry, chunk, dedupe with its window, spikes with their state, extract with the offline
 * extractor, both index stages) on real Kafka and Elasticsearch, fed with real articles from the
 * bundled sample, and what it leaves behind (both datastores, `neon.dlq`, the spike episodes) read
 * back in a form two runs can be compared by: documents by a content key, not only by id.
 *
 * Each run gets its own topics, consumer groups and index prefix, so an undisturbed reference and a
 * disturbed run of the same articles sit side by side on one broker and one node.
 *
 * Every topic has one partition: each stage then sees its input in one order, the order the stage
 * before it wrote, so the dedupe window (which copy of a near-duplicate survives) decides the same
 * way in every undisturbed run. What a fault may then change is what the comparison is there to catch.
 *
 * Spike episodes are the one outcome that depends on more than which records flowed: the detector
 * judges each mention against the event time its partition has reached, so the order in which
 * `entity.mentions` holds the same mentions decides when an episode starts, how long it lasts and
 * whether a mention is late (dropped by design). That order is not something the product promises
 * across runs: at-least-once delivery (a redelivered batch after a failed write, a rebalance) can
 * legitimately write the same mentions in another order. Undisturbed runs of this scenario were
 * seen ending with 33 episodes instead of 29 about once in eight (not reproduced since: nine
 * undisturbed runs all gave the same 1135 mentions and 29 episodes, the detector's own verdicts). So
 * the spike stage is checked against what it was actually given: its episodes
 * must be exactly those the product's own detector (`SpikeDetector`, same settings) computes from
 * the run's `entity.mentions` in topic order, repeats included — nothing lost, nothing counted twice,
 * no episode started twice — and the set of mentions must be the reference's. When a run's mentions
 * came in the reference's order, its episodes must also equal the reference's exactly.
 */

/** Intake's clock for the sample (normalisation refuses dates in its future): fixed, so runs agree. */
const INTAKE_NOW = Date.UTC(2025, 3, 1);

/** The index stages' in-flight bound here: below a few hundred articles' documents, so back-pressure shows. */
export const INDEX_MAX_IN_FLIGHT = 64;

export interface ScenarioTopics extends PipelineTopics {
  interactions: string;
}

export interface ScenarioNames {
  label: string;
  topics: ScenarioTopics;
  groupPrefix: string;
  indexPrefix: string;
}

/** The consumer group of a stage in a run. */
export function groupOf(names: ScenarioNames, stage: ScenarioStage): string {
  return `${names.groupPrefix}.${stage}`;
}

export type ScenarioStage =
  'markup' | 'chunk' | 'dedupe' | 'spikes' | 'extract' | 'index-chunks' | 'index-interactions';

/** Each stage and the topic it consumes, upstream first. */
export function stageInputs(names: ScenarioNames): [ScenarioStage, string][] {
  const t = names.topics;
  return [
    ['markup', t.articles],
    ['chunk', t.marked],
    ['dedupe', t.chunks],
    ['spikes', t.mentions],
    ['extract', t.uniqueChunks],
    ['index-chunks', t.uniqueChunks],
    ['index-interactions', t.interactions],
  ];
}

export function freshScenarioNames(label: string): ScenarioNames {
  const topic = (name: string): string => freshTopic(`${label}.${name}`);
  return {
    label,
    topics: {
      ...freshPipelineTopics(label),
      interactions: topic('interactions'),
    },
    groupPrefix: freshTopic(`${label}.group`),
    indexPrefix: freshIndex(label),
  };
}

/**
 * Creates the run's topics (one partition each unless `partitions` names a topic; the registry and
 * spike state compacted). More than one partition only where order cannot change the outcome.
 */
export async function createScenarioTopics(
  transport: Transport,
  names: ScenarioNames,
  partitions: Partial<Record<keyof ScenarioTopics, number>> = {},
): Promise<string[]> {
  const t = names.topics;
  const all = Object.entries(t) as [keyof ScenarioTopics, string][];
  await transport.ensureTopics(
    all.map(([role, topic]) => ({
      topic,
      partitions: partitions[role] ?? 1,
      ...(topic === t.registry || topic === t.spikeState ? { configs: { 'cleanup.policy': 'compact' } } : {}),
    })),
  );
  return all.map(([, topic]) => topic);
}

export interface SampleArticles {
  accepted: Article[];
  /** Lines intake refuses, with the reason: they go to `neon.dlq` as `npm start` sends them. */
  refused: { raw: Buffer; rejection: IntakeRejection }[];
}

/**
 * The first `count` lines of the bundled sample (Wikipedia Current Events 2025 Q1), normalised as
 * `npm start` replays them (30-character text floor for one-sentence summaries).
 */
export async function sampleArticles(count: number): Promise<SampleArticles> {
  const accepted: Article[] = [];
  const refused: SampleArticles['refused'] = [];
  let seen = 0;
  for await (const line of readJsonlArticles(BUNDLED_SAMPLE.file)) {
    if (seen++ >= count) break;
    if (line.error !== undefined) {
      refused.push({ raw: line.raw, rejection: line.error });
      continue;
    }
    try {
      accepted.push(normalizeArticle(line.input, INTAKE_NOW, { minTextChars: SUMMARY_MIN_TEXT_CHARS }));
    } catch (error) {
      if (!(error instanceof IntakeRejection)) throw error;
      refused.push({ raw: line.raw, rejection: error });
    }
  }
  return { accepted, refused };
}

/**
 * Bytes no reader can decode, on four of the run's topics: markup, chunk, extract and both index
 * stages each dead-letter what reaches them, so `neon.dlq` has something exact to compare.
 */
export async function publishPoison(transport: Transport, names: ScenarioNames): Promise<void> {
  const producer = transport.producer();
  const t = names.topics;
  const poison: [string, string][] = [
    ['articles', t.articles],
    ['marked', t.marked],
    ['unique', t.uniqueChunks],
    ['interactions', t.interactions],
  ];
  for (const [role, topic] of poison) {
    await producer.send(topic, [{ key: `poison-${role}`, value: Buffer.from(`not avro (${role})`) }]);
  }
  await producer.disconnect();
}

/** Publishes articles (and dead-letters the refused lines) as intake does. */
export async function publishArticles(
  transport: Transport,
  names: ScenarioNames,
  sample: { accepted: readonly Article[]; refused?: SampleArticles['refused'] },
): Promise<void> {
  const producer = transport.producer();
  const publisher = new TransportArticlePublisher(producer, {
    articlesTopic: names.topics.articles,
    deadLetterTopic: names.topics.deadLetters,
  });
  for (const article of sample.accepted) await publisher.publish(article);
  for (const { raw, rejection } of sample.refused ?? []) await publisher.reject(raw, rejection, 'fault-scenario');
  await producer.disconnect();
}

/**
 * The plan published as the reference run publishes it (the first part, the poison, the rest), but
 * one article every `intervalMs`: a stream the stages are busy with for a while, not one burst.
 */
export async function publishPaced(
  transport: Transport,
  names: ScenarioNames,
  plan: IngestPlan,
  intervalMs: number,
): Promise<void> {
  const producer = transport.producer();
  const publisher = new TransportArticlePublisher(producer, {
    articlesTopic: names.topics.articles,
    deadLetterTopic: names.topics.deadLetters,
  });
  const paced = async (part: SampleArticles): Promise<void> => {
    for (const article of part.accepted) {
      await publisher.publish(article);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
    for (const { raw, rejection } of part.refused) await publisher.reject(raw, rejection, 'fault-scenario');
  };
  try {
    await paced(plan.first);
    await publishPoison(transport, names);
    await paced(plan.rest);
  } finally {
    await producer.disconnect();
  }
}

export interface ScenarioStages {
  readonly stages: ReadonlyMap<ScenarioStage, RunningStage>;
  readonly registry: Registry;
  stop(drainMs?: number): Promise<void>;
}

export interface ScenarioStageOptions {
  datastore: Datastore;
  /** Which stages run here; default all. */
  only?: readonly ScenarioStage[];
  log?: StageLogger;
  /** The extract stage's extractor; default the offline extractor. */
  extractor?: InteractionExtractor;
  /** NEON's variants the extract stage runs; default the product's. */
  variants?: readonly InteractionVariant[];
  /** Over the product's M2 batching. */
  batching?: Partial<PairBatchOptions>;
}

/** A fault test's seed: `NEON_FAULT_SEED` when set (to repeat a run's draws), else a fresh one. */
export function faultSeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.NEON_FAULT_SEED;
  return given !== undefined && given !== '' ? Number(given) : Math.floor(Math.random() * 2 ** 31);
}

/** The embedder of the scenarios: deterministic and instant, so the faults, not inference, take the time. */
export const scenarioEmbedder = new HashingEmbedder(64);

/**
 * The product's stages wired as `startNeonPipeline` wires them (the product's own extract and spike
 * settings, the offline extractor on every entity), on this run's topics and groups. Downstream
 * first; `stop` goes upstream first so each stage drains before the next one stops.
 */
export async function startScenarioStages(
  transport: Transport,
  names: ScenarioNames,
  options: ScenarioStageOptions,
): Promise<ScenarioStages> {
  const config = loadProductConfig({ NEON_EMBEDDER: 'hashing' });
  const registry = new Registry();
  const selected = new Set<ScenarioStage>(options.only ?? stageInputs(names).map(([stage]) => stage));
  const topics = names.topics;
  const common = (stage: ScenarioStage) => ({
    groupId: groupOf(names, stage),
    metrics: stageMetrics(registry, stage),
    ...(options.log ? { log: options.log } : {}),
  });
  const indexOptions = (stage: ScenarioStage) => ({
    ...common(stage),
    datastore: options.datastore,
    embedder: scenarioEmbedder,
    registry,
    deadLetterTopic: topics.deadLetters,
    maxInFlight: INDEX_MAX_IN_FLIGHT,
  });
  if (selected.has('index-chunks') || selected.has('index-interactions')) {
    await options.datastore.prepare({ model: scenarioEmbedder.model, dimensions: scenarioEmbedder.dimensions });
  }
  const stages = new Map<ScenarioStage, RunningStage>();
  const order: ScenarioStage[] = [
    'index-chunks',
    'index-interactions',
    'extract',
    'spikes',
    'dedupe',
    'chunk',
    'markup',
  ];
  const stop = async (drainMs?: number): Promise<void> => {
    for (const name of [...order].reverse()) await stages.get(name)?.stop(drainMs);
  };
  try {
    for (const name of order) {
      if (!selected.has(name)) continue;
      switch (name) {
        case 'index-chunks':
          stages.set(
            name,
            await startChunkIndexStage(transport, { ...indexOptions(name), inputTopic: topics.uniqueChunks }),
          );
          break;
        case 'index-interactions':
          stages.set(
            name,
            await startInteractionIndexStage(transport, { ...indexOptions(name), inputTopic: topics.interactions }),
          );
          break;
        case 'extract':
          stages.set(
            name,
            await startExtractStage(transport, {
              ...common(name),
              topics,
              interactionsTopic: topics.interactions,
              extractor: options.extractor ?? new OfflineInteractionExtractor(),
              targets: ALL_ENTITIES,
              variants: options.variants ?? config.extract.variants,
              batching: { ...config.extract.batching, ...options.batching },
              pairSelection: config.extract.pairSelection,
              registry,
            }),
          );
          break;
        case 'spikes':
          stages.set(
            name,
            await startSpikeStage(transport, {
              ...common(name),
              topics,
              interactionsTopic: topics.interactions,
              detector: config.spikes,
              registry,
            }),
          );
          break;
        case 'dedupe':
          stages.set(name, await startDedupeStage(transport, { ...common(name), topics }));
          break;
        case 'chunk':
          stages.set(name, await startChunkStage(transport, { ...common(name), topics }));
          break;
        case 'markup':
          stages.set(name, await startMarkupStage(transport, { ...common(name), topics, workers: 0 }));
          break;
      }
    }
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return { stages, registry, stop };
}

/**
 * Every stage's group committed to the end of its input, twice in a row a moment apart (a stage can
 * commit its input just before its output reaches the next stage).
 */
export async function waitUntilSettled(
  admin: Admin,
  names: ScenarioNames,
  timeoutMs: number,
  stages: readonly ScenarioStage[] = stageInputs(names).map(([stage]) => stage),
): Promise<void> {
  let settledOnce = false;
  await waitUntil(
    async () => {
      for (const [stage, topic] of stageInputs(names)) {
        if (!stages.includes(stage)) continue;
        if (!(await committedToEnd(admin, groupOf(names, stage), topic))) {
          settledOnce = false;
          return false;
        }
      }
      if (settledOnce) return true;
      settledOnce = true;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      return false;
    },
    timeoutMs,
    `every stage of ${names.label} committed to the end of its input`,
  );
}

/** Committed offset of a group on partition 0 of a topic (-1: none yet). */
export async function committedOffset(admin: Admin, group: string, topic: string): Promise<bigint> {
  const [committed] = await withKafkaRetries(() => admin.fetchOffsets({ groupId: group, topics: [topic] }));
  const partition = committed!.partitions.find((p) => p.partition === 0);
  return BigInt(partition?.offset ?? '-1');
}

/** Records a topic holds, over all its partitions (its end offsets summed). */
export async function topicEnd(admin: Admin, topic: string): Promise<bigint> {
  const ends = await withKafkaRetries(() => admin.fetchTopicOffsets(topic));
  return ends.reduce((sum, p) => sum + BigInt(p.high), 0n);
}

/** A group's committed offsets on a topic, over all its partitions (none committed counts 0). */
export async function committedTotal(admin: Admin, group: string, topic: string): Promise<bigint> {
  const [committed] = await withKafkaRetries(() => admin.fetchOffsets({ groupId: group, topics: [topic] }));
  return committed!.partitions.reduce((sum, p) => sum + (p.offset === '-1' ? 0n : BigInt(p.offset)), 0n);
}

export const sha = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 20);

/** One document as compared between runs: its id, content key and what a fault could get wrong. */
export interface DocumentSummary {
  id: string;
  /** Text hash and date (and for interactions the pair and variant): what "the same document" means. */
  key: string;
  /** Sources merged in (chunks: provenance articles; interactions: chunks), sorted. */
  sources: string[];
  entities: string[];
  version: number;
}

export interface DatastoreContents {
  chunks: DocumentSummary[];
  interactions: DocumentSummary[];
}

/**
 * Runs a read again while its indices' shards are still starting: the pipeline creates a monthly
 * index the moment its first document arrives, and a read polled at that moment meets an index
 * whose only shard is not yet assigned ("no_shard_available_action_exception").
 */
async function whileShardsStart<T>(read: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await read();
    } catch (error) {
      if (
        Date.now() > deadline ||
        !JSON.stringify((error as { body?: unknown }).body ?? '').includes('no_shard_available')
      )
        throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function readIndex(
  es: Client,
  pattern: string,
  summarise: (source: Record<string, unknown>) => Omit<DocumentSummary, 'version'>,
): Promise<DocumentSummary[]> {
  const page = await whileShardsStart(async () => {
    await es.indices.refresh({ index: pattern, allow_no_indices: true, ignore_unavailable: true });
    return es.search<Record<string, unknown>>({
      index: pattern,
      size: 10_000,
      version: true,
      track_total_hits: true,
      allow_no_indices: true,
      ignore_unavailable: true,
      _source: { excludes: ['embedding'] },
    });
  });
  const total = typeof page.hits.total === 'number' ? page.hits.total : (page.hits.total?.value ?? 0);
  if (total > page.hits.hits.length) throw new Error(`${pattern}: ${total} documents, more than one page`);
  return page.hits.hits.map((hit) => {
    const summary = summarise(hit._source!);
    // The document's own id field and Elasticsearch's _id must agree.
    expect(hit._id).toBe(summary.id);
    return { ...summary, version: hit._version ?? 1 };
  });
}

const sorted = (values: unknown): string[] => [...((values as string[] | undefined) ?? [])].sort();

/** Both datastores of a run, read from Elasticsearch directly. */
export async function readDatastores(es: Client, names: ScenarioNames): Promise<DatastoreContents> {
  const chunks = await readIndex(es, `${names.indexPrefix}-chunks-*`, (d) => ({
    id: String(d.id),
    key: `${sha(String(d.text))}@${String(d.published_at)}`,
    sources: sorted(d.article_ids),
    entities: sorted(d.entity_ids),
  }));
  const interactions = await readIndex(es, `${names.indexPrefix}-interactions-*`, (d) => ({
    id: String(d.id),
    key: `${sha([d.variant, d.subject_id, d.object_id, d.text].map(String).join('|'))}@${String(d.published_at)}`,
    sources: sorted(d.chunk_ids),
    entities: sorted(d.entity_ids),
  }));
  return { chunks, interactions };
}

/** Ids of the documents a run holds right now (for the committed-offset checks during an outage). */
export async function documentIdsNow(
  es: Client,
  names: ScenarioNames,
): Promise<{ chunks: Set<string>; interactions: Set<string> }> {
  const { chunks, interactions } = await readDatastores(es, names);
  return { chunks: new Set(chunks.map((d) => d.id)), interactions: new Set(interactions.map((d) => d.id)) };
}

/** Episodes by key (`entity|granularity|start`) → their distinct states (`state@window:observed`), sorted. */
export type SpikeEpisodes = Map<string, string[]>;

export interface RunOutcome {
  datastores: DatastoreContents;
  /**
   * `stage|code|hash of the original bytes`, one per dead-lettered input, sorted. A second dead
   * letter of the same input record (same source topic, partition and offset, same stage and code)
   * is its redelivery after a fault — at-least-once, as the dead-letter writer promises — and counts
   * once; every copy is kept in `deadLetterCopies`.
   */
  deadLetters: string[];
  /** Dead-letter records on `neon.dlq`, redeliveries included. */
  deadLetterCopies: number;
  /** What the spike stage wrote to `entity.spikes`, as episodes. */
  spikeEpisodes: SpikeEpisodes;
  /** Alert records on the spike topic (repeats included). */
  alertRecords: number;
  /** `entity.mentions` in topic order (partition, offset), repeats included: the spike stage's input. */
  mentions: { partition: number; mention: Mention }[];
}

/** Alerts gathered into episodes; a repeated alert record adds nothing. */
export function episodesOf(alerts: Iterable<SpikeAlert>): SpikeEpisodes {
  const episodes = new Map<string, Set<string>>();
  for (const a of alerts) {
    const key = `${a.entity_id}|${a.granularity}|${a.episode_start ?? 'none'}`;
    const states = episodes.get(key) ?? new Set<string>();
    states.add(`${a.state}@${a.window_start}:${a.observed}`);
    episodes.set(key, states);
  }
  return new Map([...episodes].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, [...v].sort()]));
}

/**
 * The episodes the product's detector decides for these mentions, offered in this order, with the
 * settings the scenario's spike stage runs with. Each alert is read back at once, as the stage reads
 * its own alerts back from `entity.spikes` (the detector forgets an entity only after that echo,
 * and nothing here is quiet for its 35 days).
 */
export function detectEpisodesOffline(mentions: RunOutcome['mentions']): SpikeEpisodes {
  const { spikes } = loadProductConfig({ NEON_EMBEDDER: 'hashing' });
  const detector = new SpikeDetector({ ...spikes, alertsEchoed: true });
  const alerts: SpikeAlert[] = [];
  for (const { partition, mention } of mentions) {
    for (const alert of detector.offer(mention, partition).alerts) {
      detector.noteSentAlert(alert);
      alerts.push(alert);
    }
  }
  return episodesOf(alerts);
}

/** A mention as the detector tells it from another: entity, chunk, article and event time. */
const mentionKey = (m: Mention): string => `${m.entity_id}|${m.chunk_id}|${m.article_id}|${m.t}`;

/** The distinct mentions of a run in the order they first appear on the topic. */
function firstOccurrences(mentions: RunOutcome['mentions']): string[] {
  return [...new Set(mentions.map(({ mention }) => mentionKey(mention)))];
}

export async function readOutcome(es: Client, transport: Transport, names: ScenarioNames): Promise<RunOutcome> {
  const datastores = await readDatastores(es, names);
  const dlq = await readRawTopic(transport, names.topics.deadLetters);
  const bySource = new Map<string, string>();
  for (const [n, d] of dlq.entries()) {
    const what = `${d.headers[DLQ_HEADERS.stage]}|${d.headers[DLQ_HEADERS.errorCode]}|${sha(d.value?.toString('base64') ?? '')}`;
    // A dead letter that names no source record (intake's refusals) is its own: never merged.
    const source =
      d.headers[DLQ_HEADERS.offset] === undefined
        ? `unsourced ${n}`
        : `${d.headers[DLQ_HEADERS.topic]}|${d.headers[DLQ_HEADERS.partition]}|${d.headers[DLQ_HEADERS.offset]}`;
    bySource.set(`${source}|${what}`, what);
  }
  const deadLetters = [...bySource.values()].sort();
  const alerts = await readTopicRecords(transport, names.topics.spikes, 'SpikeAlert');
  const mentions = await readTopicRecords(transport, names.topics.mentions, 'Mention');
  return {
    datastores,
    deadLetters,
    deadLetterCopies: dlq.length,
    spikeEpisodes: episodesOf(alerts.map((a) => a.value)),
    alertRecords: alerts.length,
    mentions: mentions.map((m) => ({ partition: m.partition, mention: m.value })),
  };
}

/** Content keys that occur more than once. */
function repeatedKeys(documents: readonly DocumentSummary[]): string[] {
  const counts = new Map<string, number>();
  for (const d of documents) counts.set(d.key, (counts.get(d.key) ?? 0) + 1);
  return [...counts].filter(([, n]) => n > 1).map(([k, n]) => `${k} ×${n}`);
}

function byKey(documents: readonly DocumentSummary[]): string[] {
  return documents.map((d) => `${d.key} ${d.id} [${d.sources.join(',')}] {${d.entities.join(',')}}`).sort();
}

/** Counts and samples of an outcome, for the logs. */
export function describeOutcome(outcome: RunOutcome): string {
  const rewritten = (docs: readonly DocumentSummary[]): number => docs.filter((d) => d.version > 1).length;
  const states = [...outcome.spikeEpisodes.values()].reduce((n, s) => n + s.length, 0);
  return (
    `chunks ${outcome.datastores.chunks.length} (written again: ${rewritten(outcome.datastores.chunks)}), ` +
    `interactions ${outcome.datastores.interactions.length} (written again: ${rewritten(outcome.datastores.interactions)}), ` +
    `dead letters ${outcome.deadLetters.length} (records ${outcome.deadLetterCopies}), spike episodes ${outcome.spikeEpisodes.size} (${states} states, ${outcome.alertRecords} alert records), ` +
    `mentions ${outcome.mentions.length} (${firstOccurrences(outcome.mentions).length} distinct)`
  );
}

/**
 * The spike stage did exactly what the product's detector does with the mentions the run carried
 * (see the header): the same episodes with the same states, and no episode started twice.
 */
export function expectEpisodesOfOwnMentions(outcome: RunOutcome, label: string): void {
  expect(Object.fromEntries(outcome.spikeEpisodes), `${label}: spike episodes against its own entity.mentions`).toEqual(
    Object.fromEntries(detectEpisodesOffline(outcome.mentions)),
  );
  const startedTwice = [...outcome.spikeEpisodes]
    .filter(([, states]) => states.filter((s) => s.startsWith('STARTED@')).length !== 1)
    .map(([key, states]) => `${key}: ${states.join(' ')}`);
  expect(startedTwice, `${label}: episodes without exactly one STARTED state`).toEqual([]);
}

/**
 * The disturbed run left exactly what the undisturbed one did: the same documents in both datastores
 * (by content key, id, merged sources and entities; none twice), the same dead letters, the same
 * mentions for the spike stage; its spike episodes are what the detector decides for its own
 * mentions in its own order, and the reference's when that order is the reference's (see the header).
 */
export function expectSameOutcome(actual: RunOutcome, reference: RunOutcome): void {
  for (const kind of ['chunks', 'interactions'] as const) {
    const docs = actual.datastores[kind];
    expect(repeatedKeys(docs), `${kind}: content keys held by more than one document`).toEqual([]);
    expect(new Set(docs.map((d) => d.id)).size, `${kind}: ids`).toBe(docs.length);
    const got = byKey(docs);
    const want = byKey(reference.datastores[kind]);
    const missing = want.filter((d) => !got.includes(d));
    const unexpected = got.filter((d) => !want.includes(d));
    expect(
      { missing: missing.slice(0, 5), unexpected: unexpected.slice(0, 5) },
      `${kind}: ${missing.length} missing, ${unexpected.length} unexpected`,
    ).toEqual({ missing: [], unexpected: [] });
    expect(docs.length, kind).toBe(reference.datastores[kind].length);
  }
  expect(actual.deadLetters, 'dead letters').toEqual(reference.deadLetters);
  const mentions = firstOccurrences(actual.mentions);
  const referenceMentions = firstOccurrences(reference.mentions);
  expect([...mentions].sort(), 'entity.mentions: the distinct mentions').toEqual([...referenceMentions].sort());
  expectEpisodesOfOwnMentions(reference, 'undisturbed run');
  expectEpisodesOfOwnMentions(actual, 'disturbed run');
  if (mentions.every((key, i) => key === referenceMentions[i])) {
    expect(Object.fromEntries(actual.spikeEpisodes), 'spike episodes (mentions in the reference order)').toEqual(
      Object.fromEntries(reference.spikeEpisodes),
    );
  }
}

/** What the in-flight bound did to a stage's consumer: pauses and resumes seen. */
export interface PauseLog {
  paused: number;
  resumed: number;
  /** True while the consumer is paused. */
  pausedNow: boolean;
}

/**
 * The transport with every consumer of the named groups watched: the stage runtime pauses a
 * consumer's partitions at its in-flight bound and resumes them below it (record-source.ts).
 */
export function watchPauses(
  transport: Transport,
  groups: readonly string[],
): { transport: Transport; pauses: Map<string, PauseLog> } {
  const pauses = new Map<string, PauseLog>(groups.map((g) => [g, { paused: 0, resumed: 0, pausedNow: false }]));
  const watched: Transport = Object.create(transport) as Transport;
  watched.consumer = (options) => {
    const consumer = transport.consumer(options);
    const log = pauses.get(options.groupId);
    if (!log) return consumer;
    return new Proxy(consumer, {
      get(target, property, receiver) {
        if (property === 'pause') {
          return () => {
            log.paused += 1;
            log.pausedNow = true;
            target.pause();
          };
        }
        if (property === 'resume') {
          return () => {
            log.resumed += 1;
            log.pausedNow = false;
            target.resume();
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  return { transport: watched, pauses };
}

/**
 * The record ids on a topic of one partition, with their offsets; records no reader can decode (the
 * poison) are left out. (A throwing handler would stop a topic tail for good: decode here, safely.)
 */
export async function recordIdsByOffset(
  transport: Transport,
  topic: string,
  name: 'Chunk' | 'Interaction',
): Promise<{ offset: bigint; id: string }[]> {
  const records: { offset: bigint; id: string }[] = [];
  await readTopicOnce(
    transport,
    topic,
    (record) => {
      try {
        records.push({ offset: BigInt(record.offset), id: decodeRecord(name, record.value, record.headers).id });
      } catch {
        // poison: not a document
      }
    },
    { purpose: 'test-read' },
  );
  return records.sort((a, b) => (a.offset < b.offset ? -1 : 1));
}

/** A stage logger that keeps warnings and errors (counted by message) instead of printing each one. */
export function collectingLogger(): { log: StageLogger; summary: () => string } {
  const counts = new Map<string, number>();
  const log: StageLogger = (level, message, fields) => {
    if (level === 'info') return;
    const stage = typeof fields?.stage === 'string' ? fields.stage : '';
    const key = `${level} ${stage}: ${message}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  return {
    log,
    summary: () => [...counts].map(([k, n]) => `${k} ×${n}`).join('; ') || 'none',
  };
}

/**
 * A TCP proxy that holds each chunk of the server's replies for `delayMs` (adjustable while it runs)
 * before passing it on: a slow sink without touching the shared server.
 */
export interface SlowProxy {
  readonly port: number;
  delayMs: number;
  close(): Promise<void>;
}

export async function startSlowProxy(target: { host: string; port: number }, delayMs = 0): Promise<SlowProxy> {
  const sockets = new Set<Socket>();
  const proxy: { port: number; delayMs: number; close(): Promise<void> } = {
    port: 0,
    delayMs,
    close: () => Promise.resolve(),
  };
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop);
    // The server's close reaches the client after the replies held back, not before them.
    upstream.on('close', () => setTimeout(drop, proxy.delayMs + 10));
    upstream.connect(target.port, target.host, () => {
      client.pipe(upstream);
      upstream.on('data', (chunk: Buffer) => {
        const write = (): void => {
          if (!client.destroyed) client.write(chunk);
        };
        if (proxy.delayMs === 0) write();
        else setTimeout(write, proxy.delayMs);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  proxy.port = typeof address === 'object' && address ? address.port : 0;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return proxy;
}

/**
 * Names for a run whose stages may also run as `neon pipeline` subprocesses: the product's topic
 * names under a fresh `NEON_TOPIC_PREFIX` (its groups are then `<prefix>neon.<stage>`), and a fresh
 * `NEON_INDEX_PREFIX`.
 */
export function prefixedScenarioNames(label: string): ScenarioNames & { topicPrefix: string } {
  const topicPrefix = `${freshTopic(label)}.`;
  const topics = Object.fromEntries(
    Object.entries(TOPIC_NAMES).map(([key, name]) => [key, `${topicPrefix}${name}`]),
  ) as Record<keyof typeof TOPIC_NAMES, string>;
  return {
    label,
    topicPrefix,
    topics: { ...pipelineTopics(topics), interactions: topics.interactions },
    groupPrefix: `${topicPrefix}neon`,
    indexPrefix: freshIndex(label),
  };
}

/** One labelled sample of a Prometheus text exposition (`name{stage="x"}`), or undefined. */
export function metricValue(exposition: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const matches = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (matches) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

/** The articles in two parts with poison between them: the same order in every run of a scenario. */
export interface IngestPlan {
  first: SampleArticles;
  rest: SampleArticles;
}

export function splitSample(sample: SampleArticles, firstCount: number): IngestPlan {
  return {
    first: { accepted: sample.accepted.slice(0, firstCount), refused: [] },
    rest: { accepted: sample.accepted.slice(firstCount), refused: sample.refused },
  };
}

/**
 * The undisturbed run: the same stages, articles and poison on fresh topics, groups and indices, run
 * until every stage has committed everything. Its outcome is what each disturbed run must equal.
 */
export async function runReference(
  transport: Transport,
  admin: Admin,
  es: Client,
  plan: IngestPlan,
  cleanup: { topics: string[] },
  label: string,
): Promise<{ outcome: RunOutcome; ms: number; inputRecords: Record<ScenarioStage, number> }> {
  const started = Date.now();
  const names = freshScenarioNames(label);
  cleanup.topics.push(...(await createScenarioTopics(transport, names)));
  const datastore = new ElasticsearchDatastore({ es, prefix: names.indexPrefix });
  const logger = collectingLogger();
  const stages = await startScenarioStages(transport, names, { datastore, log: logger.log });
  try {
    await publishArticles(transport, names, plan.first);
    await publishPoison(transport, names);
    await publishArticles(transport, names, plan.rest);
    await waitUntilSettled(admin, names, 120_000);
  } finally {
    await stages.stop();
  }
  const inputRecords = {} as Record<ScenarioStage, number>;
  for (const [stage, topic] of stageInputs(names)) inputRecords[stage] = Number(await topicEnd(admin, topic));
  const outcome = await readOutcome(es, transport, names);
  await datastore.destroy();
  return { outcome, ms: Date.now() - started, inputRecords };
}

/** Each stage's committed offset against the end of its input, and its counters: for the logs. */
export async function describeProgress(admin: Admin, names: ScenarioNames, stages?: ScenarioStages): Promise<string> {
  const parts: string[] = [];
  for (const [stage, topic] of stageInputs(names)) {
    const [end] = await withKafkaRetries(() => admin.fetchTopicOffsets(topic));
    const committed = await committedOffset(admin, groupOf(names, stage), topic);
    const stats = stages?.stages.get(stage)?.stats();
    parts.push(
      `${stage} ${committed}/${end!.high}` +
        (stats
          ? ` (in ${stats.received}, done ${stats.completed}, in flight ${stats.inFlight}, dlq ${stats.deadLettered})`
          : ''),
    );
  }
  return parts.join('; ');
}

/** Each stage's consumer group as the broker sees it (state, members): for the logs of a stuck run. */
export async function describeGroups(admin: Admin, names: ScenarioNames): Promise<string> {
  const stages = stageInputs(names).map(([stage]) => stage);
  const { groups } = await admin.describeGroups(stages.map((stage) => groupOf(names, stage)));
  return stages
    .map((stage) => {
      const group = groups.find((g) => g.groupId === groupOf(names, stage));
      return `${stage} ${group?.state ?? 'unknown'} (${group?.members.length ?? 0} members)`;
    })
    .join('; ');
}

/** Every sample of a labelled Prometheus family matching `labels`, summed (0 if none). */
export function metricSum(exposition: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

/** A stage's own counters in one process, as its `/metrics` shows them. */
export interface StageCounters {
  /** Records taken from its input since the process started. */
  received: number;
  /** Outputs its sinks acknowledged (Kafka records, or documents for an index stage). */
  sent: number;
  /** Records taken and not yet acknowledged: work a kill now would lose. */
  inFlight: number;
  deadLettered: number;
}

export async function stageCounters(metricsUrl: string, stage: ScenarioStage): Promise<StageCounters> {
  const metrics = await (await fetch(metricsUrl)).text();
  return {
    received: metricSum(metrics, 'neon_stage_records_received_total', { stage }),
    sent: metricSum(metrics, 'neon_stage_records_sent_total', { stage }),
    inFlight: metricSum(metrics, 'neon_stage_in_flight', { stage }),
    deadLettered: metricSum(metrics, 'neon_dead_letters_total', { stage }),
  };
}

/** One `neon pipeline` process of a run, with the address of its metrics once it has printed it. */
export interface StageProcess extends CliRun {
  readonly metricsUrl: Promise<string>;
  /** Resolves once it says it is up ("Ctrl-C to stop"); rejects if it exits first. */
  readonly ready: Promise<void>;
}

export interface StageProcessOptions {
  kafkaBrokers: string[];
  /** Where its Elasticsearch requests go (a proxy, say). */
  elasticsearchUrl: string;
  /** Default 0: a free port, read back from what the process prints. */
  metricsPort?: number;
}

/**
 * Stages as they are deployed: `neon pipeline --stages <stages> --no-api` on a run's prefixed
 * names, as a subprocess (so that a test can kill it), each `start()` a new process of the same
 * consumer groups. Markup tags on its own thread (NEON_MARKUP_WORKERS=0) as the in-process stages
 * here do: worker threads hand analyses back in the order they finish, and the reference run's
 * order is what a run is compared with.
 */
export function stageProcess(
  names: ScenarioNames & { topicPrefix: string },
  stages: readonly ScenarioStage[],
  options: StageProcessOptions,
): { start: () => StageProcess } {
  const env = {
    ...process.env,
    KAFKA_BROKERS: options.kafkaBrokers.join(','),
    ES_URL: options.elasticsearchUrl,
    NEON_TOPIC_PREFIX: names.topicPrefix,
    NEON_INDEX_PREFIX: names.indexPrefix,
    NEON_EMBEDDER: 'hashing',
    NEON_EMBEDDINGS_DIMENSIONS: '64',
    NEON_MARKUP_WORKERS: '0',
  };
  const args = [
    'pipeline',
    '--stages',
    stages.join(','),
    '--no-api',
    '--metrics-port',
    String(options.metricsPort ?? 0),
  ];
  return {
    start: () => {
      const run = runNeon(args, env);
      const metricsUrl = run.waitFor(/metrics at (http:\/\/\S+\/metrics)/, 180_000).then((match) => match[1]!);
      const ready = run.waitFor(/Ctrl-C to stop/, 180_000).then(() => undefined);
      // Awaited by whoever needs them; a process killed before it is up must not be an unhandled rejection.
      metricsUrl.catch(() => undefined);
      ready.catch(() => undefined);
      return Object.assign(run, { metricsUrl, ready });
    },
  };
}

/**
 * The two index stages as `neon pipeline` runs them, each `start()` a subprocess, writing to
 * Elasticsearch through a proxy whose replies the test can hold back (`proxy.delayMs`): S11's
 * slow sink. The upstream stages stay in the test's process.
 */
export async function slowIndexerProcess(
  names: ScenarioNames & { topicPrefix: string },
  cluster: { kafkaBrokers: string[]; elasticsearchUrl: string },
): Promise<{
  proxy: SlowProxy;
  metricsPort: number;
  groups: { chunks: string; interactions: string };
  start: () => CliRun;
}> {
  const esUrl = new URL(cluster.elasticsearchUrl);
  const proxy = await startSlowProxy({ host: esUrl.hostname, port: Number(esUrl.port) });
  const [metricsPort] = await findFreePorts(1);
  const indexers = stageProcess(names, ['index-chunks', 'index-interactions'], {
    kafkaBrokers: cluster.kafkaBrokers,
    elasticsearchUrl: `http://127.0.0.1:${proxy.port}`,
    metricsPort: metricsPort!,
  });
  return {
    proxy,
    metricsPort: metricsPort!,
    groups: { chunks: groupOf(names, 'index-chunks'), interactions: groupOf(names, 'index-interactions') },
    start: () => indexers.start(),
  };
}

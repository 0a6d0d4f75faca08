/**
 * What `npm run bench -- pipeline` needs around the product on Kafka and Elasticsearch: fresh names
 * under one run id, `neon pipeline` child processes, progress probes and the clean-up.
 *
 * `NEON_TOPIC_PREFIX` is read when streams/pipeline/topics.ts is imported, so every measured pipeline (and
 * every stage measured alone) runs as its own `neon pipeline` process with its own prefix: the
 * product exactly as deployed, measured from outside.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Client, estypes } from '@elastic/elasticsearch';
import type { Admin } from 'kafkajs';
import { STAGE_CATALOG, stageDescriptor, type StageName } from '../streams/pipeline/stage-catalog.js';
import { NAME_PREFIX, TOPIC_NAMES } from '../streams/pipeline/topics.js';
import { withKafkaRetries } from '../streams/kafka/kafka-transport.js';
import { runNeon, type CliRun } from '../devkit/cli-process.js';
import { committedToEnd } from '../devkit/kafka-progress.js';

const RUN_ID = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;

/** Every topic and consumer group this run creates starts with this… */
export const TOPIC_ROOT = `bench.pipeline.${RUN_ID}.`;
/** …and every index and index template with this. */
export const INDEX_ROOT = `bench-pipeline-${RUN_ID}-`;

/** The index stages make documents visible within their template's refresh interval (1 s). */
const SETTLE_MS = 2_500;
const READY_TIMEOUT_MS = 300_000;
const STOP_GRACE_MS = 45_000;

export interface Names {
  label: string;
  /** NEON_TOPIC_PREFIX of the process: topics and consumer groups. */
  topicPrefix: string;
  /** NEON_INDEX_PREFIX: the datastores are `<prefix>-chunks` and `<prefix>-interactions`. */
  indexPrefix: string;
}

/** Names nothing else uses; `label` is lower-case letters, digits and dashes. */
export function freshNames(label: string): Names {
  return { label, topicPrefix: `${TOPIC_ROOT}${label}.`, indexPrefix: `${INDEX_ROOT}${label}` };
}

export type TopicKey = keyof typeof TOPIC_NAMES;

export function topicOf(names: Names, key: TopicKey): string {
  return `${names.topicPrefix}${TOPIC_NAMES[key]}`;
}

/** A stage's consumer group and input topics, as a process with `names`' prefix has them. */
export interface StageBinding {
  name: StageName;
  group: string;
  reads: string[];
}

export function stageBinding(names: Names, name: StageName): StageBinding {
  const descriptor = stageDescriptor(name);
  // The catalog carries this process's own prefix; swap it for the measured process's.
  const rebase = (text: string): string => `${names.topicPrefix}${text.slice(NAME_PREFIX.length)}`;
  return { name, group: rebase(descriptor.group), reads: descriptor.reads.map(rebase) };
}

export class Aborted extends Error {
  override readonly name = 'Aborted';
}

export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Aborted('stopped'));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Aborted('stopped'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// ---------------------------------------------------------------------------------------------
// `neon pipeline` processes

const children = new Set<CliRun>();

/**
 * Starts `neon pipeline --stages <stages> --no-api` under `names` and resolves once every stage has
 * joined its group (the command prints "Ctrl-C to stop" after that), so start-up is never timed.
 */
export async function spawnPipeline(env: NodeJS.ProcessEnv, names: Names, stages: 'all' | StageName): Promise<CliRun> {
  const child = runNeon(
    ['pipeline', '--stages', stages, '--no-api', '--metrics-port', '0'],
    { ...env, NEON_TOPIC_PREFIX: names.topicPrefix, NEON_INDEX_PREFIX: names.indexPrefix },
    { compiled: true },
  );
  children.add(child);
  try {
    await child.waitFor(/Ctrl-C to stop/, READY_TIMEOUT_MS);
  } catch (error) {
    await stopPipeline(child);
    throw error;
  }
  return child;
}

/** SIGTERM (the pipeline drains and commits), SIGKILL if it is still there after the grace period. */
export async function stopPipeline(child: CliRun): Promise<void> {
  children.delete(child);
  if (!child.running()) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), STOP_GRACE_MS)));
  const exited = await Promise.race([child.exited.then(() => true), graceOver]);
  clearTimeout(timer);
  if (!exited) {
    child.kill('SIGKILL');
    await child.exited;
  }
}

/**
 * One `neon pipeline --stages <processor>` process per processor of the catalog, all under `names`:
 * the shape of a deployment (one Deployment per processor on Kubernetes), so the operating system
 * spreads the processors over the cores as it would spread pods. Resolves once every one has joined
 * its group.
 */
export async function spawnProcessPerStage(env: NodeJS.ProcessEnv, names: Names): Promise<CliRun[]> {
  const started = await Promise.allSettled(STAGE_CATALOG.map((stage) => spawnPipeline(env, names, stage.name)));
  const running = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    for (const child of running) await stopPipeline(child);
    throw failed.reason;
  }
  return running;
}

export async function stopAllPipelines(): Promise<void> {
  for (const child of [...children]) await stopPipeline(child);
}

/** The child's last lines, for a failure message. */
export function lastOutput(child: CliRun, lines = 15): string {
  return child.output().trimEnd().split('\n').slice(-lines).join('\n');
}

// ---------------------------------------------------------------------------------------------
// Kafka progress

/**
 * True when every stage, upstream first, has committed to the end of each of its inputs. Upstream
 * first matters: a stage commits only after its outputs are acknowledged, so once it is at its end,
 * the end offsets read next for the stage below already include everything it wrote.
 */
export async function stagesCaughtUp(admin: Admin, stages: readonly StageBinding[]): Promise<boolean> {
  for (const stage of stages) {
    for (const topic of stage.reads) if (!(await committedToEnd(admin, stage.group, topic))) return false;
  }
  return true;
}

/**
 * Polls until the stages are caught up twice in a row (a stage may be between committing its input
 * and its output reaching the next one) and returns the time of the first of the two polls.
 */
export async function waitCaughtUp(
  admin: Admin,
  stages: readonly StageBinding[],
  options: { deadline: number; intervalMs: number; signal: AbortSignal; what: string },
): Promise<number> {
  let firstAt: number | undefined;
  for (;;) {
    const at = performance.now();
    if (await stagesCaughtUp(admin, stages)) {
      if (firstAt !== undefined) return firstAt;
      firstAt = at;
    } else {
      firstAt = undefined;
    }
    if (performance.now() > options.deadline) throw new Error(`timed out waiting for ${options.what}`);
    await pause(options.intervalMs, options.signal);
  }
}

/** Records per partition now: where a phase ended. */
export async function endOffsets(admin: Admin, topic: string): Promise<bigint[]> {
  const offsets = await withKafkaRetries(() => admin.fetchTopicOffsets(topic));
  return offsets.sort((a, b) => a.partition - b.partition).map((o) => BigInt(o.high));
}

export function total(offsets: readonly bigint[]): number {
  return Number(offsets.reduce((sum, n) => sum + n, 0n));
}

// ---------------------------------------------------------------------------------------------
// Elasticsearch visibility

/** Both datastores' monthly indices. */
export function datastoreIndices(indexPrefix: string): string {
  return `${indexPrefix}-chunks-*,${indexPrefix}-interactions-*`;
}

const LENIENT = { allow_no_indices: true, ignore_unavailable: true } as const;

/** Documents a search sees now: no refresh is forced. */
async function visibleCount(es: Client, indexPrefix: string): Promise<number> {
  return (await es.count({ index: datastoreIndices(indexPrefix), ...LENIENT })).count;
}

export interface DocumentCounts {
  chunks: number;
  interactions: number;
}

/** Every acknowledged document, after a forced refresh. */
export async function refreshedCounts(es: Client, indexPrefix: string): Promise<DocumentCounts> {
  await es.indices.refresh({ index: datastoreIndices(indexPrefix), ...LENIENT });
  const count = async (kind: 'chunks' | 'interactions'): Promise<number> =>
    (await es.count({ index: `${indexPrefix}-${kind}-*`, ...LENIENT })).count;
  return { chunks: await count('chunks'), interactions: await count('interactions') };
}

export interface Visibility {
  /** performance.now() of the first poll that saw every document. */
  searchableAt: number;
  documents: DocumentCounts;
  /** False when the documents were only seen after the forced refresh (then searchableAt is its time). */
  naturally: boolean;
}

/**
 * When the documents under an index prefix became searchable. Polls `_count` without forcing a
 * refresh — what a search sees — and keeps the time of every change; `settle` (called once the
 * writers acknowledged everything) waits past the refresh interval, forces a refresh to learn the
 * final count, and answers the first poll that had already seen it. Poll times are when the answer
 * arrived, so they err late by at most one interval.
 */
export class VisibilityProbe {
  private readonly changes: { at: number; count: number }[] = [];
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly es: Client,
    private readonly indexPrefix: string,
    private readonly intervalMs = 250,
  ) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    let last = -1;
    while (!this.stopped) {
      const count = await visibleCount(this.es, this.indexPrefix).catch(() => undefined);
      if (count !== undefined && count !== last) {
        this.changes.push({ at: performance.now(), count });
        last = count;
      }
      await pause(this.intervalMs);
    }
  }

  async settle(): Promise<Visibility> {
    await pause(SETTLE_MS);
    this.stopped = true;
    await this.loop;
    const documents = await refreshedCounts(this.es, this.indexPrefix);
    const final = documents.chunks + documents.interactions;
    const seen = this.changes.find((change) => change.count >= final);
    return { searchableAt: seen?.at ?? performance.now(), documents, naturally: seen !== undefined };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

/** Documents per article (chunks by provenance, interactions by source articles) that a search sees now. */
async function articleCounts(
  es: Client,
  indexPrefix: string,
  ids: readonly string[],
  refresh: boolean,
): Promise<Map<string, number>> {
  if (refresh) await es.indices.refresh({ index: datastoreIndices(indexPrefix), ...LENIENT });
  const response = await es.search({
    index: datastoreIndices(indexPrefix),
    ...LENIENT,
    size: 0,
    query: { terms: { article_ids: [...ids] } },
    aggs: { articles: { terms: { field: 'article_ids', include: [...ids], size: ids.length } } },
  });
  const aggregate = response.aggregations?.articles as estypes.AggregationsStringTermsAggregate | undefined;
  const buckets = (aggregate?.buckets ?? []) as estypes.AggregationsStringTermsBucket[];
  return new Map(buckets.map((bucket) => [String(bucket.key), bucket.doc_count]));
}

/**
 * Per-article visibility for the freshness phase: the same idea as VisibilityProbe, per article.
 * An article counts as searchable once a search sees as many of its documents as there are in the
 * end (its chunks, the surviving chunks its duplicates were merged into, and its interactions).
 */
export class ArticleVisibilityProbe {
  private readonly watched: string[] = [];
  private readonly history = new Map<string, { at: number; count: number }[]>();
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly es: Client,
    private readonly indexPrefix: string,
    private readonly intervalMs = 250,
  ) {
    this.loop = this.run();
  }

  watch(id: string): void {
    this.watched.push(id);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.watched.length > 0) {
        const counts = await articleCounts(this.es, this.indexPrefix, this.watched, false).catch(() => undefined);
        const at = performance.now();
        for (const [id, count] of counts ?? []) {
          const changes = this.history.get(id) ?? [];
          if (changes.at(-1)?.count !== count) changes.push({ at, count });
          this.history.set(id, changes);
        }
      }
      await pause(this.intervalMs);
    }
  }

  /**
   * When each watched article became findable (a search saw its first document) and complete (a
   * search saw as many as there are in the end, M2 tuples after their batch's linger included);
   * undefined for one that has no document at all.
   */
  async settle(): Promise<Map<string, { first: number; complete: number } | undefined>> {
    await pause(SETTLE_MS);
    this.stopped = true;
    await this.loop;
    const final = await articleCounts(this.es, this.indexPrefix, this.watched, true);
    const settledAt = performance.now();
    return new Map(
      this.watched.map((id) => {
        const wanted = final.get(id) ?? 0;
        if (wanted === 0) return [id, undefined];
        const changes = this.history.get(id) ?? [];
        const complete = changes.find((change) => change.count >= wanted)?.at ?? settledAt;
        const first = changes.find((change) => change.count > 0)?.at ?? complete;
        return [id, { first, complete }];
      }),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

// ---------------------------------------------------------------------------------------------
// Clean-up (reported, never thrown: it runs in `finally`)

async function attempt(problems: string[], what: string, run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (error) {
    problems.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Deletes the consumer groups and topics whose names start with `prefix`; returns what failed. */
export async function deleteTopicsAndGroups(admin: Admin, prefix: string): Promise<string[]> {
  const problems: string[] = [];
  await attempt(problems, 'consumer groups', async () => {
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(prefix));
    if (groups.length > 0) await admin.deleteGroups(groups);
  });
  await attempt(problems, 'topics', async () => {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  });
  return problems;
}

/** Deletes the indices and index templates whose names start with `prefix`; returns what failed. */
export async function deleteIndices(es: Client, prefix: string): Promise<string[]> {
  const problems: string[] = [];
  await attempt(problems, 'indices', async () => {
    const rows = await es.cat.indices({ index: `${prefix}*`, format: 'json', h: 'index' });
    const indices = rows.map((row) => row.index ?? '').filter((index) => index.startsWith(prefix));
    // Wildcard deletes are refused by default (action.destructive_requires_name): names, a few at a time.
    for (let i = 0; i < indices.length; i += 50) await es.indices.delete({ index: indices.slice(i, i + 50) });
  });
  await attempt(problems, 'index templates', async () => {
    await es.indices.deleteIndexTemplate({ name: `${prefix}*` }, { ignore: [404] });
  });
  return problems;
}

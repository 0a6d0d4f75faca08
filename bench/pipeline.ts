/**
 * `npm run bench -- pipeline`: the whole product on real Kafka and Elasticsearch, per embedder —
 *
 * - sustained articles/s from intake to searchable (N articles replayed as fast as intake publishes);
 * - freshness, publish → searchable p50/p95, publishing fresh articles at half that rate;
 * - the ceiling: the same documents, vectors included, bulk-indexed straight into Elasticsearch;
 * - every stage's own throughput, alone in its own process on the records the pipeline produced,
 *   and the pipeline's efficiency against the slowest of them.
 *
 *   npm run bench -- pipeline [--articles N] [--embedders local,openai] [--layouts processes,single]
 *                             [--endpoint-latency-ms 50] [--freshness-seconds 60] [--timeout-seconds S]
 *
 * `openai` is the product's OpenAI embedder talking HTTP to the fake OpenAI-compatible server of
 * test/harness, answering every request after a fixed latency; `local` is all-MiniLM-L6-v2 in
 * process. Extraction is the offline extractor (no LLM). Writes `bench/results/pipeline.json`.
 */
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { Client } from '@elastic/elasticsearch';
import { logLevel } from 'kafkajs';
import { BUNDLED_SAMPLE } from '../streams/stages/intake-sources.js';
import { devDataPath } from '../devkit/dev-data.js';
import { ensureEmbeddingModel } from '../infra/models/download-embedding-model.js';
import { embedderConfigFromEnv } from '../processors/embed/embedder-config.js';
import { DEFAULT_LOCAL_MODEL, LOCAL_MODEL_PINS } from '../processors/embed/model-pins.js';
import { IntakeRejection } from '../processors/intake/article-input.js';
import { loadRealtimeQaDocs } from '../streams/archives/load-realtimeqa.js';
import {
  normalizeArticle,
  SUMMARY_MIN_TEXT_CHARS,
  type NormalizeOptions,
} from '../processors/intake/normalize-article.js';
import { readJsonlArticles } from '../streams/archives/read-jsonl-articles.js';
import type { ReplayItem } from '../processors/intake/replay-articles.js';
import type { Article } from '../schemas/records.generated.js';
import { createElasticsearchClient } from '../streams/elasticsearch/elasticsearch-client.js';
import { createKafkaClient } from '../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../streams/kafka/kafka-transport.js';
import type { StageName } from '../streams/pipeline/stage-catalog.js';
import {
  acquireTestInfrastructure,
  MissingInfrastructureError,
  type TestInfrastructure,
} from '../devkit/acquire-infrastructure.js';
import { buildDist, type CliRun } from '../devkit/cli-process.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../devkit/fake-openai-server.js';
import {
  deleteIndices,
  deleteTopicsAndGroups,
  freshNames,
  INDEX_ROOT,
  spawnPipeline,
  spawnProcessPerStage,
  stopAllPipelines,
  stopPipeline,
  TOPIC_ROOT,
  type Names,
} from './pipeline-cluster.js';
import {
  measureCeiling,
  measureEmbedAlone,
  measureFreshness,
  measureIntakeAlone,
  measureStageAlone,
  measureThroughput,
  type CeilingFigure,
  type Cluster,
  type Corpus,
  type FreshnessFigure,
  type Snapshot,
  type StageFigure,
  type ThroughputFigure,
} from './pipeline-phases.js';
import { cpuBetween, cpuSnapshot, type CpuFigure } from './process-cpu.js';
import { writeBenchResults } from './results.js';

const EMBEDDERS = ['local', 'openai'] as const;
type EmbedderKind = (typeof EMBEDDERS)[number];

/**
 * Articles per run when `--articles` is not given: some five to ten minutes of pipeline and stages
 * on two cores each. A RealTime QA article makes about 21 unique chunks and 60 interaction records,
 * all embedded: the local model (one core) gets fewer articles than an endpoint.
 */
const DEFAULT_ARTICLES: Record<EmbedderKind, number> = { local: 100, openai: 300 };

/** The vector size of all-MiniLM-L6-v2, asked of the fake endpoint too, so Elasticsearch does the same work. */
const ENDPOINT_DIMENSIONS = 384;

const TARGETS = { efficiency: 0.8, endpointArticlesPerS: 22, freshnessP95Ms: 5000 } as const;

/** Consumer stages measured alone, in pipeline order; intake and the embedder are measured in this process. */
const STAGES_ALONE: readonly StageName[] = [
  'markup',
  'chunk',
  'dedupe',
  'spikes',
  'extract',
  'index-chunks',
  'index-interactions',
];

/** Settings a user may have exported for the product; the benchmark sets its own. */
const PRODUCT_SETTINGS =
  /^(OPENAI_|NEON_(LLM|EMBEDD|EXTRACT|SPIKE|WEBHOOK|RETENTION|TOPIC_PREFIX|INDEX_PREFIX|API_KEYS|INTAKE_TOKENS))/;

class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * How the measured pipeline runs: `processes` — one `neon pipeline --stages <processor>` process per
 * processor, the shape of a deployment and of the stages measured alone; `single` — one
 * `neon pipeline` process running every stage on one JavaScript thread.
 */
const LAYOUTS = ['processes', 'single'] as const;
type Layout = (typeof LAYOUTS)[number];

interface Settings {
  articles: number | undefined;
  /** The first gives the headline figures (throughput, ceiling, freshness, the stages' inputs); the others throughput. */
  layouts: Layout[];
  embedders: EmbedderKind[];
  endpointLatencyMs: number;
  freshnessSeconds: number;
  timeoutSeconds: number | undefined;
}

function positive(value: string | undefined, flag: string, integer = true): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n > 0 && Number.isFinite(n)) || (integer && !Number.isInteger(n))) {
    throw new UsageError(`--${flag} must be a positive ${integer ? 'integer' : 'number'} (got "${value}")`);
  }
  return n;
}

function parseSettings(): Settings {
  const { values } = parseArgs({
    options: {
      articles: { type: 'string' },
      embedders: { type: 'string', default: EMBEDDERS.join(',') },
      layouts: { type: 'string', default: LAYOUTS.join(',') },
      'endpoint-latency-ms': { type: 'string', default: '50' },
      'freshness-seconds': { type: 'string', default: '60' },
      'timeout-seconds': { type: 'string' },
    },
    strict: true,
  });
  const embedders = values.embedders.split(',').map((e) => e.trim());
  const unknown = embedders.filter((e) => !(EMBEDDERS as readonly string[]).includes(e));
  if (embedders.length === 0 || unknown.length > 0) {
    throw new UsageError(`--embedders takes ${EMBEDDERS.join(', ')} (got "${values.embedders}")`);
  }
  const layouts = values.layouts.split(',').map((l) => l.trim());
  const unknownLayouts = layouts.filter((l) => !(LAYOUTS as readonly string[]).includes(l));
  if (layouts.length === 0 || unknownLayouts.length > 0) {
    throw new UsageError(`--layouts takes ${LAYOUTS.join(', ')} (got "${values.layouts}")`);
  }
  const latency = Number(values['endpoint-latency-ms']);
  if (!(latency >= 0 && Number.isFinite(latency))) throw new UsageError('--endpoint-latency-ms must be ≥ 0');
  return {
    articles: positive(values.articles, 'articles'),
    embedders: [...new Set(embedders)] as EmbedderKind[],
    layouts: [...new Set(layouts)] as Layout[],
    endpointLatencyMs: latency,
    freshnessSeconds: positive(values['freshness-seconds'], 'freshness-seconds', false)!,
    timeoutSeconds: positive(values['timeout-seconds'], 'timeout-seconds'),
  };
}

/** Ctrl-C or SIGTERM: the current phase stops and the clean-up in `finally` runs. */
const abort = new AbortController();
const onSignal = (): void => abort.abort();

function log(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

const round = (value: number, digits = 2): number => Math.round(value * 10 ** digits) / 10 ** digits;

// ---------------------------------------------------------------------------------------------
// Data

/** The first `wanted` inputs that intake accepts (one per article id), with their Articles. */
async function accepted(
  items: AsyncIterable<ReplayItem>,
  wanted: number,
  source: string,
  normalize: Partial<NormalizeOptions>,
): Promise<Corpus> {
  const now = Date.now();
  const seen = new Set<string>();
  const corpus: Corpus = { source, items: [], articles: [], normalize };
  for await (const item of items) {
    if (corpus.items.length >= wanted) break;
    if (item.input === undefined) continue;
    let article: Article;
    try {
      article = normalizeArticle(item.input, now, normalize);
    } catch (error) {
      if (error instanceof IntakeRejection) continue;
      throw error;
    }
    if (seen.has(article.id)) continue;
    seen.add(article.id);
    corpus.items.push(item);
    corpus.articles.push(article);
  }
  return corpus;
}

/**
 * The RealTime QA documents of the development data, read at run time (never copied), or the
 * bundled sample when they are absent — with the sample's own intake floor, as `neon start` replays it.
 */
async function loadCorpus(wanted: number): Promise<Corpus> {
  const dir = devDataPath('realtimeqa');
  const load = dir === undefined ? undefined : loadRealtimeQaDocs(dir);
  if (load?.ok) return accepted(load.items, wanted, `RealTime QA documents (${dir}/docs, unique URLs)`, {});
  log(
    `RealTime QA documents not found (${load?.ok === false ? load.error : 'no development data'}): using the bundled sample`,
  );
  return accepted(readJsonlArticles(BUNDLED_SAMPLE.file), wanted, BUNDLED_SAMPLE.name, {
    minTextChars: SUMMARY_MIN_TEXT_CHARS,
  });
}

// ---------------------------------------------------------------------------------------------
// One embedder

interface Context {
  cluster: Cluster;
  corpus: Corpus;
  settings: Settings;
  /** Environment of the `neon pipeline` processes, without an embedder. */
  env: NodeJS.ProcessEnv;
  server: FakeOpenAiServer | undefined;
}

interface TargetCheck {
  target: string;
  met: boolean;
}

interface RunResult {
  embedder: EmbedderKind;
  embedder_detail: string;
  /** How the pipeline of the headline figures ran (see LAYOUTS). */
  layout: string;
  articles: number;
  articles_per_s: number;
  slowest_stage: string;
  slowest_stage_articles_per_s: number;
  efficiency: number;
  /**
   * Articles/s if the stages took turns on the machine: 1 ÷ Σ(1 ÷ each stage's articles/s), over
   * every stage the pipeline runs (spike detection included; `embed` is inside the index stages).
   * Each stage alone had every core (with Kafka and Elasticsearch) to itself; in the pipeline they
   * share them, so on a machine with fewer cores than busy stages this, not the slowest stage, is
   * what the plumbing is measured against.
   */
  time_shared_articles_per_s: number;
  efficiency_time_shared: number;
  es_ceiling_articles_per_s: number;
  freshness_p50_ms: number | null;
  freshness_p95_ms: number | null;
  pipeline: ThroughputFigure;
  /** CPU per article by process over the throughput phase (null off Linux): where the cores went. */
  pipeline_cpu: CpuFigure | null;
  /** Throughput of the same articles in the other layouts, each on topics of its own. */
  other_layouts: LayoutFigure[];
  ceiling: CeilingFigure;
  freshness: FreshnessFigure | null;
  stages: StageFigure[];
  targets: Record<string, TargetCheck>;
}

function embedderEnv(kind: EmbedderKind, server: FakeOpenAiServer | undefined): Record<string, string> {
  if (kind === 'local') return { NEON_EMBEDDER: 'local' };
  if (!server) throw new Error('unreachable: the fake endpoint runs whenever openai is measured');
  return {
    NEON_EMBEDDER: 'openai',
    NEON_EMBEDDINGS_URL: server.url,
    NEON_EMBEDDINGS_MODEL: `bench-endpoint-${ENDPOINT_DIMENSIONS}`,
    NEON_EMBEDDINGS_DIMENSIONS: String(ENDPOINT_DIMENSIONS),
  };
}

function embedderDetail(kind: EmbedderKind, settings: Settings): string {
  return kind === 'local'
    ? `${LOCAL_MODEL_PINS[DEFAULT_LOCAL_MODEL].name} in process (onnxruntime-node, one inference worker)`
    : `fake OpenAI-compatible endpoint answering after ${settings.endpointLatencyMs} ms, ` +
        `${ENDPOINT_DIMENSIONS} dimensions, through the product's OpenAI embedder`;
}

function articlesFor(kind: EmbedderKind, settings: Settings): number {
  return settings.articles ?? DEFAULT_ARTICLES[kind];
}

function timeoutMsFor(articles: number, settings: Settings): number {
  // Generous: a timeout is a failure, so it only guards against a pipeline that is stuck.
  return (settings.timeoutSeconds ?? 300 + 5 * articles) * 1000;
}

type LayoutFigure = { layout: Layout; description: string } & ThroughputFigure;

interface PipelinePhases {
  layout: Layout;
  otherLayouts: LayoutFigure[];
  throughput: ThroughputFigure;
  throughputCpu: CpuFigure | null;
  snapshot: Snapshot;
  ceiling: CeilingFigure;
  freshness: FreshnessFigure | null;
}

const LAYOUT_WORDS: Record<Layout, string> = {
  processes: 'one neon pipeline process per processor',
  single: 'one neon pipeline process running every stage',
};

/** Starts the pipeline in `layout` under `names`; resolves once every stage has joined its group. */
async function startLayout(layout: Layout, env: NodeJS.ProcessEnv, names: Names): Promise<CliRun[]> {
  return layout === 'processes' ? spawnProcessPerStage(env, names) : [await spawnPipeline(env, names, 'all')];
}

async function stopLayout(children: readonly CliRun[]): Promise<void> {
  await Promise.all(children.map((child) => stopPipeline(child)));
}

/**
 * The headline layout: throughput, then the ceiling (while the pipeline idles), then freshness; then
 * each further layout's throughput on names of its own.
 */
async function pipelinePhases(
  ctx: Context,
  kind: EmbedderKind,
  names: Names,
  env: NodeJS.ProcessEnv,
): Promise<PipelinePhases> {
  const { cluster, corpus, settings } = ctx;
  const count = articlesFor(kind, settings);
  const [headline, ...others] = settings.layouts as [Layout, ...Layout[]];
  log(
    `[${kind}] starting ${LAYOUT_WORDS[headline]} on topics ${names.topicPrefix}* and indices ${names.indexPrefix}-*`,
  );
  const children = await startLayout(headline, env, names);
  let phases: PipelinePhases;
  try {
    log(`[${kind}] throughput: replaying ${count} articles`);
    const cpuBefore = cpuSnapshot();
    const { figure: throughput, snapshot } = await measureThroughput(
      cluster,
      names,
      corpus,
      count,
      timeoutMsFor(count, settings),
    );
    const throughputCpu = cpuBetween(cpuBefore, cpuSnapshot(), throughput.articles, throughput.seconds);
    log(`[${kind}] throughput: ${throughput.articles_per_s} articles/s (${throughput.seconds} s)`);
    ctx.server?.reset();
    const ceilingNames = freshNames(`${kind}-ceiling`);
    const ceiling = await measureCeiling(cluster, names, ceilingNames, throughput.articles);
    for (const problem of await deleteIndices(cluster.es, ceilingNames.indexPrefix)) log(`clean-up: ${problem}`);
    log(
      `[${kind}] ceiling: ${ceiling.articles_per_s} articles/s (${ceiling.documents} documents in ${ceiling.seconds} s)`,
    );
    const freshness = await freshnessPhase(ctx, kind, names, throughput);
    ctx.server?.reset();
    phases = { layout: headline, throughput, throughputCpu, snapshot, ceiling, freshness, otherLayouts: [] };
  } finally {
    await stopLayout(children);
  }
  for (const layout of others) phases.otherLayouts.push(await layoutThroughput(ctx, kind, layout, env));
  return phases;
}

/** Throughput alone in another layout, on topics and datastores of its own, deleted afterwards. */
async function layoutThroughput(
  ctx: Context,
  kind: EmbedderKind,
  layout: Layout,
  env: NodeJS.ProcessEnv,
): Promise<LayoutFigure> {
  const count = articlesFor(kind, ctx.settings);
  const names = freshNames(`${kind}-${layout}`);
  // Its topics are deleted at the end: a producer of its own (see runEmbedder).
  const cluster: Cluster = { ...ctx.cluster, producer: ctx.cluster.transport.producer() };
  log(`[${kind}] starting ${LAYOUT_WORDS[layout]} on topics ${names.topicPrefix}*`);
  const children = await startLayout(layout, env, names);
  try {
    const { figure } = await measureThroughput(cluster, names, ctx.corpus, count, timeoutMsFor(count, ctx.settings));
    log(`[${kind}] throughput (${layout}): ${figure.articles_per_s} articles/s (${figure.seconds} s)`);
    ctx.server?.reset();
    return { layout, description: LAYOUT_WORDS[layout], ...figure };
  } finally {
    await stopLayout(children);
    const problems = [
      ...(await deleteTopicsAndGroups(ctx.cluster.admin, names.topicPrefix)),
      ...(await deleteIndices(ctx.cluster.es, names.indexPrefix)),
    ];
    for (const problem of problems) log(`clean-up: ${problem}`);
    await cluster.producer.disconnect();
  }
}

async function freshnessPhase(
  ctx: Context,
  kind: EmbedderKind,
  names: Names,
  throughput: ThroughputFigure,
): Promise<FreshnessFigure | null> {
  const { corpus, settings } = ctx;
  const count = articlesFor(kind, settings);
  const rate = throughput.articles_per_s / 2;
  const spare = corpus.articles.slice(count);
  const wanted = Math.max(10, Math.round(rate * settings.freshnessSeconds));
  if (spare.length < 10) {
    log(`[${kind}] freshness skipped: only ${spare.length} articles left after the first ${count}`);
    return null;
  }
  const articles = spare.slice(0, wanted);
  log(`[${kind}] freshness: ${articles.length} more articles at ${round(rate)} articles/s`);
  const freshness = await measureFreshness(ctx.cluster, names, articles, rate, timeoutMsFor(articles.length, settings));
  log(`[${kind}] freshness: p50 ${freshness.p50_ms} ms, p95 ${freshness.p95_ms} ms`);
  return freshness;
}

/** Every stage alone on the records phase one left on the pipeline's topics, and the embedder alone. */
async function stagesAlone(
  ctx: Context,
  kind: EmbedderKind,
  source: Names,
  snapshot: Snapshot,
  env: NodeJS.ProcessEnv,
  articles: number,
): Promise<StageFigure[]> {
  const { cluster, corpus, settings } = ctx;
  const options = { source, snapshot, env, articles, timeoutMs: timeoutMsFor(articles, settings) };
  const sharedEmbedder = settings.layouts[0] === 'single';
  const figures: StageFigure[] = [];
  const note = (figure: StageFigure): void => {
    figures.push(figure);
    ctx.server?.reset();
    log(
      `[${kind}] ${figure.stage} alone: ${figure.articles_per_s} articles/s (${figure.input_records} records in ${figure.seconds} s)`,
    );
  };
  note(await measureIntakeAlone(cluster, freshNames(`${kind}-intake`), corpus, articles));
  for (const stage of STAGES_ALONE) {
    if (stage === 'index-chunks') note(await measureEmbedAlone(cluster, { ...options, sharedEmbedder }));
    note(await measureStageAlone(cluster, stage, freshNames(`${kind}-${stage}`), options));
  }
  return figures;
}

function targetChecks(kind: EmbedderKind, run: Omit<RunResult, 'targets'>): Record<string, TargetCheck> {
  const checks: Record<string, TargetCheck> = {
    efficiency: { target: `≥ ${TARGETS.efficiency} of the slowest stage`, met: run.efficiency >= TARGETS.efficiency },
  };
  // The articles/s target is for embeddings served by an endpoint; the local figure is reported beside it.
  if (kind === 'openai') {
    checks.articles_per_s = {
      target: `≥ ${TARGETS.endpointArticlesPerS} articles/s`,
      met: run.articles_per_s >= TARGETS.endpointArticlesPerS,
    };
  }
  if (run.freshness_p95_ms !== null) {
    checks.freshness_p95_ms = {
      target: `≤ ${TARGETS.freshnessP95Ms} ms at half the sustained rate`,
      met: run.freshness_p95_ms <= TARGETS.freshnessP95Ms,
    };
  }
  return checks;
}

function summarize(kind: EmbedderKind, settings: Settings, phases: PipelinePhases, stages: StageFigure[]): RunResult {
  const candidates = stages.filter((s) => s.on_searchable_path);
  const slowest = candidates.reduce((a, b) => (b.articles_per_s < a.articles_per_s ? b : a));
  const sharing = stages.filter((s) => s.stage !== 'embed' && s.articles_per_s > 0);
  const timeShared = 1 / sharing.reduce((sum, s) => sum + 1 / s.articles_per_s, 0);
  const run: Omit<RunResult, 'targets'> = {
    embedder: kind,
    embedder_detail: embedderDetail(kind, settings),
    layout: LAYOUT_WORDS[phases.layout],
    articles: phases.throughput.articles,
    articles_per_s: phases.throughput.articles_per_s,
    slowest_stage: slowest.stage,
    slowest_stage_articles_per_s: slowest.articles_per_s,
    efficiency: round(phases.throughput.articles_per_s / slowest.articles_per_s, 3),
    time_shared_articles_per_s: round(timeShared, 2),
    efficiency_time_shared: round(phases.throughput.articles_per_s / timeShared, 3),
    es_ceiling_articles_per_s: phases.ceiling.articles_per_s,
    freshness_p50_ms: phases.freshness?.p50_ms ?? null,
    freshness_p95_ms: phases.freshness?.p95_ms ?? null,
    pipeline: phases.throughput,
    pipeline_cpu: phases.throughputCpu,
    other_layouts: phases.otherLayouts,
    ceiling: phases.ceiling,
    freshness: phases.freshness,
    stages,
  };
  return { ...run, targets: targetChecks(kind, run) };
}

/** What every embedder's run shares: no producer (see runEmbedder). */
type SharedContext = Omit<Context, 'cluster'> & { cluster: Omit<Cluster, 'producer'> };

async function runEmbedder(shared: SharedContext, kind: EmbedderKind): Promise<RunResult> {
  // A producer of its own: kafkajs keeps refreshing metadata for every topic a producer has written
  // to, so one that outlived the previous run's (deleted) topics fails on its first new topic.
  const producer = shared.cluster.transport.producer();
  const ctx: Context = { ...shared, cluster: { ...shared.cluster, producer } };
  const env = { ...ctx.env, ...embedderEnv(kind, ctx.server) };
  const names = freshNames(kind);
  try {
    const phases = await pipelinePhases(ctx, kind, names, env);
    // The pipeline's datastores are no longer needed; its topics feed the stages alone.
    await deleteIndices(ctx.cluster.es, names.indexPrefix);
    const stages = await stagesAlone(ctx, kind, names, phases.snapshot, env, phases.throughput.articles);
    return summarize(kind, ctx.settings, phases, stages);
  } finally {
    const problems = [
      ...(await deleteTopicsAndGroups(ctx.cluster.admin, `${TOPIC_ROOT}${kind}`)),
      ...(await deleteIndices(ctx.cluster.es, `${INDEX_ROOT}${kind}`)),
    ];
    for (const problem of problems) log(`clean-up: ${problem}`);
    await producer.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function table(rows: string[][], leftColumns = 1): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) =>
    r
      .map((cell, c) => (c < leftColumns ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join('  ')
      .trimEnd(),
  );
}

const mark = (check: TargetCheck | undefined): string => (check === undefined ? '' : check.met ? ' ✓' : ' ✗');
const grouped = (n: number): string => n.toLocaleString('en-US');

function runReport(run: RunResult): string[] {
  const p = run.pipeline;
  const f = run.freshness;
  const lines = [
    `${run.embedder}: ${run.embedder_detail}; the pipeline as ${run.layout}`,
    `  ${grouped(run.articles)} articles → ${grouped(p.chunks)} chunks and ${grouped(p.interactions)} interactions searchable` +
      ` (${p.rejected} refused by intake, ${p.dead_letters} dead letters)`,
    `  embedded and indexed: ${grouped(p.unique_chunk_records)} unique-chunk records and ` +
      `${grouped(p.interaction_records)} interaction records`,
    `  pipeline, intake → searchable    ${run.articles_per_s} articles/s  (${p.seconds} s; published after ` +
      `${p.published_seconds} s, all acknowledged after ${p.acknowledged_seconds} s)`,
    ...run.other_layouts.map(
      (o) => `  pipeline, ${o.layout.padEnd(23)} ${o.articles_per_s} articles/s  (${o.seconds} s: ${o.description})`,
    ),
    ...(run.pipeline_cpu === null
      ? []
      : [
          `  CPU per article in the pipeline  ${grouped(run.pipeline_cpu.total_ms_per_article)} ms ` +
            `(${run.pipeline_cpu.cores_busy} cores busy): ` +
            Object.entries(run.pipeline_cpu.ms_per_article)
              .map(([label, ms]) => `${label} ${grouped(ms)}`)
              .join(', '),
        ]),
    `  Elasticsearch ceiling            ${run.es_ceiling_articles_per_s} articles/s  (${grouped(run.ceiling.documents)} ` +
      `documents in ${run.ceiling.seconds} s, ${grouped(run.ceiling.documents_per_s)} documents/s)`,
    f === null
      ? '  freshness                        not measured (no articles left)'
      : `  freshness at ${f.rate_articles_per_s} articles/s     p50 ${grouped(f.p50_ms)} ms, p95 ${grouped(f.p95_ms)} ms, ` +
        `max ${grouped(f.max_ms)} ms (${f.measured} of ${f.articles} articles); first findable: ` +
        `p50 ${grouped(f.first_p50_ms)} ms, p95 ${grouped(f.first_p95_ms)} ms`,
    ...(f === null
      ? []
      : [
          `  freshness by hop (publish → the article's last record there, p50 / p95 ms): ` +
            Object.entries(f.hops)
              .map(([hop, h]) => `${hop} ${grouped(h.p50_ms)} / ${grouped(h.p95_ms)}`)
              .join(', '),
          `  slowest to searchable (ms after publishing: marked, chunked, deduplicated, extracted → searchable):`,
          ...f.slowest.map(
            (a) =>
              `    ${grouped(a.text_chars).padStart(7)} chars, published at ${a.published_s} s: ` +
              `${[a.hops_ms.marked, a.hops_ms.chunked, a.hops_ms.deduplicated, a.hops_ms.extracted]
                .map((ms) => (ms === undefined ? '–' : grouped(ms)))
                .join(', ')} → ${grouped(a.searchable_ms)}`,
          ),
        ]),
    '',
    ...table([
      ['  stage alone', 'input records', 'seconds', 'records/s', 'articles/s'],
      ...run.stages.map((s) => [
        `  ${s.stage}${s.on_searchable_path ? '' : s.stage === 'embed' ? ' (inside each index stage here)' : ' (off the path to searchable)'}`,
        grouped(s.input_records),
        s.seconds.toFixed(2),
        grouped(s.records_per_s),
        s.articles_per_s.toFixed(2),
      ]),
    ]),
    '',
  ];
  return lines;
}

function summaryTable(runs: readonly RunResult[]): string[] {
  const column = (pick: (run: RunResult) => string): string[] => runs.map(pick);
  const ms = (value: number | null): string => (value === null ? '–' : grouped(value));
  return table([
    ['', ...runs.map((r) => r.embedder), 'target'],
    [
      'articles/s',
      ...column((r) => `${r.articles_per_s}${mark(r.targets.articles_per_s)}`),
      `≥ ${TARGETS.endpointArticlesPerS} with an endpoint`,
    ],
    ['slowest stage', ...column((r) => r.slowest_stage), ''],
    ['slowest stage articles/s', ...column((r) => String(r.slowest_stage_articles_per_s)), ''],
    ['efficiency', ...column((r) => `${r.efficiency}${mark(r.targets.efficiency)}`), `≥ ${TARGETS.efficiency}`],
    ['stages in turn articles/s', ...column((r) => String(r.time_shared_articles_per_s)), ''],
    ['efficiency vs stages in turn', ...column((r) => String(r.efficiency_time_shared)), ''],
    ['ES ceiling articles/s', ...column((r) => String(r.es_ceiling_articles_per_s)), ''],
    ['freshness p50 ms', ...column((r) => ms(r.freshness_p50_ms)), ''],
    [
      'freshness p95 ms',
      ...column((r) => `${ms(r.freshness_p95_ms)}${mark(r.targets.freshness_p95_ms)}`),
      `≤ ${TARGETS.freshnessP95Ms} at half rate`,
    ],
    ['first findable p95 ms', ...column((r) => ms(r.freshness?.first_p95_ms ?? null)), ''],
  ]);
}

// ---------------------------------------------------------------------------------------------
// Main

async function connect(infra: TestInfrastructure, signal: AbortSignal): Promise<Omit<Cluster, 'producer'>> {
  const kafka = createKafkaClient({
    clientId: 'bench-pipeline',
    brokers: infra.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const transport = createKafkaTransport(kafka);
  const base: Client = createElasticsearchClient({ url: infra.elasticsearchUrl });
  const es =
    Object.keys(infra.elasticsearchHeaders).length === 0 ? base : base.child({ headers: infra.elasticsearchHeaders });
  return { admin, transport, es, signal, log };
}

function childEnvironment(infra: TestInfrastructure): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !PRODUCT_SETTINGS.test(name)));
  return { ...env, KAFKA_BROKERS: infra.kafkaBrokers.join(','), ES_URL: infra.elasticsearchUrl };
}

/** The local model, fetched once here rather than by the first `neon pipeline` process. */
async function prepareLocalModel(env: NodeJS.ProcessEnv): Promise<void> {
  const config = embedderConfigFromEnv({ ...env, NEON_EMBEDDER: 'local' });
  if (config.kind !== 'local') throw new Error('unreachable: local embedder expected');
  await ensureEmbeddingModel(config.cacheDir, LOCAL_MODEL_PINS[config.model], log);
}

async function main(): Promise<number> {
  let settings: Settings;
  try {
    settings = parseSettings();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const loadAtStart = loadavg().map((l) => round(l));
  const most = Math.max(...settings.embedders.map((kind) => articlesFor(kind, settings)));
  // Enough for the biggest run plus a freshness phase at half its rate (fewer is handled).
  const corpus = await loadCorpus(most + 3000);
  if (corpus.items.length < most) {
    process.stderr.write(
      `only ${corpus.items.length} usable articles in ${corpus.source}; ask for fewer with --articles\n`,
    );
    return 2;
  }
  // The measured processes run the compiled code, as the container image does: tsx's on-the-fly
  // transform (a name set on every closure as it is created) made the product's own code some 30% slower.
  log('compiling dist/ (tsc): the pipeline processes run compiled JavaScript, as the image does');
  await buildDist();
  const infra = await acquireTestInfrastructure(process.env, log);
  log(`infrastructure: ${infra.description}`);
  const cluster = await connect(infra, abort.signal);
  const env = childEnvironment(infra);
  let server: FakeOpenAiServer | undefined;
  const runs: RunResult[] = [];
  try {
    if (settings.embedders.includes('local')) await prepareLocalModel(env);
    if (settings.embedders.includes('openai')) {
      server = await startFakeOpenAiServer({
        latencyMs: settings.endpointLatencyMs,
        embeddingDimensions: ENDPOINT_DIMENSIONS,
      });
    }
    const ctx: SharedContext = { cluster, corpus, settings, env, server };
    for (const kind of settings.embedders) runs.push(await runEmbedder(ctx, kind));
  } finally {
    await stopAllPipelines();
    const problems = [
      ...(await deleteTopicsAndGroups(cluster.admin, TOPIC_ROOT)),
      ...(await deleteIndices(cluster.es, INDEX_ROOT)),
    ];
    for (const problem of problems) log(`clean-up: ${problem}`);
    await server?.close();
    await cluster.admin.disconnect();
    await cluster.es.close();
    await infra.release();
  }

  const document = {
    data: { source: corpus.source, articles_per_run: Object.fromEntries(runs.map((r) => [r.embedder, r.articles])) },
    settings: {
      embedders: settings.embedders,
      layouts: settings.layouts,
      endpoint_latency_ms: settings.endpointLatencyMs,
      freshness_seconds: settings.freshnessSeconds,
      extractor: 'offline (no LLM)',
      topic_partitions: 6,
      infrastructure: infra.description,
    },
    load_average: { start: loadAtStart, end: loadavg().map((l) => round(l)) },
    runs,
  };
  const path = writeBenchResults('pipeline', document);
  process.stdout.write(
    [
      `pipeline benchmark on Kafka ${infra.kafkaBrokers.join(',')} and Elasticsearch ${infra.elasticsearchUrl}`,
      `data: ${corpus.source}; load average at start ${loadAtStart.join(' ')}, at end ${document.load_average.end.join(' ')}`,
      '',
      ...runs.flatMap(runReport),
      ...summaryTable(runs),
      '',
      `figures written to ${path}`,
      '',
    ].join('\n'),
  );
  return 0;
}

const started = performance.now();
main().then(
  (code) => {
    log(`done in ${Math.round((performance.now() - started) / 1000)} s`);
    process.exit(code);
  },
  (error: unknown) => {
    if (abort.signal.aborted) {
      process.stderr.write('bench stopped; what it created was deleted\n');
      process.exit(130);
    }
    // Missing infrastructure is a message, not a stack trace: it says what was tried.
    const known = error instanceof MissingInfrastructureError;
    const text = error instanceof Error ? (known ? error.message : (error.stack ?? error.message)) : String(error);
    process.stderr.write(`bench failed: ${text}\n`);
    process.exit(1);
  },
);

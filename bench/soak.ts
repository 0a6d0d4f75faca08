/**
 * `npm run bench -- soak`: the whole product under sustained ingest for minutes, watching what a
 * short benchmark cannot see — memory that keeps growing, a backlog that keeps growing, throughput
 * that decays.
 *
 *   npm run bench -- soak [--minutes 10] [--warmup-minutes 1] [--rate N] [--sample-seconds 10] [--cluster]
 *
 * Every stage runs in this process, as `neon start` runs them: on the embedded transport and
 * datastore by default, on Kafka + Elasticsearch (KAFKA_BROKERS / ES_URL, fresh topic and index
 * prefixes, deleted at the end) with `--cluster`. The embedder is the product's default (the local
 * model) and extraction the offline extractor. Articles are synthetic news (devkit/synthetic-news.ts:
 * word and name frequencies of the bundled Current Events sample; only the names capitalised),
 * endless and never repeated, so the dedupe stage keeps them, with publication times 5 minutes apart,
 * so the spike detector's days go by.
 *
 * The warm-up (default 1 minute, or a third of a shorter run) feeds as fast as the pipeline takes
 * (intake waits while markup has 10 articles to take or the stages hold 1,500 records) and measures
 * that rate over its second half; the
 * rest of the run then offers 75% of it, steadily (or `--rate` articles/s throughout). Every sample
 * forces a full garbage collection first, so heap figures are what is still referenced, not garbage
 * waiting. Reported: heap used and RSS over time (least-squares slope in MiB/min and the growth from
 * the end of the warm-up to the end), the backlog's slope, and articles/s minute by minute. The
 * target is a heap growth of at most 64 MiB over the run: PASS/FAIL is printed beside the figures,
 * and the process exits 0 either way (a benchmark reports; it does not judge the build).
 *
 * Embedded, the datastore and the topics are the process's own memory: every chunk and interaction
 * indexed stays on the heap (text, lexical index; the vector beside it) and every record of every
 * topic in the transport for as long as the process runs, so much of the growth there is the data
 * itself; the documents held are reported beside the growth, and `--cluster` shows the same
 * pipeline with its data held elsewhere. Worker threads (the
 * markup workers, the embedding model's inference) have heaps of their own, which RSS includes and
 * the main thread's heap does not; typed arrays (the vectors the embedded datastore holds among them)
 * live outside the heap too, and are reported as `external`. Writes `bench/results/soak.json`.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Transport } from '../streams/runtime/transport.js';
import type { SyntheticStatement } from '../devkit/synthetic-news.js';

const HEAP_GROWTH_TARGET_MIB = 64;
/** The measured phase offers this share of the rate the warm-up reached. */
const OFFERED_SHARE = 0.75;
/** While calibrating, intake also waits when markup has this many articles still to take. */
const CALIBRATION_ARTICLES_AHEAD = 10;
/**
 * While calibrating, intake waits when the stages hold more records than this: records, not
 * articles, summed over every stage's inputs (an article makes some 30 to 40 records on the way:
 * chunks, unique chunks, mentions, interactions), so some 50 articles in flight.
 */
const CALIBRATION_BACKLOG = 1_500;
/** Whatever the rate, intake pauses past this backlog, so a pipeline that fell behind is not buried. */
const HARD_BACKLOG = 20_000;
const INGEST_TICK_MS = 100;
const PROGRESS_POLL_MS = 1_000;
/** Event time between consecutive articles: some 290 articles a day, a busy feed. */
const EVENT_STEP_MS = 5 * 60_000;
const EVENT_START = Date.UTC(2025, 0, 1);
const MIB = 2 ** 20;

/** Settings a user may have exported for the product; the benchmark runs the defaults. */
const PRODUCT_SETTINGS =
  /^(OPENAI_|NEON_(LLM|EMBEDD|EXTRACT|SPIKE|WEBHOOK|RETENTION|TOPIC_PREFIX|INDEX_PREFIX|API_KEYS|INTAKE_TOKENS|MARKUP))/;

interface Settings {
  minutes: number;
  warmupMinutes: number;
  rate: number | undefined;
  sampleSeconds: number;
  cluster: boolean;
}

class UsageError extends Error {
  override readonly name = 'UsageError';
}

function positive(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n > 0 && Number.isFinite(n))) throw new UsageError(`--${flag} must be a positive number (got "${value}")`);
  return n;
}

function parseSettings(): Settings {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: process.env.NEON_SOAK_MINUTES ?? '10' },
      'warmup-minutes': { type: 'string' },
      rate: { type: 'string' },
      'sample-seconds': { type: 'string', default: '10' },
      cluster: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const minutes = positive(values.minutes, 'minutes')!;
  const warmupMinutes = positive(values['warmup-minutes'], 'warmup-minutes') ?? round(Math.min(1, minutes / 3), 2);
  if (warmupMinutes >= minutes) throw new UsageError('--warmup-minutes must be shorter than --minutes');
  return {
    minutes,
    warmupMinutes,
    rate: positive(values.rate, 'rate'),
    sampleSeconds: positive(values['sample-seconds'], 'sample-seconds')!,
    cluster: values.cluster,
  };
}

function log(line: string): void {
  process.stderr.write(`[soak] ${line}\n`);
}

const round = (value: number, digits = 2): number => Math.round(value * 10 ** digits) / 10 ** digits;
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Least-squares slope of y over x (0 with fewer than two points). */
function leastSquaresSlope(points: readonly { x: number; y: number }[]): number {
  if (points.length < 2) return 0;
  const meanX = points.reduce((s, p) => s + p.x, 0) / points.length;
  const meanY = points.reduce((s, p) => s + p.y, 0) / points.length;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - meanX) * (p.y - meanY);
    den += (p.x - meanX) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** A full collection on demand: `--expose-gc` set at run time, `gc` taken from a fresh context. */
function garbageCollector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

interface Sample {
  /** Minutes since the pipeline started. */
  t_min: number;
  phase: 'warmup' | 'measured';
  heap_used_mib: number;
  rss_mib: number;
  external_mib: number;
  /** Records on every stage's inputs not yet done, summed over the stages. */
  lag: number;
  published: number;
  marked: number;
  chunks_indexed: number;
  interactions_indexed: number;
  documents_held: number | null;
  /** Entities the directory knows, and spike episodes the book holds: state that grows with new names. */
  entities: number;
  spike_episodes: number;
}

interface MinuteFigure {
  minute: number;
  published_per_s: number;
  marked_per_s: number;
  chunk_records_indexed_per_s: number;
  interaction_records_indexed_per_s: number;
  lag_at_end: number;
}

function perMinute(samples: readonly Sample[]): MinuteFigure[] {
  const figures: MinuteFigure[] = [];
  const last = samples.at(-1);
  if (last === undefined) return figures;
  // The sample nearest each whole minute (the first sample stands for minute 0).
  const at = (minute: number): Sample =>
    samples.reduce((best, s) => (Math.abs(s.t_min - minute) < Math.abs(best.t_min - minute) ? s : best));
  for (let minute = 1; minute <= Math.floor(last.t_min + 1e-9); minute++) {
    const a = at(minute - 1);
    const b = at(minute);
    const seconds = (b.t_min - a.t_min) * 60;
    if (seconds <= 0) continue;
    const rate = (pick: (s: Sample) => number): number => round((pick(b) - pick(a)) / seconds);
    figures.push({
      minute,
      published_per_s: rate((s) => s.published),
      marked_per_s: rate((s) => s.marked),
      chunk_records_indexed_per_s: rate((s) => s.chunks_indexed),
      interaction_records_indexed_per_s: rate((s) => s.interactions_indexed),
      lag_at_end: b.lag,
    });
  }
  return figures;
}

interface Trend {
  slope_mib_per_min: number;
  growth_mib: number;
  start_mib: number;
  end_mib: number;
}

function trend(samples: readonly Sample[], pick: (s: Sample) => number): Trend {
  const first = samples[0]!;
  const last = samples.at(-1)!;
  return {
    slope_mib_per_min: round(leastSquaresSlope(samples.map((s) => ({ x: s.t_min, y: pick(s) }))), 3),
    growth_mib: round(pick(last) - pick(first)),
    start_mib: round(pick(first)),
    end_mib: round(pick(last)),
  };
}

async function main(): Promise<number> {
  let settings: Settings;
  try {
    settings = parseSettings();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const topicPrefix = `bench.soak.${runId}.`;
  const indexPrefix = `bench-soak-${runId}`;
  for (const name of Object.keys(process.env))
    if (PRODUCT_SETTINGS.test(name)) Reflect.deleteProperty(process.env, name);
  // Read when streams/pipeline/topics.ts is first imported: set before any product module is loaded.
  process.env.NEON_TOPIC_PREFIX = topicPrefix;
  process.env.NEON_INDEX_PREFIX = indexPrefix;

  const [
    { loadProductConfig },
    { startProductRuntime },
    { TransportArticlePublisher },
    { normalizeArticle },
    news,
    results,
  ] = await Promise.all([
    import('../bin/commands/product-config.js'),
    import('../bin/commands/product-runtime.js'),
    import('../streams/stages/intake-publisher.js'),
    import('../processors/intake/normalize-article.js'),
    import('../devkit/synthetic-news.js'),
    import('./results.js'),
  ]);
  type Runtime = Awaited<ReturnType<typeof startProductRuntime>>;

  const gc = garbageCollector();
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  const stopped = (): boolean => abort.signal.aborted;
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  // Deterministic articles: a seeded generator over the sample's word and name frequencies.
  let seed = 0x5eed;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const synthetic = new news.SyntheticNews(news.newsVocabulary(news.currentEventsArticles()), random);
  /**
   * A statement whose words other than its subject's and object's names are lower-cased: the words
   * are drawn one by one, and capitalised ones side by side would read as names never seen before, so
   * the entities known would grow with every article. With them lower-cased the names are the
   * sample's few thousand, as a feed's vocabulary settles, and state that keeps growing is a leak.
   */
  const namesOnly = (statement: SyntheticStatement): string => {
    const names = [statement.subject.name, ...(statement.object ? [statement.object.name] : [])];
    const pattern = new RegExp(`(${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`);
    return statement.text
      .split(pattern)
      .map((part) => (names.includes(part) ? part : part.toLowerCase()))
      .join('');
  };
  let articleNumber = 0;
  const nextArticle = () => {
    articleNumber += 1;
    const statements = Array.from({ length: 8 + Math.floor(random() * 10) }, () => namesOnly(synthetic.statement()));
    return normalizeArticle(
      {
        url: `https://soak.example/${runId}/${articleNumber}`,
        title: statements[0]!.slice(0, 120),
        text: statements.join(' '),
        published_at: EVENT_START + articleNumber * EVENT_STEP_MS,
      },
      Date.now(),
    );
  };

  const mode = settings.cluster ? 'cluster' : 'embedded';
  let cleanUp = async (): Promise<string[]> => [];
  let runtime: Runtime | undefined;
  let producer: ReturnType<Transport['producer']> | undefined;
  let infrastructure = 'in-process (embedded transport and datastore)';
  try {
    const config = loadProductConfig(process.env);
    if (settings.cluster) {
      const [{ clusterTransport }, { clusterElasticsearch }, { ElasticsearchDatastore }, cluster, kafka] =
        await Promise.all([
          import('../bin/commands/cluster-transport.js'),
          import('../bin/commands/cluster-services.js'),
          import('../streams/elasticsearch/elasticsearch-datastore.js'),
          import('./pipeline-cluster.js'),
          import('../streams/kafka/kafka-client.js'),
        ]);
      const { transport, brokers } = await clusterTransport('bench-soak', process.env, 'all');
      producer = transport.producer();
      const { es, url } = clusterElasticsearch();
      infrastructure = `Kafka ${brokers.join(',')}, Elasticsearch ${url}`;
      // Clients of its own: stopping the runtime closes the datastore's.
      cleanUp = async () => {
        const admin = kafka.createKafkaClient({ clientId: 'bench-soak-cleanup', brokers }).admin();
        const cleaner = clusterElasticsearch().es;
        await admin.connect();
        try {
          const problems = [
            ...(await cluster.deleteTopicsAndGroups(admin, topicPrefix)),
            ...(await cluster.deleteIndices(cleaner, indexPrefix)),
          ];
          return problems;
        } finally {
          await admin.disconnect();
          await cleaner.close();
        }
      };
      log(`${infrastructure}; topics ${topicPrefix}*, indices ${indexPrefix}*`);
      runtime = await startProductRuntime({
        mode,
        transport,
        datastore: new ElasticsearchDatastore({ es, prefix: indexPrefix, location: url }),
        config,
        api: null,
        metricsPort: null,
        say: log,
        log: () => undefined,
      });
    } else {
      const [{ createEmbeddedTransport }, { EmbeddedDatastore }] = await Promise.all([
        import('../streams/embedded/embedded-transport.js'),
        import('../streams/embedded/embedded-datastore.js'),
      ]);
      const transport = createEmbeddedTransport();
      producer = transport.producer();
      runtime = await startProductRuntime({
        mode,
        transport,
        datastore: new EmbeddedDatastore(indexPrefix),
        config,
        api: null,
        metricsPort: null,
        say: log,
        log: () => undefined,
      });
    }
    const running = runtime;
    const datastore = running.pipeline.retriever.datastore;
    const publisher = new TransportArticlePublisher(producer, { processor: 'intake' });
    const loadAtStart = loadavg().map((l) => round(l));
    log(
      `${mode}: ${settings.minutes} min (${settings.warmupMinutes} min warm-up), embedder ${running.embedder.model}, ` +
        `extractor ${running.pipeline.extraction.extractor}`,
    );

    // Progress, polled on its own clock: the ingest loop reads the latest backlog without waiting.
    let progress = await running.pipeline.progress();
    const backlog = (): number => progress.reduce((sum, s) => sum + (s.running && s.lag !== null ? s.lag : 0), 0);
    const completed = (stage: string): number => progress.find((s) => s.stage === stage)?.completed ?? 0;
    const polling = { on: true };
    const poller = (async () => {
      while (polling.on) {
        progress = await running.pipeline.progress().catch(() => progress);
        await pause(PROGRESS_POLL_MS);
      }
    })();

    const started = performance.now();
    const minutesNow = (): number => (performance.now() - started) / 60_000;
    const warmupEnd = settings.warmupMinutes;
    let offered: number | undefined = settings.rate;
    let calibrationFrom: { t: number; published: number } | undefined;
    let measuredFrom: { t: number; published: number } | undefined;
    let pausedTicks = 0;
    const samples: Sample[] = [];

    const sample = async (phase: Sample['phase']): Promise<void> => {
      gc();
      const memory = process.memoryUsage();
      const documents = await Promise.all([datastore.count('chunks'), datastore.count('interactions')]).then(
        ([c, i]) => c + i,
        () => null,
      );
      samples.push({
        t_min: round(minutesNow(), 3),
        phase,
        heap_used_mib: round(memory.heapUsed / MIB),
        rss_mib: round(memory.rss / MIB),
        external_mib: round(memory.external / MIB),
        lag: backlog(),
        published: publisher.counters.published,
        marked: completed('markup'),
        chunks_indexed: completed('index-chunks'),
        interactions_indexed: completed('index-interactions'),
        documents_held: documents,
        entities: running.pipeline.directory.size,
        spike_episodes: running.pipeline.feed.book.size(),
      });
      const s = samples.at(-1)!;
      log(
        `${s.t_min.toFixed(2)} min ${phase}: heap ${s.heap_used_mib} MiB, rss ${s.rss_mib} MiB, lag ${s.lag}, ` +
          `published ${s.published}, marked ${s.marked}, documents ${s.documents_held ?? '?'}, entities ${s.entities}, ` +
          `spike episodes ${s.spike_episodes}`,
      );
    };

    let nextSampleAt = 0;
    while (!stopped()) {
      const t = minutesNow();
      if (t >= settings.minutes) break;
      const phase: Sample['phase'] = t < warmupEnd ? 'warmup' : 'measured';
      if (phase === 'measured' && measuredFrom === undefined) {
        if (offered === undefined) {
          const from = calibrationFrom ?? { t: 0, published: 0 };
          let reached = (publisher.counters.published - from.published) / ((t - from.t) * 60);
          // Nothing drained in the warm-up's second half (a slow start): the whole warm-up's rate.
          if (!(reached > 0)) reached = publisher.counters.published / (t * 60);
          offered = OFFERED_SHARE * reached;
          log(
            `warm-up took ${(offered / OFFERED_SHARE).toFixed(2)} articles/s; offering ${offered.toFixed(2)} from now on`,
          );
        }
        measuredFrom = { t, published: publisher.counters.published };
      }
      if (phase === 'warmup' && calibrationFrom === undefined && t >= warmupEnd / 2) {
        calibrationFrom = { t, published: publisher.counters.published };
      }
      if (t * 60 >= nextSampleAt) {
        await sample(phase);
        nextSampleAt += settings.sampleSeconds;
      }
      // How many articles intake may publish now.
      let wanted: number;
      if (backlog() > HARD_BACKLOG) {
        wanted = 0;
        pausedTicks += 1;
      } else if (phase === 'measured' || offered !== undefined) {
        const rate = offered!;
        const base = measuredFrom ?? { t: 0, published: 0 };
        wanted = Math.floor(rate * (t - base.t) * 60) - (publisher.counters.published - base.published);
      } else {
        const ahead = publisher.counters.published - completed('markup');
        wanted = backlog() < CALIBRATION_BACKLOG ? Math.max(0, CALIBRATION_ARTICLES_AHEAD - ahead) : 0;
      }
      for (let i = 0; i < wanted && !stopped(); i++) await publisher.publish(nextArticle());
      await pause(INGEST_TICK_MS);
    }
    await sample(minutesNow() < warmupEnd ? 'warmup' : 'measured');
    polling.on = false;
    await poller;

    const measured = samples.filter((s) => s.phase === 'measured');
    if (measured.length < 2) {
      log('stopped before the measured phase: no figures written');
      return 130;
    }
    const heap = trend(measured, (s) => s.heap_used_mib);
    const rss = trend(measured, (s) => s.rss_mib);
    const external = trend(measured, (s) => s.external_mib);
    const lagSlope = round(leastSquaresSlope(measured.map((s) => ({ x: s.t_min, y: s.lag }))), 1);
    const minutes = perMinute(samples);
    const last = samples.at(-1)!;
    const first = measured[0]!;
    const measuredSeconds = (last.t_min - first.t_min) * 60;
    const document = {
      mode,
      infrastructure,
      settings: {
        minutes: settings.minutes,
        warmup_minutes: settings.warmupMinutes,
        sample_seconds: settings.sampleSeconds,
        rate: settings.rate ?? `auto (${OFFERED_SHARE} of the warm-up's rate)`,
        embedder: running.embedder.model,
        extractor: running.pipeline.extraction.extractor,
        articles: 'synthetic news (devkit/synthetic-news.ts), 8-17 statements each, event time 5 min apart',
        heap_figures: 'main thread, after a forced full GC at each sample',
      },
      stopped_early: abort.signal.aborted,
      load_average: { start: loadAtStart, end: loadavg().map((l) => round(l)) },
      offered_articles_per_s: offered === undefined ? null : round(offered),
      paused_seconds_at_hard_backlog: round((pausedTicks * INGEST_TICK_MS) / 1000, 1),
      measured_phase: {
        seconds: round(measuredSeconds, 1),
        articles_published: last.published - first.published,
        articles_per_s: round((last.published - first.published) / measuredSeconds),
        marked_per_s: round((last.marked - first.marked) / measuredSeconds),
        heap_used: heap,
        rss,
        external,
        lag_slope_records_per_min: lagSlope,
        lag_start: first.lag,
        lag_end: last.lag,
        documents_held_start: first.documents_held,
        documents_held_end: last.documents_held,
        entities_start: first.entities,
        entities_end: last.entities,
        spike_episodes_start: first.spike_episodes,
        spike_episodes_end: last.spike_episodes,
      },
      target: {
        heap_growth_mib: `≤ ${HEAP_GROWTH_TARGET_MIB}`,
        // A run cut short is not judged: its growth covers less than the time asked for.
        met: stopped() ? null : heap.growth_mib <= HEAP_GROWTH_TARGET_MIB,
      },
      per_minute: minutes,
      samples,
    };
    const path = results.writeBenchResults('soak', document);
    const verdict = document.target.met === null ? 'not judged (stopped early)' : document.target.met ? 'PASS' : 'FAIL';
    const documentsGained =
      first.documents_held === null || last.documents_held === null ? null : last.documents_held - first.documents_held;
    process.stdout.write(
      [
        `soak (${mode}): ${infrastructure}; ${round(last.t_min, 1)} min, warm-up ${settings.warmupMinutes} min; ` +
          `embedder ${running.embedder.model}`,
        `load average at start ${loadAtStart.join(' ')}, at end ${document.load_average.end.join(' ')}`,
        `offered ${document.offered_articles_per_s ?? '?'} articles/s after the warm-up; ` +
          `${document.measured_phase.articles_published} articles in the measured ${Math.round(measuredSeconds)} s ` +
          `(${document.measured_phase.articles_per_s}/s published, ${document.measured_phase.marked_per_s}/s marked)`,
        '',
        ' minute  published/s  marked/s  chunk recs/s  interaction recs/s  lag at end',
        ...minutes.map(
          (m) =>
            `${String(m.minute).padStart(7)}  ${m.published_per_s.toFixed(2).padStart(11)}  ${m.marked_per_s.toFixed(2).padStart(8)}` +
            `  ${m.chunk_records_indexed_per_s.toFixed(2).padStart(12)}  ${m.interaction_records_indexed_per_s.toFixed(2).padStart(18)}` +
            `  ${String(m.lag_at_end).padStart(10)}`,
        ),
        '',
        `heap used (after full GC)  ${heap.start_mib} → ${heap.end_mib} MiB: growth ${heap.growth_mib} MiB, ` +
          `slope ${heap.slope_mib_per_min} MiB/min   target growth ≤ ${HEAP_GROWTH_TARGET_MIB} MiB: ${verdict}`,
        `RSS                        ${rss.start_mib} → ${rss.end_mib} MiB: growth ${rss.growth_mib} MiB, ` +
          `slope ${rss.slope_mib_per_min} MiB/min`,
        `external (array buffers…)  ${external.start_mib} → ${external.end_mib} MiB: growth ${external.growth_mib} MiB, ` +
          `slope ${external.slope_mib_per_min} MiB/min`,
        `consumer lag               ${first.lag} → ${last.lag} records, slope ${lagSlope} records/min`,
        `entities known             ${first.entities} → ${last.entities}; spike episodes ${first.spike_episodes} → ${last.spike_episodes}`,
        ...(documentsGained === null
          ? []
          : [
              `documents indexed meanwhile ${documentsGained}` +
                (settings.cluster
                  ? ' (in Elasticsearch)'
                  : ` (held in this process's heap: ${documentsGained > 0 ? round((heap.growth_mib * MIB) / documentsGained / 1024, 2) : '–'} KiB of heap growth per document)`),
            ]),
        '',
        `figures written to ${path}`,
        '',
      ].join('\n'),
    );
    return 0;
  } finally {
    await runtime?.stop(settings.cluster ? undefined : 0).catch((error: unknown) => log(`stop: ${String(error)}`));
    for (const problem of await cleanUp().catch((error: unknown) => [String(error)])) log(`clean-up: ${problem}`);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

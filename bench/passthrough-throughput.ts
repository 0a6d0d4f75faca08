/**
 * Throughput of the pass-through stage (devkit/passthrough-stage.ts) on real Kafka and
 * Elasticsearch, next to a bare kafkajs → `_bulk` loop doing the same work: the ceiling. Shared
 * machines are noisy, so the figure that matters is the ratio neon/bare measured side by side in one
 * run, with the order of the two contenders alternating from round to round.
 *
 *   npm run bench -- [--records 20000] [--rounds 2] [--timeout-seconds N]
 *
 * Prints the result as JSON, then as a table. Exits 1 if a run did not reach the expected documents
 * (a correctness failure, not a slow result), 2 on bad arguments.
 *
 * The scenario, the producer and the committed-offsets check come from devkit/; test/harness/invariants.ts
 * imports vitest (which refuses to load outside its runner), so what this run checks is written here.
 */
import type { Client, estypes } from '@elastic/elasticsearch';
import { logLevel, type Admin, type Consumer, type Kafka } from 'kafkajs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { decodeRecord } from '../schemas/avro-codec.js';
import { ElasticsearchBulkSink, type BulkSinkSettings } from '../streams/elasticsearch/elasticsearch-bulk-sink.js';
import { createElasticsearchClient } from '../streams/elasticsearch/elasticsearch-client.js';
import { createKafkaClient } from '../streams/kafka/kafka-client.js';
import type { StageStats } from '../streams/runtime/run-stage.js';
import { acquireTestInfrastructure, type TestInfrastructure } from '../devkit/acquire-infrastructure.js';
import { committedToEnd } from '../devkit/kafka-progress.js';
import { passthroughScenario, produce } from '../devkit/passthrough-scenario.js';
import { documentIds, encodeArticle, sampleArticle, startPassthroughStage } from '../devkit/passthrough-stage.js';

type Contender = 'neon' | 'bare';

interface Message {
  key: string;
  value: Buffer;
  headers: Record<string, string>;
}

interface RunResult {
  contender: Contender;
  round: number;
  /** 1 or 2: which of the round's two runs this was. */
  position: number;
  ok: boolean;
  failure?: string;
  produceSeconds: number;
  /** Start of the consumer to the end condition: the measured figure. */
  seconds: number;
  recordsPerSecond: number;
  documentsPerSecond: number;
  /** When the end condition's parts were first seen (200 ms polling), seconds from start. */
  firstRecordSeconds: number | null;
  allReceivedSeconds: number | null;
  documentsCompleteSeconds: number | null;
  /** neon: committed offsets at the end of every partition; bare: every record's bulk acknowledged. */
  consumedSeconds: number | null;
  documentsFound: number;
  rssPeakBytes: number;
  /** CPU (user + system) this process used from the start to the end condition: busy or waiting? */
  cpuSeconds: number;
  /** Shard-level `_bulk` requests Elasticsearch saw for the index, and documents per request. */
  bulkRequests: number | null;
  documentsPerBulk: number | null;
  stageStats?: StageStats;
  bareBatches?: number;
}

const POLL_MS = 200;
const PARTITIONS = 3;
const repoRoot = fileURLToPath(new URL('..', import.meta.url));

function log(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

function positiveInteger(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`--${flag} must be a positive integer (got "${value}")`);
  return n;
}

class UsageError extends Error {
  override readonly name = 'UsageError';
}

function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    availableParallelism: os.availableParallelism(),
    totalMemoryBytes: os.totalmem(),
    totalMemoryGiB: round(os.totalmem() / 2 ** 30, 1),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((l) => round(l)),
  };
}

/** Samples the resident set size every 200 ms: the whole run's peak and the current run's. */
class RssSampler {
  peak = process.memoryUsage.rss();
  runPeak = this.peak;
  private readonly timer = setInterval(() => this.sample(), POLL_MS);

  constructor() {
    this.timer.unref();
  }

  sample(): void {
    const rss = process.memoryUsage.rss();
    this.peak = Math.max(this.peak, rss);
    this.runPeak = Math.max(this.runPeak, rss);
  }

  startRun(): void {
    this.runPeak = process.memoryUsage.rss();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** Produces through the scenario harness; returns the seconds it took. */
async function timedProduce(kafka: Kafka, topic: string, messages: Message[]): Promise<number> {
  const started = performance.now();
  await produce(kafka, topic, messages);
  return round((performance.now() - started) / 1000, 3);
}

async function documentCount(es: Client, index: string): Promise<number> {
  await es.indices.refresh({ index });
  return (await es.count({ index })).count;
}

async function bulkStats(es: Client, index: string): Promise<{ requests: number | null; perBulk: number | null }> {
  try {
    const stats = await es.indices.stats({ index, metric: ['bulk', 'indexing'] });
    const primaries: estypes.IndicesStatsIndexStats | undefined = stats._all.primaries;
    const requests = primaries?.bulk?.total_operations ?? null;
    const indexed = primaries?.indexing?.index_total ?? null;
    return {
      requests,
      perBulk: requests !== null && indexed !== null && requests > 0 ? round(indexed / requests, 1) : null,
    };
  } catch {
    return { requests: null, perBulk: null };
  }
}

interface Probes {
  received(): number;
  consumed(): Promise<boolean> | boolean;
  failure(): string | undefined;
}

interface EndTimes {
  firstRecordSeconds: number | null;
  allReceivedSeconds: number | null;
  documentsCompleteSeconds: number | null;
  consumedSeconds: number | null;
  documentsFound: number;
  cpuSeconds: number;
  failure?: string;
}

interface Clock {
  at: number;
  cpu: NodeJS.CpuUsage;
}

function startClock(): Clock {
  return { at: performance.now(), cpu: process.cpuUsage() };
}

function cpuSince(clock: Clock): number {
  const used = process.cpuUsage(clock.cpu);
  return round((used.user + used.system) / 1e6, 3);
}

/**
 * Polls every 200 ms (the same for both contenders) until every record is consumed and the index
 * holds the expected count. A time is the start of the poll that first saw its condition.
 */
async function waitForEnd(
  es: Client,
  index: string,
  records: number,
  expectedDocs: number,
  clock: Clock,
  timeoutMs: number,
  probes: Probes,
): Promise<EndTimes> {
  const started = clock.at;
  const times: EndTimes = {
    firstRecordSeconds: null,
    allReceivedSeconds: null,
    documentsCompleteSeconds: null,
    consumedSeconds: null,
    documentsFound: 0,
    cpuSeconds: 0,
  };
  const end = (failure?: string): EndTimes => ({
    ...times,
    cpuSeconds: cpuSince(clock),
    ...(failure === undefined ? {} : { failure }),
  });
  for (;;) {
    const tick = performance.now();
    const at = (tick - started) / 1000;
    const failure = probes.failure();
    if (failure !== undefined) return end(failure);
    const received = probes.received();
    if (times.firstRecordSeconds === null && received > 0) times.firstRecordSeconds = at;
    if (times.allReceivedSeconds === null && received >= records) times.allReceivedSeconds = at;
    const [consumed, count] = await Promise.all([
      times.consumedSeconds === null ? probes.consumed() : true,
      times.documentsCompleteSeconds === null ? documentCount(es, index) : expectedDocs,
    ]);
    times.documentsFound = count;
    if (count > expectedDocs) return end(`${count} documents, more than the ${expectedDocs} expected`);
    if (times.documentsCompleteSeconds === null && count === expectedDocs) times.documentsCompleteSeconds = at;
    if (times.consumedSeconds === null && consumed) times.consumedSeconds = at;
    if (times.documentsCompleteSeconds !== null && times.consumedSeconds !== null) return end();
    if (tick - started > timeoutMs)
      return end(
        `timed out after ${timeoutMs / 1000} s with ${count} of ${expectedDocs} documents (consumed: ${consumed})`,
      );
    await sleep(Math.max(0, POLL_MS - (performance.now() - tick)));
  }
}

interface Context {
  infra: TestInfrastructure;
  kafka: Kafka;
  admin: Admin;
  es: Client;
  messages: Message[];
  expectedDocs: number;
  timeoutMs: number;
  rss: RssSampler;
  cleanup: { topics: string[]; indices: string[]; groups: string[] };
  neonSinkSettings?: Readonly<BulkSinkSettings>;
}

function finish(
  ctx: Context,
  base: Pick<RunResult, 'contender' | 'round' | 'position' | 'produceSeconds'>,
  times: EndTimes,
  bulk: { requests: number | null; perBulk: number | null },
): RunResult {
  const records = ctx.messages.length;
  const ok = times.failure === undefined;
  const seconds = ok ? Math.max(times.documentsCompleteSeconds ?? 0, times.consumedSeconds ?? 0) : Number.NaN;
  return {
    ...base,
    ok,
    ...(times.failure === undefined ? {} : { failure: times.failure }),
    seconds: round(seconds, 3),
    recordsPerSecond: ok ? Math.round(records / seconds) : 0,
    documentsPerSecond: ok ? Math.round(ctx.expectedDocs / seconds) : 0,
    firstRecordSeconds: times.firstRecordSeconds === null ? null : round(times.firstRecordSeconds, 3),
    allReceivedSeconds: times.allReceivedSeconds === null ? null : round(times.allReceivedSeconds, 3),
    documentsCompleteSeconds: times.documentsCompleteSeconds === null ? null : round(times.documentsCompleteSeconds, 3),
    consumedSeconds: times.consumedSeconds === null ? null : round(times.consumedSeconds, 3),
    documentsFound: times.documentsFound,
    rssPeakBytes: ctx.rss.runPeak,
    cpuSeconds: times.cpuSeconds,
    bulkRequests: bulk.requests,
    documentsPerBulk: bulk.perBulk,
  };
}

async function runNeon(ctx: Context, roundNo: number, position: number): Promise<RunResult> {
  const s = await passthroughScenario(ctx.admin, ctx.es, ctx.cleanup, 'bench-neon');
  const produceSeconds = await timedProduce(ctx.kafka, s.input, ctx.messages);
  ctx.rss.startRun();
  const clock = startClock();
  const stage = await startPassthroughStage({
    brokers: ctx.infra.kafkaBrokers,
    elasticsearchUrl: ctx.infra.elasticsearchUrl,
    inputTopic: s.input,
    index: s.index,
    groupId: s.group,
    deadLetterTopic: s.dlq,
    // Only to read the sink's settings; the same instance goes on unchanged.
    wrapSink: (sink) => {
      if (sink instanceof ElasticsearchBulkSink) ctx.neonSinkSettings = sink.settings;
      return sink;
    },
  });
  let stageFailure: string | undefined;
  stage.done.catch((error: unknown) => {
    stageFailure = `stage failed: ${String(error)}`;
  });
  let times: EndTimes;
  try {
    times = await waitForEnd(ctx.es, s.index, ctx.messages.length, ctx.expectedDocs, clock, ctx.timeoutMs, {
      received: () => stage.stats().received,
      consumed: () => committedToEnd(ctx.admin, s.group, s.input),
      failure: () => stageFailure ?? (stage.stats().deadLettered > 0 ? 'the stage dead-lettered records' : undefined),
    });
  } finally {
    ctx.rss.sample();
    await stage.stop();
    await stage.done.catch(() => undefined);
  }
  const bulk = await bulkStats(ctx.es, s.index);
  return {
    ...finish(ctx, { contender: 'neon', round: roundNo, position, produceSeconds }, times, bulk),
    stageStats: stage.stats(),
  };
}

async function runBare(ctx: Context, roundNo: number, position: number): Promise<RunResult> {
  const s = await passthroughScenario(ctx.admin, ctx.es, ctx.cleanup, 'bench-bare');
  const produceSeconds = await timedProduce(ctx.kafka, s.input, ctx.messages);
  ctx.rss.startRun();
  const clock = startClock();
  const consumer: Consumer = ctx.kafka.consumer({ groupId: s.group });
  let received = 0;
  let handled = 0;
  let batches = 0;
  let failure: string | undefined;
  const index = s.index;
  let times: EndTimes;
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [s.input], fromBeginning: true });
    await consumer.run({
      autoCommit: true,
      // The same fetch concurrency as the Kafka transport's default, so the comparison is about the runtime.
      partitionsConsumedConcurrently: PARTITIONS,
      eachBatch: async ({ batch }) => {
        received += batch.messages.length;
        const operations: unknown[] = [];
        for (const message of batch.messages) {
          const article = decodeRecord('Article', message.value, message.headers);
          for (const [n, id] of documentIds(article.id).entries()) {
            operations.push(
              { index: { _index: index, _id: id } },
              { doc_id: id, article_id: article.id, n, title: article.title, published_at: article.published_at },
            );
          }
        }
        batches += 1;
        if (operations.length > 0) {
          const response = await ctx.es.bulk({ operations, refresh: false });
          if (response.errors) {
            const first = response.items.find((item) => Object.values(item)[0]?.error !== undefined);
            failure = `bulk reported errors, e.g. ${JSON.stringify(first)}`;
            throw new Error(failure);
          }
        }
        handled += batch.messages.length;
      },
    });
    times = await waitForEnd(ctx.es, index, ctx.messages.length, ctx.expectedDocs, clock, ctx.timeoutMs, {
      received: () => received,
      consumed: () => handled >= ctx.messages.length,
      failure: () => failure,
    });
  } catch (error) {
    times = {
      firstRecordSeconds: null,
      allReceivedSeconds: null,
      documentsCompleteSeconds: null,
      consumedSeconds: null,
      documentsFound: 0,
      cpuSeconds: cpuSince(clock),
      failure: `bare loop failed: ${String(error)}`,
    };
  } finally {
    ctx.rss.sample();
    await consumer.disconnect().catch(() => undefined);
  }
  const bulk = await bulkStats(ctx.es, index);
  return {
    ...finish(ctx, { contender: 'bare', round: roundNo, position, produceSeconds }, times, bulk),
    bareBatches: batches,
  };
}

async function cleanUp(ctx: Pick<Context, 'admin' | 'es' | 'cleanup'>): Promise<void> {
  const { topics, indices, groups } = ctx.cleanup;
  if (topics.length > 0)
    await ctx.admin.deleteTopics({ topics }).catch((error: unknown) => log(`deleting topics failed: ${String(error)}`));
  if (groups.length > 0) await ctx.admin.deleteGroups(groups).catch(() => undefined);
  for (const index of indices)
    await ctx.es.indices
      .delete({ index }, { ignore: [404] })
      .catch((error: unknown) => log(`deleting ${index} failed: ${String(error)}`));
}

/** Median of the values present, rounded; null when there are none (JSON has no NaN). */
function medianOf(values: (number | null)[], digits: number): number | null {
  const present = values.filter((v): v is number => v !== null && !Number.isNaN(v));
  return present.length === 0 ? null : round(median(present), digits);
}

function summarize(runs: RunResult[], contender: Contender): Record<string, number | null> {
  const mine = runs.filter((r) => r.contender === contender && r.ok);
  const maxInFlight = mine.map((r) => r.stageStats?.maxInFlightObserved ?? 0);
  return {
    runs: mine.length,
    medianSeconds: medianOf(
      mine.map((r) => r.seconds),
      3,
    ),
    medianRecordsPerSecond: medianOf(
      mine.map((r) => r.recordsPerSecond),
      0,
    ),
    medianDocumentsPerSecond: medianOf(
      mine.map((r) => r.documentsPerSecond),
      0,
    ),
    medianFirstRecordSeconds: medianOf(
      mine.map((r) => r.firstRecordSeconds),
      3,
    ),
    medianDocumentsCompleteSeconds: medianOf(
      mine.map((r) => r.documentsCompleteSeconds),
      3,
    ),
    medianConsumedSeconds: medianOf(
      mine.map((r) => r.consumedSeconds),
      3,
    ),
    medianCpuSeconds: medianOf(
      mine.map((r) => r.cpuSeconds),
      3,
    ),
    maxInFlightObserved: contender === 'neon' && mine.length > 0 ? Math.max(...maxInFlight) : null,
    rssPeakBytes: mine.length > 0 ? Math.max(...mine.map((r) => r.rssPeakBytes)) : null,
  };
}

function mib(bytes: number | null | undefined): string {
  return bytes === null || bytes === undefined ? '-' : `${Math.round(bytes / 2 ** 20)}`;
}

function fmt(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits);
}

/** Columns left of `leftAligned` are text (left-aligned); the rest are figures. */
function table(rows: string[][], leftAligned = 1): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => (row[c] ?? '').length)));
  return rows
    .map((row) =>
      row.map((cell, c) => (c < leftAligned ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
    )
    .join('\n');
}

async function main(): Promise<number> {
  let args: { records: number; rounds: number; timeoutSeconds: number | undefined };
  try {
    const { values } = parseArgs({
      options: {
        records: { type: 'string' },
        rounds: { type: 'string' },
        'timeout-seconds': { type: 'string' },
      },
      strict: true,
    });
    args = {
      records: positiveInteger(values.records, 20_000, 'records'),
      rounds: positiveInteger(values.rounds, 2, 'rounds'),
      timeoutSeconds:
        values['timeout-seconds'] === undefined
          ? undefined
          : positiveInteger(values['timeout-seconds'], 1, 'timeout-seconds'),
    };
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.stderr.write('usage: npm run bench -- [--records N] [--rounds R] [--timeout-seconds S]\n');
    return 2;
  }
  const { records, rounds } = args;
  const timeoutMs = (args.timeoutSeconds ?? 60 + Math.ceil(records / 100)) * 1000;

  const startedAt = new Date().toISOString();
  const commit = git(['rev-parse', '--short', 'HEAD']);
  const status = git(['status', '--porcelain']);
  const rss = new RssSampler();

  const articles = Array.from({ length: records }, (_, i) => sampleArticle(i));
  const messages: Message[] = articles.map((a) => ({ key: a.id, ...encodeArticle(a) }));
  const fanOut = [0, 0, 0];
  let expectedDocs = 0;
  for (const a of articles) {
    const k = documentIds(a.id).length;
    fanOut[k] = (fanOut[k] ?? 0) + 1;
    expectedDocs += k;
  }
  const valueBytes = messages.reduce((sum, m) => sum + m.value.length, 0);
  const data = {
    records,
    expectedDocuments: expectedDocs,
    description:
      'sampleArticle(i) for i in [0, records): Article records, Avro-encoded (neon-schema header), key = article id, ' +
      `murmur2 (Java-compatible) partitioning over ${PARTITIONS} partitions; each becomes 0, 1 or 2 documents (documentIds) ` +
      'in a fresh strict index with 1 shard, 0 replicas; a fresh topic, index and group per run',
    fanOut: { zero: fanOut[0], one: fanOut[1], two: fanOut[2] },
    avgValueBytes: round(valueBytes / records, 1),
    totalValueBytes: valueBytes,
  };

  log('acquiring Kafka and Elasticsearch…');
  const infra = await acquireTestInfrastructure(process.env, log);
  log(`using ${infra.description}: kafka ${infra.kafkaBrokers.join(',')}, elasticsearch ${infra.elasticsearchUrl}`);
  const kafka = createKafkaClient({ clientId: 'neon-bench', brokers: infra.kafkaBrokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const baseEs = createElasticsearchClient({ url: infra.elasticsearchUrl });
  const es =
    Object.keys(infra.elasticsearchHeaders).length === 0
      ? baseEs
      : baseEs.child({ headers: infra.elasticsearchHeaders });
  const cleanup = { topics: [] as string[], indices: [] as string[], groups: [] as string[] };
  const runs: RunResult[] = [];
  const ctx: Context = { infra, kafka, admin, es, messages, expectedDocs, timeoutMs, rss, cleanup };
  try {
    await admin.connect();
    for (let r = 1; r <= rounds; r++) {
      const order: Contender[] = r % 2 === 1 ? ['neon', 'bare'] : ['bare', 'neon'];
      for (const [i, contender] of order.entries()) {
        log(`round ${r}/${rounds}: ${contender} (${records} records → ${expectedDocs} documents)`);
        const result = contender === 'neon' ? await runNeon(ctx, r, i + 1) : await runBare(ctx, r, i + 1);
        runs.push(result);
        log(
          result.ok
            ? `  ${contender}: ${result.seconds.toFixed(2)} s, ${result.recordsPerSecond} records/s, ${result.documentsPerSecond} documents/s`
            : `  ${contender}: FAILED — ${result.failure ?? ''}`,
        );
      }
    }
  } finally {
    rss.stop();
    await cleanUp(ctx).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    await es.close().catch(() => undefined);
    await infra.release().catch((error: unknown) => log(`release failed: ${String(error)}`));
  }

  const neon = summarize(runs, 'neon');
  const bare = summarize(runs, 'bare');
  const ratio = (a: number | null | undefined, b: number | null | undefined): number | null =>
    a === null || a === undefined || b === null || b === undefined || !(b > 0) || Number.isNaN(a)
      ? null
      : round(a / b, 3);
  const perRound = Array.from({ length: rounds }, (_, i) => {
    const n = runs.find((x) => x.round === i + 1 && x.contender === 'neon' && x.ok);
    const b = runs.find((x) => x.round === i + 1 && x.contender === 'bare' && x.ok);
    return ratio(n?.recordsPerSecond, b?.recordsPerSecond);
  });
  const failures = runs.filter((x) => !x.ok).map((x) => `round ${x.round} ${x.contender}: ${x.failure ?? ''}`);
  const result = {
    benchmark: 'passthrough-throughput',
    startedAt,
    git: { commit, dirty: status === null ? null : status.length > 0 },
    machine: machine(),
    infrastructure: {
      source: infra.source,
      description: infra.description,
      kafkaBrokers: infra.kafkaBrokers,
      elasticsearchUrl: infra.elasticsearchUrl,
    },
    data,
    settings: {
      rounds,
      pollMs: POLL_MS,
      timeoutSeconds: timeoutMs / 1000,
      neon: {
        what: 'startPassthroughStage (devkit/passthrough-stage.ts): kafka transport defaults, maxInFlight 500, commit every 1 s',
        bulkSink: ctx.neonSinkSettings ?? null,
        endCondition: 'committed offsets at the end of every partition AND the index holds the expected count',
      },
      bare: {
        what: 'kafkajs consumer, eachBatch, autoCommit, partitionsConsumedConcurrently 3; decodeRecord + one es.bulk (refresh false) per kafkajs batch',
        endCondition:
          'every record handled (its batch bulk-acknowledged without errors) AND the index holds the expected count',
      },
    },
    runs,
    summary: {
      neon,
      bare,
      ratioNeonOverBare: {
        recordsPerSecondMedians: ratio(neon.medianRecordsPerSecond, bare.medianRecordsPerSecond),
        documentsPerSecondMedians: ratio(neon.medianDocumentsPerSecond, bare.medianDocumentsPerSecond),
        perRound,
        medianOfPerRound: medianOf(perRound, 3),
      },
      processRssPeakBytes: rss.peak,
    },
    ok: failures.length === 0,
    failures,
  };

  process.stdout.write(`${JSON.stringify(result, null, 2)}\n\n`);

  const m = result.machine;
  const lines = [
    `passthrough throughput — ${records} records → ${expectedDocs} documents, ${rounds} round(s), commit ${commit ?? 'unknown'}${result.git.dirty === true ? ' (dirty tree)' : ''}`,
    `machine: ${String(m.cpuModel)}, ${String(m.cores)} cores, ${String(m.totalMemoryGiB)} GiB, node ${process.version}`,
    `infra:   ${infra.description}`,
    '',
    table(
      [
        [
          'run',
          'contender',
          'produce s',
          'seconds',
          'records/s',
          'docs/s',
          'first rec s',
          'docs done s',
          'consumed s',
          'cpu s',
          'docs/bulk',
          'rss MiB',
        ],
        ...runs.map((x) => [
          `r${x.round}.${x.position}`,
          x.ok ? x.contender : `${x.contender} FAILED`,
          fmt(x.produceSeconds),
          fmt(x.ok ? x.seconds : null),
          x.ok ? String(x.recordsPerSecond) : '-',
          x.ok ? String(x.documentsPerSecond) : '-',
          fmt(x.firstRecordSeconds),
          fmt(x.documentsCompleteSeconds),
          fmt(x.consumedSeconds),
          fmt(x.cpuSeconds),
          fmt(x.documentsPerBulk, 1),
          mib(x.rssPeakBytes),
        ]),
      ],
      2,
    ),
    '',
    table([
      ['median', 'seconds', 'records/s', 'docs/s', 'cpu s', 'max in flight', 'rss peak MiB'],
      ...(
        [
          ['neon stage', neon],
          ['bare loop', bare],
        ] as const
      ).map(([name, s]) => [
        name,
        fmt(s.medianSeconds),
        fmt(s.medianRecordsPerSecond, 0),
        fmt(s.medianDocumentsPerSecond, 0),
        fmt(s.medianCpuSeconds),
        s.maxInFlightObserved === null ? '-' : String(s.maxInFlightObserved),
        mib(s.rssPeakBytes),
      ]),
    ]),
    '',
    `ratio neon/bare (records/s, medians): ${fmt(result.summary.ratioNeonOverBare.recordsPerSecondMedians, 3)}` +
      `   per round: ${perRound.map((x) => fmt(x, 3)).join(', ')}`,
    `process RSS peak: ${mib(rss.peak)} MiB`,
    ...(failures.length > 0 ? ['', 'FAILED (documents not as expected):', ...failures.map((f) => `  ${f}`)] : []),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

/**
 * `npm run bench -- stages`: articles per second of each processor's pure function on one core,
 * on the real RealTime QA documents: intake normalisation, markup, chunking and near-duplicate
 * removal. No transport: this is what the stage code costs, the ceiling for the stage on Kafka.
 */
import { parseArgs } from 'node:util';
import { chunkArticle } from '../processors/chunk/chunk-article.js';
import { NearDuplicateFilter } from '../processors/dedupe/drop-near-duplicates.js';
import { IntakeRejection, type ArticleInput } from '../processors/intake/article-input.js';
import { loadRealtimeQaDocs } from '../streams/archives/load-realtimeqa.js';
import { normalizeArticle } from '../processors/intake/normalize-article.js';
import { EntityRegistry } from '../processors/markup/entity-registry.js';
import { markArticle } from '../processors/markup/mark-article.js';
import type { Article, Chunk, MarkedArticle } from '../schemas/records.generated.js';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';
import { writeBenchResults } from './results.js';

interface StageFigure {
  stage: string;
  inputs: number;
  outputs: number;
  seconds: number;
  articles_per_s: number;
  ms_per_article: number;
}

function timed<T>(run: () => T): { result: T; seconds: number } {
  const started = process.hrtime.bigint();
  const result = run();
  return { result, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

function figure(stage: string, inputs: number, outputs: number, articles: number, seconds: number): StageFigure {
  return {
    stage,
    inputs,
    outputs,
    seconds: Math.round(seconds * 1000) / 1000,
    articles_per_s: Math.round(articles / seconds),
    ms_per_article: Math.round((seconds * 1000 * 1000) / articles) / 1000,
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { limit: { type: 'string' } }, strict: true });
  const limit = values.limit === undefined ? Infinity : Number(values.limit);
  const dir = devDataPath('realtimeqa');
  if (!dir) {
    process.stdout.write(`stages benchmark ${missingDevDataMessage('realtimeqa')}\n`);
    return 0;
  }
  const inputs: ArticleInput[] = [];
  const load = loadRealtimeQaDocs(dir);
  if (!load.ok) {
    process.stdout.write(`stages benchmark skipped: ${load.error}\n`);
    return 0;
  }
  for await (const doc of load.items) {
    if (doc.input) inputs.push(doc.input);
    if (inputs.length >= limit) break;
  }
  // Fixed "now" after the data, so the dates are past dates whatever day the bench runs.
  const now = Date.UTC(2024, 0, 1);

  const intake = timed(() => {
    const accepted: Article[] = [];
    let rejected = 0;
    for (const input of inputs) {
      try {
        accepted.push(normalizeArticle(input, now));
      } catch (error) {
        if (!(error instanceof IntakeRejection)) throw error;
        rejected += 1;
      }
    }
    return { accepted, rejected };
  });
  const articles = intake.result.accepted;

  const registry = new EntityRegistry();
  const markup = timed(() => articles.map((article): MarkedArticle => markArticle(article, registry)));
  const chunking = timed(() => markup.result.flatMap((marked): Chunk[] => chunkArticle(marked)));
  const filter = new NearDuplicateFilter();
  const dedupe = timed(() => {
    let unique = 0;
    for (const chunk of chunking.result) if (filter.offer(chunk).kind !== 'duplicate') unique += 1;
    return unique;
  });

  const figures = [
    figure('intake (normalize)', inputs.length, articles.length, inputs.length, intake.seconds),
    figure('markup', articles.length, markup.result.length, articles.length, markup.seconds),
    figure('chunk', articles.length, chunking.result.length, articles.length, chunking.seconds),
    figure('dedupe', chunking.result.length, dedupe.result, articles.length, dedupe.seconds),
  ];
  const rows = [
    ['stage', 'inputs', 'outputs', 'seconds', 'articles/s', 'ms/article'],
    ...figures.map((f) => [
      f.stage,
      String(f.inputs),
      String(f.outputs),
      f.seconds.toFixed(2),
      String(f.articles_per_s),
      f.ms_per_article.toFixed(3),
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const table = rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))));
  process.stdout.write(
    [
      `RealTime QA documents (unique URLs): ${inputs.length}; accepted ${articles.length}, rejected ${intake.result.rejected}`,
      `registry entities: ${registry.size}; chunks: ${chunking.result.length}; unique chunks: ${dedupe.result}`,
      '',
      ...table.map((r) => r.join('  ')),
      '',
    ].join('\n'),
  );
  const path = writeBenchResults('stages', {
    data: 'realtimeqa docs, deduplicated by canonical URL',
    single_thread: true,
    stages: figures,
  });
  process.stdout.write(`figures written to ${path}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

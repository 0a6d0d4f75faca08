/**
 * `npm run bench -- embed`: texts per second of the local sentence-embedding models on one core
 * (one inference worker each, intraOpNumThreads 1), in one run on the same real chunk-sized texts:
 * the first RealTime QA documents (read at run time, never copied), normalised by intake, split into
 * sentences by markup's splitter and cut into the chunk stage's windows (5 sentences, overlap 2).
 *
 * Every model is measured on every text, interleaved: the texts are cut into `--rounds` slices and
 * each slice is embedded by every model in turn (the order rotating per slice), so a shared,
 * noisy machine slows all models alike and the ratios to all-MiniLM-L6-v2 hold even when the
 * absolute figures drift.
 *
 * At each batch size b the chunks are embedded in arrival order, b texts per `embed` call (each
 * batch padded to its longest text); and, for b below the call size, in calls of `--call-size`
 * texts that the embedder sorts by length before cutting batches of b (less padding). The int8
 * models run one text per inference, so they take part in the b = 1 plans only. Then each model
 * embeds `--queries` RealTime QA questions one per call, as queries (bge-small-en-v1.5 reads its
 * instruction first), as the query service does.
 *
 *   npm run bench -- embed [--models all-MiniLM-L6-v2,all-MiniLM-L6-v2-q,bge-small-en-v1.5,bge-small-en-v1.5-q]
 *                          [--docs 200] [--chunks 512] [--batch-sizes 1,16,64] [--call-size 64]
 *                          [--rounds 32] [--queries 64] [--threads 1]
 *
 * Downloads a model first if `neon infra prepare` has not. Skips (exit 0) without the data.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ensureEmbeddingModel } from '../infra/models/download-embedding-model.js';
import { sentenceWindows } from '../processors/chunk/chunk-article.js';
import { createEmbedder } from '../streams/embed/create-embedder.js';
import type { Embedder } from '../processors/embed/embedder.js';
import { embedderConfigFromEnv } from '../processors/embed/embedder-config.js';
import {
  LOCAL_MODEL_NAMES,
  LOCAL_MODEL_PINS,
  type LocalModelFiles,
  type LocalModelName,
  type LocalModelPin,
} from '../processors/embed/model-pins.js';
import { ModelTokenizer } from '../processors/embed/tokenize-for-model.js';
import { IntakeRejection } from '../processors/intake/article-input.js';
import { loadRealtimeQaDocs } from '../streams/archives/load-realtimeqa.js';
import { normalizeArticle } from '../processors/intake/normalize-article.js';
import { splitSentences } from '../processors/markup/split-sentences.js';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';
import { writeBenchResults } from './results.js';

/** The model every ratio is taken against: the local default. */
const BASELINE: LocalModelName = 'all-MiniLM-L6-v2';

interface PlanFigure {
  model: LocalModelName;
  /** Texts per `embed` call. */
  call_size: number;
  /** Texts per inference (the embedder's batch size). */
  batch_size: number;
  texts: number;
  calls: number;
  seconds: number;
  texts_per_s: number;
  ms_per_text: number;
  /** This model's texts/s ÷ all-MiniLM-L6-v2's, same plan, same run (absent without the baseline). */
  speed_vs_baseline: number | null;
  /** CPU seconds of the whole process (main thread + inference workers) per wall second, while this model ran. */
  cpu_per_wall: number;
  /**
   * CPU milliseconds per text (tokenising + inference): the cost, which other processes on a shared
   * machine disturb far less than the wall time they take from it.
   */
  cpu_ms_per_text: number;
  /** all-MiniLM-L6-v2's CPU per text ÷ this model's: > 1 is cheaper. */
  cpu_vs_baseline: number | null;
  /** Word pieces fed to the model per real word piece: the cost of padding within a batch. */
  padding_overhead: number;
}

interface QueryFigure {
  model: LocalModelName;
  queries: number;
  ms_per_query_p50: number;
  ms_per_query_mean: number;
  cpu_ms_per_query: number;
  speed_vs_baseline: number | null;
  cpu_vs_baseline: number | null;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const round = (x: number, places: number): number => Math.round(x * 10 ** places) / 10 ** places;

async function loadChunkTexts(dir: string, docs: number, wanted: number): Promise<{ texts: string[]; used: number }> {
  const load = loadRealtimeQaDocs(dir);
  if (!load.ok) throw new Error(load.error);
  const now = Date.UTC(2024, 0, 1);
  const texts: string[] = [];
  let used = 0;
  for await (const doc of load.items) {
    if (used >= docs || texts.length >= wanted) break;
    if (!doc.input) continue;
    let text: string;
    try {
      text = normalizeArticle(doc.input, now).text;
    } catch (error) {
      if (error instanceof IntakeRejection) continue;
      throw error;
    }
    used += 1;
    const sentences = splitSentences(text);
    for (const w of sentenceWindows(sentences.length, 5, 2)) {
      texts.push(text.slice(sentences[w.first]!.start, sentences[w.last]!.end));
      if (texts.length >= wanted) break;
    }
  }
  return { texts, used };
}

/** The first `wanted` distinct question sentences of the weekly quizzes (`qa/<year>/*_qa.jsonl`). */
async function loadQuestions(dir: string, wanted: number): Promise<string[]> {
  const questions = new Set<string>();
  if (wanted <= 0) return [];
  for (const year of (await readdir(join(dir, 'qa'))).sort()) {
    for (const file of (await readdir(join(dir, 'qa', year))).sort()) {
      if (!file.endsWith('_qa.jsonl')) continue;
      for await (const line of createInterface({ input: createReadStream(join(dir, 'qa', year, file)) })) {
        if (line.trim() === '') continue;
        const question = (JSON.parse(line) as { question_sentence?: unknown }).question_sentence;
        if (typeof question === 'string' && question.trim() !== '') questions.add(question.trim());
        if (questions.size >= wanted) return [...questions];
      }
    }
  }
  return [...questions];
}

function parseList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) =>
    r.map((cell, c) => (c === 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
  );
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      models: { type: 'string', default: LOCAL_MODEL_NAMES.join(',') },
      docs: { type: 'string', default: '200' },
      chunks: { type: 'string', default: '512' },
      'batch-sizes': { type: 'string', default: '1,16,64' },
      'call-size': { type: 'string', default: '64' },
      rounds: { type: 'string', default: '32' },
      queries: { type: 'string', default: '64' },
      threads: { type: 'string', default: '1' },
    },
    strict: true,
  });
  const models = [...new Set(parseList(values.models))];
  const unknown = models.filter((m) => !(LOCAL_MODEL_NAMES as readonly string[]).includes(m));
  if (models.length === 0 || unknown.length > 0) {
    process.stderr.write(`--models takes a comma-separated list of ${LOCAL_MODEL_NAMES.join(', ')}\n`);
    return 2;
  }
  const batchSizes = parseList(values['batch-sizes']).map(Number);
  const numbers = {
    threads: Number(values.threads),
    callSize: Number(values['call-size']),
    rounds: Number(values.rounds),
    docs: Number(values.docs),
    chunks: Number(values.chunks),
    queries: Number(values.queries),
  };
  const positive = (n: number): boolean => Number.isInteger(n) && n >= 1;
  if (
    batchSizes.length === 0 ||
    !batchSizes.every(positive) ||
    !Object.entries(numbers).every(([key, n]) => positive(n) || (key === 'queries' && n === 0))
  ) {
    process.stderr.write(
      '--batch-sizes, --call-size, --rounds, --docs, --chunks and --threads take positive integers (--queries also 0)\n',
    );
    return 2;
  }
  const dir = devDataPath('realtimeqa');
  if (!dir) {
    process.stdout.write(`embed benchmark ${missingDevDataMessage('realtimeqa')}\n`);
    return 0;
  }
  const { texts, used } = await loadChunkTexts(dir, numbers.docs, numbers.chunks);
  if (texts.length === 0) {
    process.stdout.write('embed benchmark skipped: no usable RealTime QA documents\n');
    return 0;
  }
  const questions = await loadQuestions(dir, numbers.queries);

  const loadBefore = loadavg()[0]!;
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  // Only the cache directory is taken from the environment: model and batch size are set per run.
  const base = embedderConfigFromEnv({
    ...process.env,
    NEON_EMBEDDER: 'local',
    NEON_EMBEDDINGS_MODEL: BASELINE,
    NEON_EMBEDDINGS_BATCH_SIZE: undefined,
  });
  if (base.kind !== 'local') throw new Error('unreachable: local embedder expected');

  // Per model: its files, and the word pieces of every chunk at its own limit (the same vocabulary
  // for all four, but bge-small-en-v1.5 reads up to 512 of them, all-MiniLM-L6-v2 256).
  const prepared = new Map<LocalModelName, { lengths: number[]; tokenizeSeconds: number; files: LocalModelFiles }>();
  for (const model of models as LocalModelName[]) {
    const pin = LOCAL_MODEL_PINS[model];
    const files = await ensureEmbeddingModel(base.cacheDir, pin, log);
    const tokenizer = new ModelTokenizer(JSON.parse(await readFile(files.tokenizer, 'utf8')) as unknown, pin.maxTokens);
    const started = process.hrtime.bigint();
    const lengths = texts.map((t) => tokenizer.encode(t).length);
    prepared.set(model, { lengths, tokenizeSeconds: Number(process.hrtime.bigint() - started) / 1e9, files });
  }

  // Two ways a stage can call: `embed` with exactly one batch (arrival order, each batch padded to its
  // longest text), or with a larger call that the embedder sorts by length before cutting batches.
  const plans = [
    ...batchSizes.map((b) => ({ callSize: b, batchSize: b })),
    ...batchSizes.filter((b) => b < numbers.callSize).map((b) => ({ callSize: numbers.callSize, batchSize: b })),
  ];
  const figures: PlanFigure[] = [];
  for (const { callSize, batchSize } of plans) {
    const taking = (models as LocalModelName[]).filter(
      (m) => batchSize === 1 || !LOCAL_MODEL_PINS[m].oneTextPerInference,
    );
    const embedders = new Map<LocalModelName, Embedder>();
    try {
      for (const model of taking) {
        const embedder = await createEmbedder(
          { ...base, model, batchSize, concurrency: 1, intraOpNumThreads: numbers.threads },
          { obtainModel: async () => prepared.get(model)!.files },
        );
        embedders.set(model, embedder);
        await embedder.embed(texts.slice(0, Math.min(batchSize, 8)));
      }
      const totals = new Map(taking.map((m) => [m, { seconds: 0, cpuMicros: 0, calls: 0 }]));
      // Slices on call boundaries, so every model sees the same calls.
      const callsPerSlice = Math.max(1, Math.ceil(Math.ceil(texts.length / callSize) / numbers.rounds));
      const sliceLength = callsPerSlice * callSize;
      for (let slice = 0, start = 0; start < texts.length; slice++, start += sliceLength) {
        const sliceTexts = texts.slice(start, start + sliceLength);
        const order = taking.map((_, i) => taking[(i + slice) % taking.length]!);
        for (const model of order) {
          const embedder = embedders.get(model)!;
          const total = totals.get(model)!;
          const cpuBefore = process.cpuUsage();
          const started = process.hrtime.bigint();
          for (let s = 0; s < sliceTexts.length; s += callSize) {
            await embedder.embed(sliceTexts.slice(s, s + callSize));
            total.calls += 1;
          }
          total.seconds += Number(process.hrtime.bigint() - started) / 1e9;
          const cpu = process.cpuUsage(cpuBefore);
          total.cpuMicros += cpu.user + cpu.system;
        }
      }
      const baseline = totals.get(BASELINE);
      for (const model of taking) {
        const total = totals.get(model)!;
        const lengths = prepared.get(model)!.lengths;
        let fed = 0;
        let real = 0;
        for (let start = 0; start < lengths.length; start += callSize) {
          const call = lengths.slice(start, start + callSize).sort((a, b) => a - b);
          for (let b = 0; b < call.length; b += batchSize) {
            const batch = call.slice(b, b + batchSize);
            fed += Math.max(...batch) * batch.length;
            real += batch.reduce((sum, n) => sum + n, 0);
          }
        }
        figures.push({
          model,
          call_size: callSize,
          batch_size: batchSize,
          texts: texts.length,
          calls: total.calls,
          seconds: round(total.seconds, 3),
          texts_per_s: round(texts.length / total.seconds, 1),
          ms_per_text: round((total.seconds * 1000) / texts.length, 3),
          speed_vs_baseline: baseline ? round(baseline.seconds / total.seconds, 3) : null,
          cpu_per_wall: round(total.cpuMicros / 1e6 / total.seconds, 2),
          cpu_ms_per_text: round(total.cpuMicros / 1000 / texts.length, 3),
          cpu_vs_baseline: baseline ? round(baseline.cpuMicros / total.cpuMicros, 3) : null,
          padding_overhead: round(fed / real, 2),
        });
      }
    } finally {
      await Promise.all([...embedders.values()].map((e) => e.close()));
    }
  }

  // Questions one per call, as queries, the models interleaved question by question.
  const queryFigures: QueryFigure[] = [];
  if (questions.length > 0) {
    const embedders = new Map<LocalModelName, Embedder>();
    try {
      for (const model of models as LocalModelName[]) {
        const embedder = await createEmbedder(
          { ...base, model, batchSize: 1, concurrency: 1, intraOpNumThreads: numbers.threads },
          { obtainModel: async () => prepared.get(model)!.files },
        );
        embedders.set(model, embedder);
        await embedder.embed(questions.slice(0, 2), 'query');
      }
      const times = new Map((models as LocalModelName[]).map((m) => [m, [] as number[]]));
      const cpuMicros = new Map((models as LocalModelName[]).map((m) => [m, 0]));
      for (const [i, question] of questions.entries()) {
        for (let j = 0; j < models.length; j++) {
          const model = models[(i + j) % models.length] as LocalModelName;
          const cpuBefore = process.cpuUsage();
          const started = process.hrtime.bigint();
          await embedders.get(model)!.embed([question], 'query');
          times.get(model)!.push(Number(process.hrtime.bigint() - started) / 1e6);
          const cpu = process.cpuUsage(cpuBefore);
          cpuMicros.set(model, cpuMicros.get(model)! + cpu.user + cpu.system);
        }
      }
      const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
      const baseline = times.get(BASELINE);
      const baselineCpu = cpuMicros.get(BASELINE);
      for (const model of models as LocalModelName[]) {
        const ms = times.get(model)!;
        const cpu = cpuMicros.get(model)!;
        queryFigures.push({
          model,
          queries: ms.length,
          ms_per_query_p50: round(
            percentile(
              [...ms].sort((a, b) => a - b),
              50,
            ),
            2,
          ),
          ms_per_query_mean: round(mean(ms), 2),
          cpu_ms_per_query: round(cpu / 1000 / ms.length, 2),
          speed_vs_baseline: baseline ? round(mean(baseline) / mean(ms), 3) : null,
          cpu_vs_baseline: baselineCpu === undefined ? null : round(baselineCpu / cpu, 3),
        });
      }
    } finally {
      await Promise.all([...embedders.values()].map((e) => e.close()));
    }
  }

  const chars = texts.map((t) => t.length).sort((a, b) => a - b);
  const modelFacts = (models as LocalModelName[]).map((model) => {
    const pin: LocalModelPin = LOCAL_MODEL_PINS[model];
    const { lengths, tokenizeSeconds } = prepared.get(model)!;
    const sorted = [...lengths].sort((a, b) => a - b);
    return {
      model,
      artifact: `${pin.groupId}:${pin.artifactId}:${pin.version}`,
      pooling: pin.pooling,
      max_tokens: pin.maxTokens,
      query_instruction: pin.queryInstruction ?? null,
      one_text_per_inference: pin.oneTextPerInference,
      word_pieces_p50: percentile(sorted, 50),
      word_pieces_p95: percentile(sorted, 95),
      truncated: lengths.filter((n) => n >= pin.maxTokens).length,
      tokenize_texts_per_s: Math.round(texts.length / tokenizeSeconds),
    };
  });
  const document = {
    runtime: 'onnxruntime-node, one inference worker per model, measured interleaved',
    intra_op_threads: numbers.threads,
    rounds: numbers.rounds,
    cores: availableParallelism(),
    /** One-minute load average before and after: other work on the machine the figures shared it with. */
    load_average: { before: round(loadBefore, 2), after: round(loadavg()[0]!, 2) },
    baseline: BASELINE,
    data: {
      source: 'realtimeqa docs (first documents intake accepts), chunk windows of 5 sentences, overlap 2',
      documents: used,
      chunks: texts.length,
      chars_p50: percentile(chars, 50),
      chars_p95: percentile(chars, 95),
      questions: questions.length,
    },
    models: modelFacts,
    runs: figures,
    queries: queryFigures,
  };
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n\n`);

  const ratio = (r: number | null): string => (r === null ? '–' : `${r.toFixed(2)}×`);
  const runRows = [
    ['call', 'batch', 'model', 'texts/s', 'ms/text', 'speed vs', 'CPU ms/text', 'CPU vs', 'cpu/wall', 'padding'],
    ...figures.map((f) => [
      String(f.call_size),
      String(f.batch_size),
      f.model,
      f.texts_per_s.toFixed(1),
      f.ms_per_text.toFixed(2),
      ratio(f.speed_vs_baseline),
      f.cpu_ms_per_text.toFixed(2),
      ratio(f.cpu_vs_baseline),
      f.cpu_per_wall.toFixed(2),
      `${f.padding_overhead.toFixed(2)}×`,
    ]),
  ];
  const queryRows = [
    ['queries', '', 'model', 'ms p50', 'ms mean', 'speed vs', 'CPU ms', 'CPU vs'],
    ...queryFigures.map((q) => [
      String(q.queries),
      '',
      q.model,
      q.ms_per_query_p50.toFixed(2),
      q.ms_per_query_mean.toFixed(2),
      ratio(q.speed_vs_baseline),
      q.cpu_ms_per_query.toFixed(2),
      ratio(q.cpu_vs_baseline),
    ]),
  ];
  process.stdout.write(
    [
      `${texts.length} chunks from ${used} RealTime QA documents; ${numbers.threads} intra-op thread(s), one worker per model, models interleaved over ${numbers.rounds} slices`,
      `${document.cores} cores, load average ${document.load_average.before} before, ${document.load_average.after} after; ratios are to ${BASELINE} (> 1: faster or cheaper)`,
      ...modelFacts.map(
        (m) =>
          `${m.model}: ${m.pooling} pooling, ≤ ${m.max_tokens} word pieces (chunks p50 ${m.word_pieces_p50}, p95 ${m.word_pieces_p95}, truncated ${m.truncated}); tokenisation alone ${m.tokenize_texts_per_s} texts/s`,
      ),
      '',
      ...table(runRows),
      '',
      ...(queryFigures.length > 0
        ? [`${questions.length} RealTime QA questions, one per call, as queries:`, ...table(queryRows), '']
        : []),
    ].join('\n'),
  );
  const path = writeBenchResults('embed', document);
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

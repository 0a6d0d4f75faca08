/**
 * `npm run bench -- embed`: texts per second of the local sentence-embedding model on one core
 * (one inference worker, intraOpNumThreads 1), over real chunk-sized texts: the first RealTime QA
 * documents (read at run time, never copied), normalised by intake, split into sentences by markup's
 * splitter and cut into the chunk stage's windows (5 sentences, overlap 2). At each batch size b
 * the chunks are embedded in arrival order, b texts per `embed` call (each batch padded to its
 * longest text); and, for b below the call size, in calls of `--call-size` texts that the embedder
 * sorts by length before cutting batches of b (less padding).
 *
 *   npm run bench -- embed [--docs 200] [--chunks 512] [--batch-sizes 1,16,64] [--call-size 64]
 *                          [--model all-MiniLM-L6-v2] [--threads 1]
 *
 * Downloads the model first if `neon infra prepare` has not. Skips (exit 0) without the data.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ensureEmbeddingModel } from '../infra/models/download-embedding-model.js';
import { sentenceWindows } from '../processors/chunk-article.js';
import { createEmbedder } from '../processors/embed/create-embedder.js';
import { embedderConfigFromEnv } from '../processors/embed/embedder-config.js';
import { LOCAL_MODEL_NAMES, LOCAL_MODEL_PINS, type LocalModelName } from '../processors/embed/model-pins.js';
import { ModelTokenizer } from '../processors/embed/tokenize-for-model.js';
import { IntakeRejection } from '../processors/intake/article-input.js';
import { loadRealtimeQaDocs } from '../processors/intake/load-realtimeqa.js';
import { normalizeArticle } from '../processors/intake/normalize-article.js';
import { splitSentences } from '../processors/markup/split-sentences.js';
import { devDataPath, missingDevDataMessage } from '../eval/dev-data.js';
import { writeBenchResults } from './results.js';

interface BatchFigure {
  /** Texts per `embed` call. */
  call_size: number;
  /** Texts per inference (the embedder's batch size). */
  batch_size: number;
  texts: number;
  calls: number;
  seconds: number;
  texts_per_s: number;
  ms_per_text: number;
  /** CPU seconds of the whole process (main thread + inference worker) per wall second. */
  cpu_per_wall: number;
  /** Word pieces fed to the model per real word piece: the cost of padding within a batch. */
  padding_overhead: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

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

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      docs: { type: 'string', default: '200' },
      chunks: { type: 'string', default: '512' },
      'batch-sizes': { type: 'string', default: '1,16,64' },
      model: { type: 'string', default: 'all-MiniLM-L6-v2' },
      threads: { type: 'string', default: '1' },
      'call-size': { type: 'string', default: '64' },
    },
    strict: true,
  });
  const model = values.model as LocalModelName;
  if (!(LOCAL_MODEL_NAMES as readonly string[]).includes(model)) {
    process.stderr.write(`--model must be one of ${LOCAL_MODEL_NAMES.join(', ')}\n`);
    return 2;
  }
  const batchSizes = values['batch-sizes'].split(',').map(Number);
  const threads = Number(values.threads);
  if (batchSizes.some((b) => !Number.isInteger(b) || b < 1) || !Number.isInteger(threads) || threads < 1) {
    process.stderr.write('--batch-sizes and --threads take positive integers\n');
    return 2;
  }
  const dir = devDataPath('realtimeqa');
  if (!dir) {
    process.stdout.write(`embed benchmark ${missingDevDataMessage('realtimeqa')}\n`);
    return 0;
  }
  const { texts, used } = await loadChunkTexts(dir, Number(values.docs), Number(values.chunks));
  if (texts.length === 0) {
    process.stdout.write('embed benchmark skipped: no usable RealTime QA documents\n');
    return 0;
  }

  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const base = embedderConfigFromEnv({ ...process.env, NEON_EMBEDDER: 'local', NEON_EMBEDDINGS_MODEL: model });
  if (base.kind !== 'local') throw new Error('unreachable: local embedder expected');
  const pin = LOCAL_MODEL_PINS[model];
  const files = await ensureEmbeddingModel(base.cacheDir, pin, log);

  const tokenizer = new ModelTokenizer(JSON.parse(await readFile(files.tokenizer, 'utf8')) as unknown, pin.maxTokens);
  const tokenStarted = process.hrtime.bigint();
  const lengths = texts.map((t) => tokenizer.encode(t).length);
  const tokenizeSeconds = Number(process.hrtime.bigint() - tokenStarted) / 1e9;
  const sortedLengths = [...lengths].sort((a, b) => a - b);
  const chars = texts.map((t) => t.length).sort((a, b) => a - b);

  // Two ways a stage can call: `embed` with exactly one batch (arrival order, each batch padded to its
  // longest text), or with a larger call that the embedder sorts by length before cutting batches.
  const callSize = Number(values['call-size']);
  const plans = [
    ...batchSizes.map((b) => ({ callSize: b, batchSize: b })),
    ...batchSizes.filter((b) => b < callSize).map((b) => ({ callSize, batchSize: b })),
  ];
  const figures: BatchFigure[] = [];
  for (const { callSize: size, batchSize } of plans) {
    const embedder = await createEmbedder(
      { ...base, batchSize, concurrency: 1, intraOpNumThreads: threads },
      { obtainModel: async () => files },
    );
    try {
      await embedder.embed(texts.slice(0, Math.min(batchSize, 8)));
      let fed = 0;
      let real = 0;
      let calls = 0;
      const cpuBefore = process.cpuUsage();
      const started = process.hrtime.bigint();
      for (let start = 0; start < texts.length; start += size) {
        const call = lengths.slice(start, start + size).sort((a, b) => a - b);
        for (let b = 0; b < call.length; b += batchSize) {
          const batch = call.slice(b, b + batchSize);
          fed += Math.max(...batch) * batch.length;
          real += batch.reduce((sum, n) => sum + n, 0);
        }
        await embedder.embed(texts.slice(start, start + size));
        calls += 1;
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const cpu = process.cpuUsage(cpuBefore);
      figures.push({
        call_size: size,
        batch_size: batchSize,
        texts: texts.length,
        calls,
        seconds: Math.round(seconds * 1000) / 1000,
        texts_per_s: Math.round((texts.length / seconds) * 10) / 10,
        ms_per_text: Math.round((seconds * 1e6) / texts.length) / 1000,
        cpu_per_wall: Math.round(((cpu.user + cpu.system) / 1e6 / seconds) * 100) / 100,
        padding_overhead: Math.round((fed / real) * 100) / 100,
      });
    } finally {
      await embedder.close();
    }
  }

  const data = {
    source: 'realtimeqa docs (first documents intake accepts), chunk windows of 5 sentences, overlap 2',
    documents: used,
    chunks: texts.length,
    chars_p50: percentile(chars, 50),
    chars_p95: percentile(chars, 95),
    word_pieces_p50: percentile(sortedLengths, 50),
    word_pieces_p95: percentile(sortedLengths, 95),
    truncated_at_256: lengths.filter((n) => n >= pin.maxTokens).length,
  };
  const rows = [
    ['call', 'batch', 'texts', 'seconds', 'texts/s', 'ms/text', 'cpu/wall', 'padding'],
    ...figures.map((f) => [
      String(f.call_size),
      String(f.batch_size),
      String(f.texts),
      f.seconds.toFixed(2),
      f.texts_per_s.toFixed(1),
      f.ms_per_text.toFixed(2),
      f.cpu_per_wall.toFixed(2),
      `${f.padding_overhead.toFixed(2)}×`,
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const table = rows.map((r) => r.map((cell, c) => cell.padStart(widths[c]!)).join('  '));
  const document = {
    model: `${pin.name} (${pin.artifactId}:${pin.version})`,
    runtime: 'onnxruntime-node on one worker thread',
    intra_op_threads: threads,
    data,
    tokenize_texts_per_s: Math.round(texts.length / tokenizeSeconds),
    runs: figures,
  };
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n\n`);
  process.stdout.write(
    [
      `${pin.name}, ${threads} intra-op thread(s), one worker; ${data.chunks} chunks from ${data.documents} RealTime QA documents`,
      `word pieces per chunk: p50 ${data.word_pieces_p50}, p95 ${data.word_pieces_p95}; truncated at ${pin.maxTokens}: ${data.truncated_at_256}`,
      `tokenisation alone (main thread): ${document.tokenize_texts_per_s} texts/s`,
      '',
      ...table,
      '',
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

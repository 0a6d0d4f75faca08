/**
 * Near-duplicate search over chunks of real news text: MinHash-LSH (what the dedupe stage does)
 * against exact pairwise trigram Jaccard, at growing n.
 *
 *   npm run bench -- dedupe [--sizes 1000,10000,100000] [--threshold 0.5] [--bands 30 --rows 3]
 *                           [--sample-rows 200] [--brute-force-max 10000] [--sentences 5] [--overlap 1]
 *
 * Data: the RealTime QA search-result documents (read at run time through devkit/dev-data.ts, never
 * copied), each URL once, dated ones in publication order, split into sentences by a simple regex
 * and cut into windows of `sentences` sentences sharing `overlap` (chunk-article.ts's windows). The
 * first n chunks make the corpus of size n. Skips (exit 0) when the data is absent.
 *
 * Per n:
 *  - lsh_s: signatures (k permutations) + band keys + bucket grouping + the real Jaccard of every
 *    candidate pair. Shingling is the same for both methods and is reported apart (shingle_s).
 *  - exact_s: the real Jaccard of all n(n−1)/2 pairs. Up to --brute-force-max it is run in full;
 *    above, every pair of --sample-rows random rows with all other rows is timed and the time per
 *    pair is multiplied by n(n−1)/2 (`exact_extrapolated: true`). Where both are possible the
 *    sampled estimate is reported next to the measured time, to show how good the estimate is.
 *  - recall: of the pairs with Jaccard ≥ threshold, the share LSH reports. The true pairs come from
 *    an exact prefix-filter join (devkit/similarity-join.ts): any pair at or above the
 *    threshold shares a shingle among each side's rarest |x| − ⌈t|x|⌉ + 1, so indexing those and
 *    verifying every candidate with the real Jaccard finds all of them; it is checked against the
 *    brute force wherever that runs in full. LSH never reports a false pair (it verifies), so
 *    precision is 1 by construction.
 *  - stream_filter_s: the NearDuplicateFilter of the dedupe stage offered the n chunks one by one
 *    (7-day event-time window, chunk time = publication date): the per-chunk path including shingling.
 */
import { parseArgs } from 'node:util';
import { sentenceWindows } from '../processors/chunk/chunk-article.js';
import { NearDuplicateFilter } from '../processors/dedupe/drop-near-duplicates.js';
import { bandKeys, candidateProbability, chooseBandPlan, type BandPlan } from '../processors/dedupe/lsh-bands.js';
import { MinHasher } from '../processors/dedupe/minhash.js';
import {
  bruteForceSimilarPairs,
  exactSimilarPairs,
  lshSimilarPairs,
  pairKey,
  type SimilarPair,
} from '../devkit/similarity-join.js';
import { jaccard, shingles } from '../processors/dedupe/trigram-shingles.js';
import type { Chunk } from '../schemas/records.generated.js';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';
import { readRealtimeQaDocs } from '../devkit/realtimeqa-documents.js';
import { writeBenchResults } from './results.js';

interface Settings {
  sizes: number[];
  threshold: number;
  plan: BandPlan;
  sampleRows: number;
  bruteForceMax: number;
  sentences: number;
  overlap: number;
}

interface BenchChunk {
  doc: number;
  url: string;
  t: number;
  text: string;
}

interface Run {
  n: number;
  lsh_s: number;
  lsh_signature_s: number;
  lsh_join_s: number;
  exact_s: number;
  exact_extrapolated: boolean;
  method: string;
  exact_sampled_estimate_s: number;
  speedup: number;
  shingle_s: number;
  speedup_with_shingling: number;
  recall: number;
  pairs_above_threshold: number;
  lsh_pairs: number;
  lsh_candidates: number;
  recall_cross_document: number;
  pairs_above_threshold_cross_document: number;
  ground_truth_s: number;
  ground_truth_candidates: number;
  ground_truth_matches_brute_force: boolean | null;
  stream_filter_s: number;
  stream_filter_chunks_per_s: number;
  stream_duplicates: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

function fail(message: string): never {
  process.stderr.write(`dedupe bench: ${message}\n`);
  process.exit(2);
}

function positiveInteger(value: string, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer, got "${value}"`);
  return n;
}

function readSettings(argv: string[]): Settings {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        sizes: { type: 'string', default: '1000,10000,100000' },
        threshold: { type: 'string', default: '0.5' },
        bands: { type: 'string' },
        rows: { type: 'string' },
        'sample-rows': { type: 'string', default: '200' },
        'brute-force-max': { type: 'string', default: '10000' },
        sentences: { type: 'string', default: '5' },
        overlap: { type: 'string', default: '1' },
      },
    }).values;
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  const threshold = Number(parsed.threshold);
  if (!(threshold > 0 && threshold <= 1)) fail(`--threshold must be in (0, 1], got "${parsed.threshold}"`);
  if ((parsed.bands === undefined) !== (parsed.rows === undefined)) fail('--bands and --rows go together');
  const plan =
    parsed.bands !== undefined && parsed.rows !== undefined
      ? { bands: positiveInteger(parsed.bands, 'bands'), rows: positiveInteger(parsed.rows, 'rows') }
      : chooseBandPlan(threshold);
  const sentences = positiveInteger(parsed.sentences, 'sentences');
  const overlap = Number(parsed.overlap);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= sentences) {
    fail(`--overlap must be an integer in [0, ${sentences - 1}]`);
  }
  return {
    sizes: parsed.sizes
      .split(',')
      .map((s) => positiveInteger(s.trim(), 'sizes'))
      .sort((a, b) => a - b),
    threshold,
    plan,
    sampleRows: positiveInteger(parsed['sample-rows'], 'sample-rows'),
    bruteForceMax: positiveInteger(parsed['brute-force-max'], 'brute-force-max'),
    sentences,
    overlap,
  };
}

/**
 * Good enough for cutting benchmark windows: paragraphs at line breaks, sentences after . ! ? (and a
 * closing quote or bracket) before an upper-case letter, digit or opening quote. Pieces without a
 * letter or digit are dropped.
 */
function splitSentences(text: string): string[] {
  return text
    .split(/\n+/)
    .flatMap((paragraph) => paragraph.split(/(?<=[.!?]["”’')\]]*)\s+(?=["“‘'([]?[\p{Lu}\d])/u))
    .map((s) => s.trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
}

function cutChunks(
  dir: string,
  settings: Settings,
  wanted: number,
): { chunks: BenchChunk[]; documents: number; used: number } {
  const { docs } = readRealtimeQaDocs(dir);
  const dated = docs
    .map((doc, i) => ({
      doc,
      i,
      t: doc.publishDate === null ? Number.NaN : Date.parse(doc.publishDate.replace(/\//g, '-')),
    }))
    .filter((d) => Number.isFinite(d.t))
    .sort((a, b) => a.t - b.t || (a.doc.url < b.doc.url ? -1 : 1));
  const chunks: BenchChunk[] = [];
  let used = 0;
  for (const { doc, i, t } of dated) {
    if (chunks.length >= wanted) break;
    used++;
    const sentences = splitSentences(doc.text);
    for (const w of sentenceWindows(sentences.length, settings.sentences, settings.overlap)) {
      chunks.push({ doc: i, url: doc.url, t, text: sentences.slice(w.first, w.last + 1).join(' ') });
      if (chunks.length >= wanted) break;
    }
  }
  return { chunks, documents: docs.length, used };
}

/** mulberry32: a seeded PRNG, so the sampled rows are the same from run to run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

/** Seconds per pair of the brute force, from `rows` random rows compared with every other row. */
function sampledSecondsPerPair(sets: readonly Uint32Array[], rows: number): number {
  const random = seededRandom(sets.length);
  const picked = Array.from({ length: Math.min(rows, sets.length) }, () => Math.floor(random() * sets.length));
  let sink = 0;
  let compared = 0;
  const started = performance.now();
  for (const r of picked) {
    const row = sets[r]!;
    for (let j = 0; j < sets.length; j++) {
      if (j === r) continue;
      sink += jaccard(row, sets[j]!);
      compared++;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  // Keeps the loop's result alive so the comparisons cannot be optimised away.
  if (sink < 0) console.log(sink);
  return seconds / compared;
}

function keyed(pairs: readonly SimilarPair[], n: number): Set<number> {
  return new Set(pairs.map((p) => pairKey(p.a, p.b, n)));
}

function recallOf(found: ReadonlySet<number>, truth: ReadonlySet<number>): number {
  if (truth.size === 0) return 1;
  let hit = 0;
  for (const k of truth) if (found.has(k)) hit++;
  return hit / truth.size;
}

function seconds(since: number): number {
  return (performance.now() - since) / 1000;
}

function round(x: number, digits = 3): number {
  return Number(x.toPrecision(digits));
}

function streamFilter(chunks: readonly BenchChunk[]): { seconds: number; duplicates: number } {
  const filter = new NearDuplicateFilter({ windowMs: 7 * DAY_MS });
  let duplicates = 0;
  const started = performance.now();
  chunks.forEach((c, i) => {
    const id = `doc${c.doc}`;
    const chunk: Chunk = {
      id: `${id}:v1:${i}`,
      article_id: id,
      index: i,
      text: c.text,
      title: '',
      marked_text: c.text,
      entity_ids: [],
      entities: [],
      t: c.t,
      provenance: [{ article_id: id, url: c.url, source: 'realtimeqa', published_at: c.t }],
    };
    if (filter.offer(chunk).kind === 'duplicate') duplicates++;
  });
  return { seconds: seconds(started), duplicates };
}

function measure(
  chunks: readonly BenchChunk[],
  allSets: readonly Uint32Array[],
  shingleSeconds: number,
  settings: Settings,
): Run {
  const n = chunks.length;
  const sets = allSets.slice(0, n);
  const { plan, threshold } = settings;

  const lshStarted = performance.now();
  const hasher = new MinHasher(plan.bands * plan.rows);
  const buffer = new Uint32Array(plan.bands * plan.rows);
  const keys = sets.map((s) => bandKeys(hasher.signature(s, buffer), plan));
  const signatureSeconds = seconds(lshStarted);
  const joinStarted = performance.now();
  const lsh = lshSimilarPairs(sets, keys, threshold);
  const joinSeconds = seconds(joinStarted);
  const lshSeconds = signatureSeconds + joinSeconds;

  const truthStarted = performance.now();
  const truth = exactSimilarPairs(sets, threshold);
  const truthSeconds = seconds(truthStarted);

  const allPairs = (n * (n - 1)) / 2;
  const estimate = sampledSecondsPerPair(sets, settings.sampleRows) * allPairs;
  let exactSeconds = estimate;
  let extrapolated = true;
  let matches: boolean | null = null;
  let method = `real Jaccard of ${Math.min(settings.sampleRows, n)} random rows with all other rows, time per pair × n(n−1)/2`;
  if (n <= settings.bruteForceMax) {
    const started = performance.now();
    const brute = bruteForceSimilarPairs(sets, threshold);
    exactSeconds = seconds(started);
    extrapolated = false;
    method = 'real Jaccard of all n(n−1)/2 pairs';
    const bruteKeys = keyed(brute.pairs, n);
    const truthKeys = keyed(truth.pairs, n);
    matches = bruteKeys.size === truthKeys.size && [...bruteKeys].every((k) => truthKeys.has(k));
  }

  const truthKeys = keyed(truth.pairs, n);
  const lshKeys = keyed(lsh.pairs, n);
  const crossDoc = (p: SimilarPair): boolean => chunks[p.a]!.doc !== chunks[p.b]!.doc;
  const truthCross = keyed(truth.pairs.filter(crossDoc), n);

  const stream = streamFilter(chunks);
  return {
    n,
    lsh_s: round(lshSeconds, 4),
    lsh_signature_s: round(signatureSeconds, 4),
    lsh_join_s: round(joinSeconds, 4),
    exact_s: round(exactSeconds, 4),
    exact_extrapolated: extrapolated,
    method,
    exact_sampled_estimate_s: round(estimate, 4),
    speedup: round(exactSeconds / lshSeconds, 4),
    shingle_s: round(shingleSeconds, 4),
    speedup_with_shingling: round((exactSeconds + shingleSeconds) / (lshSeconds + shingleSeconds), 4),
    recall: round(recallOf(lshKeys, truthKeys), 5),
    pairs_above_threshold: truthKeys.size,
    lsh_pairs: lshKeys.size,
    lsh_candidates: lsh.candidates,
    recall_cross_document: round(recallOf(lshKeys, truthCross), 5),
    pairs_above_threshold_cross_document: truthCross.size,
    ground_truth_s: round(truthSeconds, 4),
    ground_truth_candidates: truth.candidates,
    ground_truth_matches_brute_force: matches,
    stream_filter_s: round(stream.seconds, 4),
    stream_filter_chunks_per_s: Math.round(n / stream.seconds),
    stream_duplicates: stream.duplicates,
  };
}

function table(runs: readonly Run[]): string {
  const header = [
    'n',
    'LSH s',
    'exact s',
    'speedup',
    'recall',
    'pairs≥t',
    'cross-doc',
    'recall x-doc',
    'candidates',
    'stream ch/s',
  ];
  const rows = runs.map((r) => [
    String(r.n),
    r.lsh_s.toFixed(3),
    `${r.exact_s.toFixed(r.exact_s < 10 ? 3 : 0)}${r.exact_extrapolated ? '*' : ''}`,
    `${Math.round(r.speedup)}×`,
    r.recall.toFixed(4),
    String(r.pairs_above_threshold),
    String(r.pairs_above_threshold_cross_document),
    r.recall_cross_document.toFixed(4),
    String(r.lsh_candidates),
    String(r.stream_filter_chunks_per_s),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  const line = (cells: string[]): string => cells.map((cell, c) => cell.padStart(widths[c]!)).join('  ');
  return [line(header), ...rows.map(line), '* extrapolated from a sample of rows (see method)'].join('\n');
}

function main(): void {
  const settings = readSettings(process.argv.slice(2));
  const dir = devDataPath('realtimeqa');
  if (dir === undefined) {
    console.log(`dedupe bench skipped: data absent — ${missingDevDataMessage('realtimeqa')}`);
    return;
  }
  const wanted = settings.sizes.at(-1)!;
  const { chunks, documents, used } = cutChunks(dir, settings, wanted);
  const sizes = settings.sizes.filter((n) => n <= chunks.length);
  const shortfall = chunks.length < wanted;
  if (shortfall) {
    console.log(`only ${chunks.length} chunks could be cut from the data; n = ${wanted} runs on ${chunks.length}`);
    sizes.push(chunks.length);
  }

  // Shingles are computed once; the time to shingle each prefix is read off the way.
  const shingleSecondsAt = new Map<number, number>();
  const sets: Uint32Array[] = [];
  const started = performance.now();
  for (const c of chunks) {
    sets.push(shingles(c.text));
    if (sizes.includes(sets.length)) shingleSecondsAt.set(sets.length, seconds(started));
  }

  const runs: Run[] = [];
  for (const n of [...new Set(sizes)]) {
    const run = measure(chunks.slice(0, n), sets, shingleSecondsAt.get(n) ?? 0, settings);
    runs.push(run);
    console.log(JSON.stringify(run));
  }
  const k = settings.plan.bands * settings.plan.rows;
  const figures = {
    data: {
      source: 'RealTime QA search-result documents (docs/*/*.jsonl.gz), each URL once, dated ones in publication order',
      documents,
      documents_used: used,
      chunks: chunks.length,
      sentences_per_chunk: settings.sentences,
      overlap: settings.overlap,
      sentence_splitter: 'regex: line breaks, and [.!?] (+ closing quote) before an upper-case letter, digit or quote',
      shortfall,
    },
    settings: {
      threshold: settings.threshold,
      shingle: 'word3',
      bands: settings.plan.bands,
      rows: settings.plan.rows,
      num_hashes: k,
      candidate_probability_at_threshold: round(candidateProbability(settings.threshold, settings.plan), 5),
      sample_rows: settings.sampleRows,
      brute_force_max: settings.bruteForceMax,
    },
    ground_truth:
      'exact prefix-filter join (All-Pairs): shingles ordered rarest first; a pair with Jaccard ≥ t shares one of ' +
      "each side's first |x| − ⌈t|x|⌉ + 1 shingles, so indexing those and verifying every candidate with the real " +
      'Jaccard finds every pair ≥ t; checked against the brute force wherever that runs in full',
    runs,
  };
  const path = writeBenchResults('dedupe', figures);
  console.log(`\n${table(runs)}\n\nwritten to ${path}`);
}

main();

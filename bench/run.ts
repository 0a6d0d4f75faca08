/**
 * `npm run bench -- <name> [options]`: runs one benchmark by name. With no name (or only options)
 * it runs the stage-runtime pass-through benchmark, as before names existed.
 */
import { fileURLToPath } from 'node:url';

const BENCHMARKS: Record<string, { file: string; about: string }> = {
  passthrough: { file: './passthrough-throughput.ts', about: 'stage runtime vs bare kafkajs loop, Kafka → ES' },
  dedupe: { file: './dedupe.ts', about: 'MinHash-LSH vs exact pairwise trigram Jaccard at growing n (real text)' },
  stages: { file: './stage-throughput.ts', about: 'articles/s of intake, markup, chunk and dedupe on one core' },
  spikes: { file: './spikes.ts', about: 'spike detector mentions/s, state per entity, and the stage on Kafka' },
  query: { file: './query.ts', about: 'retrieval p50/p95/p99 per strategy at growing n vs raw ES kNN' },
  embed: {
    file: './embed.ts',
    about: 'texts/s of the four local embedding models on one core, ratios to all-MiniLM-L6-v2',
  },
  extract: { file: './extract.ts', about: 'LLM calls, tokens and tuples per 1k articles for M1/M2, gated vs all' },
  pipeline: { file: './pipeline.ts', about: 'articles/s + freshness to searchable on Kafka + ES vs ceiling, stages' },
  soak: { file: './soak.ts', about: 'minutes of sustained ingest: heap/RSS slope and growth, lag slope, articles/s' },
};

function usage(): string {
  const rows = Object.entries(BENCHMARKS).map(([name, b]) => `  ${name.padEnd(12)} ${b.about}`);
  return ['usage: npm run bench -- <name> [options]', '', 'benchmarks:', ...rows, ''].join('\n');
}

const [first, ...rest] = process.argv.slice(2);
if (first === '--help' || first === '-h' || first === 'help') {
  process.stdout.write(usage());
  process.exit(0);
}
const named = first !== undefined && !first.startsWith('-');
const name = named ? first : 'passthrough';
const bench = BENCHMARKS[name];
if (!bench) {
  process.stderr.write(`unknown benchmark "${name}"\n\n${usage()}`);
  process.exit(2);
}
const file = fileURLToPath(new URL(bench.file, import.meta.url));
// Each benchmark reads its options from process.argv, as when run on its own.
process.argv = [process.argv[0] ?? 'node', file, ...(named ? rest : process.argv.slice(2))];
await import(file);

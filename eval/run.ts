/**
 * `npm run eval -- <name> [options]`: runs one quality measurement on the development data by name.
 * Each reads `../shared/data` (or NEON_DEV_DATA) at run time and says so and exits cleanly when it
 * is absent.
 */
import { fileURLToPath } from 'node:url';

const EVALUATIONS: Record<string, { file: string; about: string }> = {
  realtimeqa: {
    file: './realtimeqa.ts',
    about: 'retrieval and answers per configuration and store on RealTime QA, as of each question date',
  },
  judge: {
    file: './judge.ts',
    about: "NEON's LLM judge on one configuration's RealTime QA answers (needs NEON_LLM_*)",
  },
  spikes: { file: './spike-report.ts', about: 'spike episodes found in Wikipedia Current Events 2025 Q1' },
  markup: { file: './markup-quality.ts', about: 'entity markup against Wikipedia links (Current Events 2025 Q1)' },
  fusion: {
    file: './fusion-embeddings.ts',
    about: 'entity fusion by name embeddings (with context) against the links',
  },
  dedupe: { file: './dedupe-quality.ts', about: 'document near-duplicates against the derived RealTime QA pairs' },
  intake: { file: './intake-report.ts', about: 'what intake accepts and refuses on the RealTime QA documents' },
  'question-time': { file: './question-time.ts', about: 'time words of questions: parse accuracy and META RTP' },
  statements: { file: './statement-quality.ts', about: 'offline extractor statements: verbs, length, answers' },
};

function usage(): string {
  const rows = Object.entries(EVALUATIONS).map(([name, e]) => `  ${name.padEnd(12)} ${e.about}`);
  return ['usage: npm run eval -- <name> [options]', '', 'evaluations:', ...rows, ''].join('\n');
}

const [name, ...rest] = process.argv.slice(2);
if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
  process.stdout.write(usage());
  process.exit(name === undefined ? 2 : 0);
}
const evaluation = EVALUATIONS[name];
if (!evaluation) {
  process.stderr.write(`unknown evaluation "${name}"\n\n${usage()}`);
  process.exit(2);
}
const file = fileURLToPath(new URL(evaluation.file, import.meta.url));
process.argv = [process.argv[0] ?? 'node', file, ...rest];
await import(file);

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { UsageError } from '../../infra/cli-errors.js';

/** The checkout's own `bench/run.ts` / `eval/run.ts`, from the source tree or from `dist/bin/commands/`. */
function scriptOf(folder: 'bench' | 'eval'): string {
  for (const relative of [`../../${folder}/run.ts`, `../../../${folder}/run.ts`]) {
    const path = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new UsageError(`neon ${folder} needs the source checkout (its ${folder}/ folder was not found)`);
}

/** Runs a TypeScript script of the checkout with tsx (a development dependency) and passes its exit code on. */
async function runScript(folder: 'bench' | 'eval', args: string[]): Promise<void> {
  const script = scriptOf(folder);
  let tsx: string;
  try {
    tsx = createRequire(script).resolve('tsx');
  } catch {
    throw new UsageError(
      `neon ${folder} runs TypeScript sources with tsx: install the development dependencies (npm install)`,
    );
  }
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', tsx, script, ...args], { stdio: 'inherit' });
    const forward = (signal: NodeJS.Signals): void => void child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('error', reject);
    child.on('exit', (exit, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(exit ?? (signal === 'SIGINT' ? 130 : 1));
    });
  });
  process.exitCode = code;
}

/**
 * `neon eval <name>` and `neon bench <name>` — the quality measurements and benchmarks of the
 * checkout (`npm run eval` / `npm run bench`), by name; `--help` after the name lists each one's
 * options, no name lists them all.
 */
export function registerToolCommands(program: Command): void {
  program
    .command('eval')
    .description('quality on the development data: realtimeqa, spikes, markup, dedupe, intake (no name: list them)')
    .argument('[name]', 'which evaluation')
    .argument('[options...]', 'its options, e.g. --questions 100')
    .allowUnknownOption()
    .helpOption(false)
    .action(async (name: string | undefined, options: string[]) => {
      await runScript('eval', name === undefined ? ['help'] : [name, ...options]);
    });
  program
    .command('bench')
    .description(
      'benchmarks: passthrough, dedupe, stages, spikes, query, embed, extract, pipeline (no name: list them)',
    )
    .argument('[name]', 'which benchmark')
    .argument('[options...]', 'its options, e.g. --sizes 10000,100000')
    .allowUnknownOption()
    .helpOption(false)
    .action(async (name: string | undefined, options: string[]) => {
      await runScript('bench', name === undefined ? ['help'] : [name, ...options]);
    });
}

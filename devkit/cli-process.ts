import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface CliRun {
  output(): string;
  running(): boolean;
  readonly exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
  /** Resolves with the first match of `pattern` in the output; rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
}

/**
 * `neon <args>` as a user runs it: a real subprocess of the CLI, from the checkout's sources (with
 * tsx), or with `compiled` from `dist/` as the container image runs it (build it first: buildDist).
 */
export function runNeon(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  options: { compiled?: boolean } = {},
): CliRun {
  let output = '';
  let running = true;
  const entry = options.compiled === true ? ['dist/bin/neon.js'] : ['--import', 'tsx', 'bin/neon.ts'];
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running = false;
      resolve(code);
    }),
  );
  return {
    output: () => output,
    running: () => running,
    exited,
    kill: (signal) => child.kill(signal),
    waitFor: (pattern, timeoutMs) =>
      new Promise((resolve, reject) => {
        const deadline = Date.now() + timeoutMs;
        const check = (): void => {
          const match = pattern.exec(output);
          if (match) return resolve(match);
          if (!running) return reject(new Error(`neon ${args.join(' ')} exited before ${String(pattern)}:\n${output}`));
          if (Date.now() > deadline) {
            return reject(new Error(`no ${String(pattern)} within ${timeoutMs} ms:\n${output.slice(-4000)}`));
          }
          setTimeout(check, 200);
        };
        check();
      }),
  };
}

/** Runs `neon <args>` to its end: exit code and everything it printed. */
export async function neonOnce(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; output: string }> {
  const run = runNeon(args, env);
  const code = await run.exited;
  return { code, output: run.output() };
}

/** `npm run build` (tsc into `dist/`), so that compiled runs see the checkout as it is now. */
export async function buildDist(): Promise<void> {
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
  const child = spawn(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`tsc -p tsconfig.build.json failed (exit ${String(code)}):\n${output}`);
}

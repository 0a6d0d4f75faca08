import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliRun {
  output(): string;
  running(): boolean;
  readonly exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
  /** Resolves with the first match of `pattern` in the output; rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
}

/** `neon <args>` as a user runs it: a real subprocess of the CLI, from the checkout's sources. */
export function runNeon(args: string[], env: NodeJS.ProcessEnv = process.env): CliRun {
  let output = '';
  let running = true;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/neon.ts', ...args], {
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

import { spawn } from 'node:child_process';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CommandOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to the command's standard input, which is then closed. */
  input?: string;
  timeoutMs?: number;
}

export class CommandNotFoundError extends Error {
  override readonly name = 'CommandNotFoundError';
  constructor(readonly command: string) {
    super(`\`${command}\` was not found on PATH`);
  }
}

/** Runs a program to completion and collects its output; a non-zero exit is a result, not an error. */
export function runCommand(
  command: string,
  args: readonly string[],
  options: CommandOptions = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 10 * 60_000,
      killSignal: 'SIGKILL',
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'ENOENT' ? new CommandNotFoundError(command) : error);
    });
    child.on('close', (code, signal) => {
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8') + (signal ? `\n(killed by ${signal})` : ''),
      });
    });
    // A program that exits before reading its input closes the pipe; that is its answer, not ours.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** The last lines of a program's output, for an error message. */
export function outputTail(result: CommandResult, lines = 15): string {
  return `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-lines)
    .join('\n    ');
}

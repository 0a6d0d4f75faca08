import { ConfigError } from '../schemas/local-infra-config.js';
import { isInfraError } from './errors.js';

/** Prints a failure for a person and returns the exit code: 2 for bad configuration, 1 otherwise. */
export function reportFailure(error: unknown): number {
  if (error instanceof ConfigError) {
    process.stderr.write(`neon: ${error.message}\n`);
    return 2;
  }
  if (isInfraError(error)) {
    process.stderr.write(`neon: ${error.describe()}\n`);
    return 1;
  }
  // Unknown failures keep their stack: they are bugs, and the stack is what a bug report needs.
  process.stderr.write(
    `neon: unexpected failure\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return 1;
}

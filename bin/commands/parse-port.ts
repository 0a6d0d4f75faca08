import { UsageError } from '../../infra/cli-errors.js';

/** A TCP port from a command-line flag: 0 (any free port) to 65535. */
export function parsePort(text: string, flag: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(port) || port > 65_535) {
    throw new UsageError(`${flag} must be a port number from 0 to 65535, got "${text}"`);
  }
  return port;
}

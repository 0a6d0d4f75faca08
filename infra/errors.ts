/**
 * Failures of the local infrastructure launchers. Each carries a closed code and a hint that tells
 * the user what to do, so the CLI can print one clear sentence instead of a stack trace.
 */
export type InfraErrorCode =
  | 'java_missing'
  | 'java_too_old'
  | 'maven_missing'
  | 'download_failed'
  | 'checksum_mismatch'
  | 'port_in_use'
  | 'instance_conflict'
  | 'user_setup_failed'
  | 'start_failed'
  | 'not_ready'
  | 'stop_failed'
  | 'invalid_config';

export class InfraError extends Error {
  override readonly name = 'InfraError';

  constructor(
    readonly code: InfraErrorCode,
    message: string,
    readonly hint?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The text shown to a person: the problem, then what to do about it. */
  describe(): string {
    return this.hint ? `${this.message}\n  → ${this.hint}` : this.message;
  }
}

export function isInfraError(error: unknown): error is InfraError {
  return error instanceof InfraError;
}

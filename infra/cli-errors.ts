import { ConfigError } from '../schemas/local-infra-config.js';
import { isInfraError } from './errors.js';

/** A command line that cannot mean anything: a wrong option value, a missing file. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Prints a failure for a person and returns the exit code: 2 for bad usage or configuration, 1 otherwise. */
export function reportFailure(error: unknown): number {
  if (error instanceof ConfigError || error instanceof UsageError) {
    process.stderr.write(`neon: ${error.message}\n`);
    return 2;
  }
  if (isInfraError(error)) {
    process.stderr.write(`neon: ${error.describe()}\n`);
    return 1;
  }
  if (error instanceof Error && error.name.startsWith('KafkaJS')) {
    process.stderr.write(
      `neon: Kafka: ${error.message}\n` +
        'Is the broker running? Set KAFKA_BROKERS, or start a local one with `neon infra up`.\n',
    );
    return 1;
  }
  // Known conditions of the datastores and the model, by name (their classes live above this layer).
  if (
    error instanceof Error &&
    [
      'EmbeddingModelMismatch',
      'DatastoreMismatchError',
      'EmbedderError',
      'RetrievalTimeout',
      'DatastoreUnavailable',
      'ServiceError',
      'StopIncomplete',
    ].includes(error.name)
  ) {
    process.stderr.write(`neon: ${error.message}\n`);
    return 1;
  }
  if (error instanceof Error && ['ConnectionError', 'NoLivingConnectionsError'].includes(error.name)) {
    process.stderr.write(
      `neon: Elasticsearch: ${error.message}\n` +
        'Is it running? Set ES_URL, or start a local one with `neon infra up`.\n',
    );
    return 1;
  }
  // Unknown failures keep their stack: they are bugs, and the stack is what a bug report needs.
  process.stderr.write(
    `neon: unexpected failure\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return 1;
}

import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { reportFailure, UsageError } from '../../infra/cli-errors.js';
import { InfraError } from '../../infra/errors.js';
import { ConfigError } from '../../schemas/local-infra-config.js';

let write: MockInstance<typeof process.stderr.write>;
beforeEach(() => {
  write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});
afterEach(() => {
  write.mockRestore();
});

function written(): string {
  return write.mock.calls.map((call) => String(call[0])).join('');
}

describe('reportFailure', () => {
  it('returns 2 for a ConfigError and prints its problems', () => {
    const code = reportFailure(new ConfigError(['kafkaPort: too small', 'kafkaHeap: must look like 512m or 1g']));
    expect(code).toBe(2);
    expect(written()).toBe(
      'neon: invalid configuration:\n  - kafkaPort: too small\n  - kafkaHeap: must look like 512m or 1g\n',
    );
  });

  it('returns 1 for an InfraError and prints its description with the hint', () => {
    const code = reportFailure(new InfraError('port_in_use', 'port 9092 is taken', 'Stop that program.'));
    expect(code).toBe(1);
    expect(written()).toBe('neon: port 9092 is taken\n  → Stop that program.\n');
  });

  it('returns 2 for a UsageError with its message only', () => {
    expect(reportFailure(new UsageError('--speed must be a positive number, got "fast"'))).toBe(2);
    expect(written()).toBe('neon: --speed must be a positive number, got "fast"\n');
  });

  it('returns 1 for a Kafka client error and says how to get a broker', () => {
    const error = Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9092'), {
      name: 'KafkaJSNonRetriableError',
    });
    expect(reportFailure(error)).toBe(1);
    expect(written()).toContain('neon: Kafka: Connection error');
    expect(written()).toContain('neon infra up');
  });

  it('returns 1 for an unexpected error and keeps its stack', () => {
    const error = new TypeError('boom');
    expect(reportFailure(error)).toBe(1);
    const text = written();
    expect(text.startsWith('neon: unexpected failure\nTypeError: boom')).toBe(true);
    expect(text).toContain(error.stack ?? 'no stack');
  });

  it('returns 1 for a thrown non-error', () => {
    expect(reportFailure('just a string')).toBe(1);
    expect(written()).toBe('neon: unexpected failure\njust a string\n');
  });
});

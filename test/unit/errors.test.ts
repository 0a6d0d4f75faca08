import { describe, expect, it } from 'vitest';
import { InfraError, isInfraError } from '../../infra/errors.js';

describe('InfraError', () => {
  it('describes the problem followed by the hint', () => {
    const error = new InfraError('port_in_use', 'port 9092 is taken', 'Stop that program.');
    expect(error.describe()).toBe('port 9092 is taken\n  → Stop that program.');
    expect(error.code).toBe('port_in_use');
    expect(error.name).toBe('InfraError');
    expect(error.message).toBe('port 9092 is taken');
    expect(error).toBeInstanceOf(Error);
  });

  it('describes just the message when there is no hint', () => {
    expect(new InfraError('not_ready', 'Kafka did not answer').describe()).toBe('Kafka did not answer');
  });

  it('keeps the cause', () => {
    const cause = new Error('ENOENT');
    expect(new InfraError('java_missing', 'no java', 'install it', { cause }).cause).toBe(cause);
  });

  it('is recognised by isInfraError, unlike other errors', () => {
    expect(isInfraError(new InfraError('start_failed', 'x'))).toBe(true);
    expect(isInfraError(new Error('x'))).toBe(false);
    expect(isInfraError({ code: 'start_failed', message: 'x' })).toBe(false);
    expect(isInfraError(undefined)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError, defaultDirectories, loadLocalInfraConfig } from '../../schemas/local-infra-config.js';

/** Loads and expects a ConfigError, returning its problems. */
function problemsOf(load: () => unknown): string[] {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError, but the configuration loaded');
}

const dirsEnv = { NEON_CACHE_DIR: '/tmp/neon-cache', NEON_DATA_DIR: '/tmp/neon-data' };

describe('loadLocalInfraConfig', () => {
  it('applies the documented defaults', () => {
    const env = { HOME: '/home/someone' };
    const config = loadLocalInfraConfig(env);
    expect(config).toEqual({
      ...defaultDirectories(env),
      kafkaPort: 9092,
      kafkaControllerPort: 9093,
      elasticsearchPort: 9200,
      elasticsearchTransportPort: 9300,
      kafkaHeap: '512m',
      elasticsearchHeap: '1g',
      readyTimeoutMs: 120_000,
      elasticsearchUser: 'neon-es',
    });
  });

  it('reads every setting from the environment, coercing numbers', () => {
    const config = loadLocalInfraConfig({
      ...dirsEnv,
      NEON_KAFKA_PORT: '19092',
      NEON_KAFKA_CONTROLLER_PORT: '19093',
      NEON_ES_PORT: '19200',
      NEON_ES_TRANSPORT_PORT: '19300',
      NEON_KAFKA_HEAP: '768m',
      NEON_ES_HEAP: '2g',
      NEON_INFRA_READY_TIMEOUT_S: '45',
      NEON_ES_USER: 'elastic_user',
    });
    expect(config).toEqual({
      cacheDir: '/tmp/neon-cache',
      dataDir: '/tmp/neon-data',
      kafkaPort: 19092,
      kafkaControllerPort: 19093,
      elasticsearchPort: 19200,
      elasticsearchTransportPort: 19300,
      kafkaHeap: '768m',
      elasticsearchHeap: '2g',
      readyTimeoutMs: 45_000,
      elasticsearchUser: 'elastic_user',
    });
  });

  it('lets explicit overrides beat the environment', () => {
    const config = loadLocalInfraConfig(
      { ...dirsEnv, NEON_KAFKA_PORT: '19092', NEON_ES_HEAP: '2g', NEON_INFRA_READY_TIMEOUT_S: '45' },
      { kafkaPort: '29092', elasticsearchHeap: '3g', readyTimeoutMs: 5000, dataDir: '/srv/neon' },
    );
    expect(config.kafkaPort).toBe(29092);
    expect(config.elasticsearchHeap).toBe('3g');
    expect(config.readyTimeoutMs).toBe(5000);
    expect(config.dataDir).toBe('/srv/neon');
    expect(config.cacheDir).toBe('/tmp/neon-cache');
  });

  it('ignores undefined overrides, keeping the environment value', () => {
    const config = loadLocalInfraConfig(
      { ...dirsEnv, NEON_KAFKA_PORT: '19092', NEON_KAFKA_HEAP: '256m' },
      { kafkaPort: undefined, kafkaHeap: undefined, elasticsearchPort: undefined },
    );
    expect(config.kafkaPort).toBe(19092);
    expect(config.kafkaHeap).toBe('256m');
    expect(config.elasticsearchPort).toBe(9200);
  });

  it('lists every problem in one ConfigError', () => {
    const problems = problemsOf(() =>
      loadLocalInfraConfig({ ...dirsEnv, NEON_KAFKA_PORT: '80' }, { kafkaHeap: 'lots', elasticsearchPort: 9300 }),
    );
    expect(problems).toHaveLength(3);
    expect(problems).toContain('kafkaHeap: must look like 512m or 1g');
    expect(problems).toContain('elasticsearchTransportPort: port 9300 is also elasticsearchPort');
    expect(problems.some((p) => p.startsWith('kafkaPort: '))).toBe(true);
  });

  it('still reports duplicate ports when another port is not a number', () => {
    const problems = problemsOf(() =>
      loadLocalInfraConfig(dirsEnv, {
        kafkaPort: 'abc',
        kafkaHeap: 'lots',
        elasticsearchPort: 9300,
      }),
    );
    expect(problems).toHaveLength(3);
    expect(problems.some((p) => p.startsWith('kafkaPort: '))).toBe(true);
    expect(problems).toContain('kafkaHeap: must look like 512m or 1g');
    expect(problems).toContain('elasticsearchTransportPort: port 9300 is also elasticsearchPort');
  });

  it('puts the problems in the error message, one per line', () => {
    let caught: unknown;
    try {
      loadLocalInfraConfig(dirsEnv, { kafkaPort: 70000, elasticsearchHeap: '1.5g' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const error = caught as ConfigError;
    expect(error.name).toBe('ConfigError');
    expect(error.problems).toHaveLength(2);
    expect(error.message.split('\n')[0]).toBe('invalid configuration:');
    expect(error.message).toContain('  - elasticsearchHeap: must look like 512m or 1g');
    expect(error.message).toContain('  - kafkaPort: ');
  });

  it('rejects a non-numeric ready timeout and an invalid user name', () => {
    const problems = problemsOf(() =>
      loadLocalInfraConfig({ ...dirsEnv, NEON_INFRA_READY_TIMEOUT_S: 'soon', NEON_ES_USER: 'Root User' }),
    );
    expect(problems).toHaveLength(2);
    expect(problems.some((p) => p.startsWith('readyTimeoutMs: '))).toBe(true);
    expect(problems).toContain('elasticsearchUser: must be a valid user name');
  });
});

describe('defaultDirectories', () => {
  it('uses /var for root, whatever the environment says', () => {
    expect(defaultDirectories({ HOME: '/root', XDG_CACHE_HOME: '/x/cache' }, true)).toEqual({
      cacheDir: '/var/cache/neon-stream',
      dataDir: '/var/lib/neon-stream',
    });
  });

  it('follows HOME for other users', () => {
    expect(defaultDirectories({ HOME: '/home/ada' }, false)).toEqual({
      cacheDir: '/home/ada/.cache/neon-stream',
      dataDir: '/home/ada/.local/state/neon-stream',
    });
  });

  it('honours XDG_CACHE_HOME and XDG_STATE_HOME for other users', () => {
    expect(
      defaultDirectories({ HOME: '/home/ada', XDG_CACHE_HOME: '/fast/cache', XDG_STATE_HOME: '/persist/state' }, false),
    ).toEqual({
      cacheDir: '/fast/cache/neon-stream',
      dataDir: '/persist/state/neon-stream',
    });
  });
});

import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { llmConfig, llmConfigFromEnv, LLM_DEFAULTS, type LlmConfig } from '../../processors/extract/llm-config.js';
import { ConfigError } from '../../schemas/local-infra-config.js';

const SECRET = 'sk-test-0123456789-do-not-print';

function configured(env: Record<string, string | undefined>): LlmConfig {
  const setting = llmConfigFromEnv({ NEON_CACHE_DIR: '/srv/neon-cache', ...env });
  if (setting.kind !== 'openai') throw new Error('expected an LLM configuration');
  return setting;
}

function problems(env: Record<string, string | undefined>): string[] {
  try {
    llmConfigFromEnv({ NEON_CACHE_DIR: '/srv/neon-cache', ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('llmConfigFromEnv', () => {
  it('answers "no LLM" (not an error) when neither a URL nor a key is set', () => {
    expect(llmConfigFromEnv({})).toEqual({ kind: 'none' });
    // Empty variables, as compose files leave them, count as unset; other LLM settings alone do not configure one.
    expect(llmConfigFromEnv({ NEON_LLM_URL: ' ', NEON_LLM_KEY: '', NEON_LLM_MODEL: 'llama3' })).toEqual({
      kind: 'none',
    });
  });

  it('uses api.openai.com with a default model when only a key is set', () => {
    const config = configured({ OPENAI_API_KEY: SECRET });
    expect(config).toMatchObject({
      kind: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      model: 'gpt-4o-mini',
      timeoutMs: 20_000,
      retry: LLM_DEFAULTS.retry,
      concurrency: 4,
      maxQueued: 64,
      pricePer1k: { prompt: 0, completion: 0 },
      // Under the cache directory the rest of the product uses.
      cacheDir: '/srv/neon-cache/llm-responses',
      // OpenAI's reasoning models refuse max_tokens.
      maxTokensField: 'max_completion_tokens',
    });
    expect(config.apiKey?.reveal()).toBe(SECRET);
    expect(config.tokensPerHour).toBeUndefined();
    expect(config.azure).toBeUndefined();
  });

  it('prefers NEON_LLM_KEY to OPENAI_API_KEY', () => {
    expect(configured({ NEON_LLM_KEY: 'first', OPENAI_API_KEY: 'second' }).apiKey?.reveal()).toBe('first');
  });

  it('reads every setting of a local server, which needs no key', () => {
    const config = configured({
      NEON_LLM_URL: 'http://127.0.0.1:8000/v1/',
      NEON_LLM_MODEL: 'Qwen/Qwen2.5-7B-Instruct',
      NEON_LLM_TIMEOUT_MS: '15000',
      NEON_LLM_MAX_ATTEMPTS: '2',
      NEON_LLM_CONCURRENCY: '8',
      NEON_LLM_MAX_QUEUED: '10',
      NEON_LLM_TOKENS_PER_HOUR: '250000',
      NEON_LLM_PRICE_IN_PER_1K: '0.00015',
      NEON_LLM_PRICE_OUT_PER_1K: '0.0006',
      NEON_LLM_CACHE_DIR: '/var/cache/neon-llm',
    });
    expect(config).toMatchObject({
      baseUrl: 'http://127.0.0.1:8000/v1',
      model: 'Qwen/Qwen2.5-7B-Instruct',
      timeoutMs: 15_000,
      retry: { attempts: 2 },
      concurrency: 8,
      maxQueued: 10,
      tokensPerHour: 250_000,
      pricePer1k: { prompt: 0.00015, completion: 0.0006 },
      cacheDir: '/var/cache/neon-llm',
      maxTokensField: 'max_tokens',
    });
    expect(config.apiKey).toBeUndefined();
  });

  it('sends the length bound in the field NEON_LLM_MAX_TOKENS_FIELD names', () => {
    const local = { NEON_LLM_URL: 'http://127.0.0.1:11434/v1', NEON_LLM_MODEL: 'llama3.1' };
    expect(configured({ ...local, NEON_LLM_MAX_TOKENS_FIELD: 'max_completion_tokens' }).maxTokensField).toBe(
      'max_completion_tokens',
    );
    expect(problems({ ...local, NEON_LLM_MAX_TOKENS_FIELD: 'n_predict' })).toEqual([
      'NEON_LLM_MAX_TOKENS_FIELD: must be max_tokens or max_completion_tokens',
    ]);
  });

  it('keeps the cache in memory only with NEON_LLM_CACHE_DIR=off', () => {
    expect(
      configured({ NEON_LLM_URL: 'http://127.0.0.1:8000/v1', NEON_LLM_MODEL: 'm', NEON_LLM_CACHE_DIR: 'off' }),
    ).not.toHaveProperty('cacheDir');
  });

  it('configures Azure OpenAI: api-version, deployment, and the model defaulting to the deployment', () => {
    const config = configured({
      NEON_LLM_URL: 'https://example.openai.azure.com',
      NEON_LLM_KEY: SECRET,
      NEON_LLM_AZURE_API_VERSION: '2024-10-21',
      NEON_LLM_AZURE_DEPLOYMENT: 'gpt4o-extract',
    });
    expect(config).toMatchObject({
      baseUrl: 'https://example.openai.azure.com',
      model: 'gpt4o-extract',
      azure: { apiVersion: '2024-10-21', deployment: 'gpt4o-extract' },
    });
  });

  it('lists every problem at once', () => {
    expect(
      problems({
        NEON_LLM_URL: 'ftp://example',
        NEON_LLM_TIMEOUT_MS: 'soon',
        NEON_LLM_CONCURRENCY: '0',
        NEON_LLM_TOKENS_PER_HOUR: '-5',
        NEON_LLM_PRICE_IN_PER_1K: '-1',
        NEON_LLM_MAX_ATTEMPTS: '2.5',
      }),
    ).toEqual([
      'NEON_LLM_URL: must be an http(s) URL',
      'NEON_LLM_TIMEOUT_MS: must be an integer from 1 to 600000',
      'NEON_LLM_MAX_ATTEMPTS: must be an integer from 1 to 20',
      'NEON_LLM_CONCURRENCY: must be an integer from 1 to 256',
      'NEON_LLM_TOKENS_PER_HOUR: must be an integer from 1 to 1000000000000',
      'NEON_LLM_PRICE_IN_PER_1K: must be a price of at least 0',
      'NEON_LLM_MODEL: required for an endpoint other than api.openai.com (the model it serves)',
    ]);
  });

  it('refuses a timeout as long as the Kafka consumer session', () => {
    expect(problems({ OPENAI_API_KEY: SECRET, NEON_LLM_TIMEOUT_MS: '30000' })).toEqual([
      'NEON_LLM_TIMEOUT_MS: must be shorter than the Kafka consumer session (30000 ms), or a slow answer costs the stage its partitions',
    ]);
    expect(configured({ OPENAI_API_KEY: SECRET, NEON_LLM_TIMEOUT_MS: '29999' }).timeoutMs).toBe(29_999);
    expect(() => llmConfigFromEnv({ OPENAI_API_KEY: SECRET }, { sessionTimeoutMs: 10_000 })).toThrow(
      /shorter than the Kafka consumer session \(10000 ms\)/,
    );
  });

  it('requires a key for api.openai.com and Azure, and a URL for Azure', () => {
    expect(problems({ NEON_LLM_URL: 'https://api.openai.com/v1' })).toEqual([
      'NEON_LLM_KEY (or OPENAI_API_KEY): required for api.openai.com',
    ]);
    expect(
      problems({ NEON_LLM_URL: 'https://example.openai.azure.com', NEON_LLM_AZURE_API_VERSION: '2024-10-21' }),
    ).toEqual([
      'NEON_LLM_KEY (or OPENAI_API_KEY): required for Azure OpenAI',
      'NEON_LLM_MODEL: required for an endpoint other than api.openai.com (on Azure, NEON_LLM_AZURE_DEPLOYMENT will do)',
    ]);
    expect(problems({ OPENAI_API_KEY: SECRET, NEON_LLM_AZURE_API_VERSION: '2024-10-21' })).toEqual([
      'NEON_LLM_URL: required for Azure OpenAI (the resource endpoint)',
    ]);
    expect(problems({ OPENAI_API_KEY: SECRET, NEON_LLM_AZURE_DEPLOYMENT: 'dep' })).toEqual([
      'NEON_LLM_AZURE_DEPLOYMENT: only used with NEON_LLM_AZURE_API_VERSION (Azure OpenAI)',
    ]);
  });

  it('never prints the key: not through inspect, JSON, string conversion or a config error', () => {
    const config = configured({ NEON_LLM_KEY: SECRET });
    expect(inspect(config, { depth: 10 })).not.toContain(SECRET);
    expect(JSON.stringify(config)).not.toContain(SECRET);
    expect(`${String(config.apiKey)} ${inspect(config.apiKey)}`).toBe('<redacted> <redacted>');
    try {
      llmConfigFromEnv({ NEON_LLM_KEY: SECRET, NEON_LLM_TIMEOUT_MS: 'x' });
      expect.unreachable();
    } catch (error) {
      expect(inspect(error)).not.toContain(SECRET);
    }
  });
});

describe('llmConfig', () => {
  it('fills every default around the given fields, retry policy included', () => {
    expect(llmConfig({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', retry: { attempts: 2 } })).toEqual({
      kind: 'openai',
      baseUrl: 'http://127.0.0.1:1/v1',
      model: 'm',
      timeoutMs: 20_000,
      retry: { attempts: 2, baseMs: 500, capMs: 10_000 },
      concurrency: 4,
      maxQueued: 64,
      pricePer1k: { prompt: 0, completion: 0 },
      memoryCache: { maxEntries: 1_000, maxChars: 16_000_000 },
      maxResponseChars: 200_000,
      maxTokensField: 'max_tokens',
    });
  });
});

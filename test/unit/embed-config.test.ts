import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createEmbedder } from '../../streams/embed/create-embedder.js';
import { EmbedderError } from '../../processors/embed/embedder.js';
import { embedderConfigFromEnv, type EmbedderConfig } from '../../processors/embed/embedder-config.js';
import { HashingEmbedder } from '../../processors/embed/hashing-embedder.js';
import { DEFAULT_LOCAL_MODEL, LOCAL_MODEL_PINS, localModelFiles } from '../../processors/embed/model-pins.js';
import { OpenAiEmbedder } from '../../streams/embed/openai-embedder.js';
import { ConfigError } from '../../schemas/local-infra-config.js';

function problemsOf(env: Record<string, string>): string[] {
  try {
    embedderConfigFromEnv(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('embedderConfigFromEnv', () => {
  it('runs the local bge-small-en-v1.5-q by default, one core, from the cache directory', () => {
    expect(DEFAULT_LOCAL_MODEL).toBe('bge-small-en-v1.5-q');
    expect(embedderConfigFromEnv({ NEON_CACHE_DIR: '/cache' })).toEqual({
      kind: 'local',
      model: 'bge-small-en-v1.5-q',
      cacheDir: '/cache',
      batchSize: 1,
      concurrency: 1,
      intraOpNumThreads: 1,
    });
  });

  it('takes batch size, concurrency and threads', () => {
    expect(
      embedderConfigFromEnv({
        NEON_EMBEDDER: 'LOCAL',
        NEON_EMBEDDINGS_MODEL: 'bge-small-en-v1.5',
        NEON_EMBEDDINGS_BATCH_SIZE: '64',
        NEON_EMBEDDINGS_CONCURRENCY: '2',
        NEON_EMBEDDINGS_THREADS: '2',
        NEON_CACHE_DIR: '/c',
      }),
    ).toMatchObject({
      kind: 'local',
      model: 'bge-small-en-v1.5',
      batchSize: 64,
      concurrency: 2,
      intraOpNumThreads: 2,
    });
  });

  it.each(['all-MiniLM-L6-v2', 'all-MiniLM-L6-v2-q', 'bge-small-en-v1.5', 'bge-small-en-v1.5-q'])(
    'runs the local model %s by its name, the name stored beside its vectors',
    (model) => {
      const config = embedderConfigFromEnv({ NEON_EMBEDDINGS_MODEL: model, NEON_CACHE_DIR: '/c' });
      expect(config).toMatchObject({ kind: 'local', model, batchSize: 1 });
      expect(config.kind === 'local' && LOCAL_MODEL_PINS[config.model].name).toBe(model);
    },
  );

  it('runs the quantised models one text per inference, and says why a batch size is refused', () => {
    for (const model of ['all-MiniLM-L6-v2-q', 'bge-small-en-v1.5-q']) {
      expect(embedderConfigFromEnv({ NEON_EMBEDDINGS_MODEL: model, NEON_EMBEDDINGS_BATCH_SIZE: '1' })).toMatchObject({
        batchSize: 1,
      });
      expect(problemsOf({ NEON_EMBEDDINGS_MODEL: model, NEON_EMBEDDINGS_BATCH_SIZE: '16' })).toEqual([
        `NEON_EMBEDDINGS_BATCH_SIZE: ${model} runs one text per inference (its int8 activations are scaled over the whole batch, so batching would change each text's vector)`,
      ]);
    }
  });

  it('configures an OpenAI-compatible endpoint, the key wrapped so it never prints', () => {
    const config = embedderConfigFromEnv({
      NEON_EMBEDDER: 'openai',
      NEON_EMBEDDINGS_URL: 'http://127.0.0.1:8000/v1/',
      NEON_EMBEDDINGS_MODEL: 'bge-small',
      NEON_EMBEDDINGS_DIMENSIONS: '384',
      NEON_EMBEDDINGS_KEY: 'sk-very-secret',
      NEON_EMBEDDINGS_TIMEOUT_S: '5',
      NEON_EMBEDDINGS_ATTEMPTS: '3',
    });
    expect(config).toMatchObject({
      kind: 'openai',
      baseUrl: 'http://127.0.0.1:8000/v1',
      model: 'bge-small',
      dimensions: 384,
      requestDimensions: true,
      batchSize: 64,
      concurrency: 4,
      timeoutMs: 5000,
      attempts: 3,
    });
    expect(JSON.stringify(config)).not.toContain('sk-very-secret');
    expect(inspect(config, { depth: 5 })).not.toContain('sk-very-secret');
    expect(config.kind === 'openai' && config.apiKey?.reveal()).toBe('sk-very-secret');
  });

  it("defaults to OpenAI's API and text-embedding-3-small, with OPENAI_API_KEY when NEON_EMBEDDINGS_KEY is unset", () => {
    const config = embedderConfigFromEnv({ NEON_EMBEDDER: 'openai', OPENAI_API_KEY: 'sk-openai' });
    expect(config).toMatchObject({
      kind: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      model: 'text-embedding-3-small',
      dimensions: 1536,
      requestDimensions: false,
      timeoutMs: 20_000,
      attempts: 5,
    });
    const both = embedderConfigFromEnv({ NEON_EMBEDDER: 'openai', OPENAI_API_KEY: 'a', NEON_EMBEDDINGS_KEY: 'b' });
    expect(both.kind === 'openai' && both.apiKey?.reveal()).toBe('b');
  });

  it('needs no key for a server of your own', () => {
    const config = embedderConfigFromEnv({
      NEON_EMBEDDER: 'openai',
      NEON_EMBEDDINGS_URL: 'http://127.0.0.1:8000/v1',
      NEON_EMBEDDINGS_MODEL: 'text-embedding-3-small',
    });
    expect(config.kind === 'openai' && config.apiKey).toBeUndefined();
  });

  it('lists every problem at once', () => {
    expect(
      problemsOf({
        NEON_EMBEDDER: 'openai',
        NEON_EMBEDDINGS_URL: 'ftp://example.org',
        NEON_EMBEDDINGS_MODEL: 'my-model',
        NEON_EMBEDDINGS_BATCH_SIZE: '0',
        NEON_EMBEDDINGS_CONCURRENCY: 'many',
        NEON_EMBEDDINGS_TIMEOUT_S: '-1',
      }),
    ).toEqual([
      'NEON_EMBEDDINGS_URL: must be an http(s) URL',
      'NEON_EMBEDDINGS_BATCH_SIZE: must be an integer from 1 to 2048',
      'NEON_EMBEDDINGS_CONCURRENCY: must be an integer from 1 to 64',
      'NEON_EMBEDDINGS_TIMEOUT_S: must be a number of seconds from 0 to 600',
      'NEON_EMBEDDINGS_KEY (or OPENAI_API_KEY): required for api.openai.com',
      'NEON_EMBEDDINGS_DIMENSIONS: required for model my-model (the length of its vectors)',
    ]);
  });

  it('refuses what the local model cannot do', () => {
    expect(
      problemsOf({
        NEON_EMBEDDER: 'local',
        NEON_EMBEDDINGS_MODEL: 'text-embedding-3-small',
        NEON_EMBEDDINGS_URL: 'http://127.0.0.1:8000/v1',
      }),
    ).toEqual([
      'NEON_EMBEDDINGS_MODEL: the local embedder runs all-MiniLM-L6-v2, all-MiniLM-L6-v2-q, bge-small-en-v1.5 or bge-small-en-v1.5-q, not text-embedding-3-small',
      'NEON_EMBEDDINGS_URL: only used with NEON_EMBEDDER=openai',
    ]);
    expect(problemsOf({ NEON_EMBEDDINGS_DIMENSIONS: '768' })).toEqual([
      'NEON_EMBEDDINGS_DIMENSIONS: bge-small-en-v1.5-q makes 384-dimensional vectors',
    ]);
    expect(problemsOf({ NEON_EMBEDDINGS_MODEL: 'bge-small-en-v1.5', NEON_EMBEDDINGS_DIMENSIONS: '768' })).toEqual([
      'NEON_EMBEDDINGS_DIMENSIONS: bge-small-en-v1.5 makes 384-dimensional vectors',
    ]);
    expect(problemsOf({ NEON_EMBEDDINGS_MODEL: 'bge-small-en' })[0]).toContain('not bge-small-en');
    expect(problemsOf({ NEON_EMBEDDER: 'bert' })).toEqual(['NEON_EMBEDDER: must be local, openai or hashing']);
  });

  it('treats empty variables as unset', () => {
    expect(
      embedderConfigFromEnv({ NEON_EMBEDDER: '', NEON_EMBEDDINGS_MODEL: ' ', NEON_CACHE_DIR: '/c' }),
    ).toMatchObject({ kind: 'local', model: 'bge-small-en-v1.5-q' });
  });

  it('selects the hashing embedder only when asked by name', () => {
    expect(embedderConfigFromEnv({ NEON_EMBEDDER: 'hashing', NEON_EMBEDDINGS_DIMENSIONS: '64' })).toEqual({
      kind: 'hashing',
      dimensions: 64,
    });
  });
});

describe('createEmbedder', () => {
  it('builds the hashing embedder, whose model name says it is for tests', async () => {
    const embedder = await createEmbedder({ kind: 'hashing', dimensions: 32 });
    expect(embedder).toBeInstanceOf(HashingEmbedder);
    expect(embedder.model).toBe('hashing-test-only');
    expect(embedder.dimensions).toBe(32);
  });

  it('builds the endpoint embedder from its configuration', async () => {
    const config = embedderConfigFromEnv({
      NEON_EMBEDDER: 'openai',
      NEON_EMBEDDINGS_URL: 'http://127.0.0.1:9/v1',
      NEON_EMBEDDINGS_MODEL: 'm',
      NEON_EMBEDDINGS_DIMENSIONS: '3',
    });
    const embedder = await createEmbedder(config);
    expect(embedder).toBeInstanceOf(OpenAiEmbedder);
    expect([embedder.model, embedder.dimensions]).toEqual(['m', 3]);
    await embedder.close();
  });

  it('never downloads by itself: a missing local model is model_missing, pointing at infra prepare', async () => {
    const config: EmbedderConfig = embedderConfigFromEnv({ NEON_CACHE_DIR: '/nonexistent/neon-cache' });
    const error = await createEmbedder(config).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderError);
    expect((error as EmbedderError).code).toBe('model_missing');
    expect((error as EmbedderError).message).toContain('npm run neon -- infra prepare');
  });

  it('asks obtainModel for the configured local model', async () => {
    const asked: string[] = [];
    const config = embedderConfigFromEnv({ NEON_CACHE_DIR: '/c', NEON_EMBEDDINGS_MODEL: 'bge-small-en-v1.5-q' });
    await createEmbedder(config, {
      obtainModel: async (cacheDir, pin) => {
        asked.push(`${cacheDir} ${pin.name} ${pin.pooling} ${pin.maxTokens}`);
        return localModelFiles('/nonexistent/elsewhere', pin);
      },
    }).catch(() => undefined);
    expect(asked).toEqual(['/c bge-small-en-v1.5-q cls 512']);
  });

  it('asks obtainModel for the local model when one is given', async () => {
    const asked: string[] = [];
    const config = embedderConfigFromEnv({ NEON_CACHE_DIR: '/nonexistent/neon-cache' });
    const error = await createEmbedder(config, {
      obtainModel: async (cacheDir, pin) => {
        asked.push(`${cacheDir} ${pin.name}`);
        return localModelFiles('/nonexistent/elsewhere', pin);
      },
    }).catch((e: unknown) => e);
    expect(asked).toEqual(['/nonexistent/neon-cache bge-small-en-v1.5-q']);
    expect((error as EmbedderError).message).toContain('/nonexistent/elsewhere');
  });
});

describe('localModelFiles', () => {
  it('keeps each pinned model in its own versioned folder of the cache', () => {
    const pin = LOCAL_MODEL_PINS['all-MiniLM-L6-v2'];
    expect(localModelFiles('/c', pin)).toEqual({
      directory: `/c/models/all-MiniLM-L6-v2-${pin.version}`,
      onnx: `/c/models/all-MiniLM-L6-v2-${pin.version}/model.onnx`,
      tokenizer: `/c/models/all-MiniLM-L6-v2-${pin.version}/tokenizer.json`,
      verifiedMarker: `/c/models/all-MiniLM-L6-v2-${pin.version}/.verified`,
    });
  });
});

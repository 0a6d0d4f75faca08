import type { Embedder } from '../../processors/embed/embedder.js';
import type { EmbedderConfig } from '../../processors/embed/embedder-config.js';
import { HashingEmbedder } from '../../processors/embed/hashing-embedder.js';
import { openLocalOnnxEmbedder } from './local-onnx-embedder.js';
import {
  LOCAL_MODEL_PINS,
  localModelFiles,
  type LocalModelFiles,
  type LocalModelPin,
} from '../../processors/embed/model-pins.js';
import { OpenAiEmbedder } from './openai-embedder.js';

export interface CreateEmbedderOptions {
  /**
   * Fetches the local model when the cache lacks it (commands pass `ensureEmbeddingModel` from
   * `infra/models/`). Without it a missing model is a `model_missing` error that says to run
   * `neon infra prepare`: processors never download on their own.
   */
  obtainModel?: (cacheDir: string, pin: LocalModelPin) => Promise<LocalModelFiles>;
}

/** The embedder a validated configuration asks for (see `embedderConfigFromEnv`). */
export async function createEmbedder(config: EmbedderConfig, options: CreateEmbedderOptions = {}): Promise<Embedder> {
  switch (config.kind) {
    case 'local': {
      const pin = LOCAL_MODEL_PINS[config.model];
      const files = options.obtainModel
        ? await options.obtainModel(config.cacheDir, pin)
        : localModelFiles(config.cacheDir, pin);
      return openLocalOnnxEmbedder({
        files,
        pin,
        batchSize: config.batchSize,
        concurrency: config.concurrency,
        intraOpNumThreads: config.intraOpNumThreads,
      });
    }
    case 'openai':
      return new OpenAiEmbedder({
        baseUrl: config.baseUrl,
        ...(config.apiKey ? { apiKey: config.apiKey } : {}),
        model: config.model,
        dimensions: config.dimensions,
        requestDimensions: config.requestDimensions,
        batchSize: config.batchSize,
        concurrency: config.concurrency,
        timeoutMs: config.timeoutMs,
        retry: { attempts: config.attempts },
      });
    case 'hashing':
      return new HashingEmbedder(config.dimensions);
  }
}

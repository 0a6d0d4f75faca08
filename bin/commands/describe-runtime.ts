import type { ProductRuntime } from './product-runtime.js';

/** What a running neon-stream does, in a few lines for the terminal. */
export function describeRuntime(runtime: ProductRuntime): string[] {
  const { pipeline, api, metrics, embedder, chat } = runtime;
  const stages = [...pipeline.stages.keys()];
  const lines = [
    `processors: ${stages.length > 0 ? stages.join(', ') : 'none'} (embeddings: ${embedder.model})`,
    `registry: ${pipeline.directory.size} entities; spikes known: ${pipeline.feed.book.size()}`,
  ];
  if (api) {
    lines.push(
      `API at ${api.url}: dashboard /, /v1/ask, /v1/search, /v1/entities, /v1/spikes (live: /v1/spikes/stream), ` +
        '/v1/status, /v1/openapi.json',
    );
  }
  if (metrics) lines.push(`metrics at ${metrics.url}/metrics`);
  lines.push(chat ? `answers and extraction by ${chat.model}` : 'no LLM configured (NEON_LLM_*): extractive answers');
  if (pipeline.stages.has('extract')) {
    lines.push(
      `extraction: ${pipeline.extraction.extractor}, ${pipeline.extraction.variants.join('+')}, ` +
        (pipeline.extraction.mode === 'all'
          ? 'every entity'
          : `targets: ${pipeline.extraction.configured.list().length} configured ∪ spiking`),
    );
  }
  return lines;
}

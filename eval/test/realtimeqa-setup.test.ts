import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { withEveryCore } from '../realtimeqa-setup.js';

describe('the evaluation embeds on every core', () => {
  it('runs one local inference per core unless told otherwise, and leaves other embedders alone', () => {
    expect(withEveryCore({}).NEON_EMBEDDINGS_CONCURRENCY).toBe(String(availableParallelism()));
    expect(withEveryCore({ NEON_EMBEDDER: 'local', PATH: '/bin' })).toMatchObject({
      PATH: '/bin',
      NEON_EMBEDDINGS_CONCURRENCY: String(availableParallelism()),
    });
    expect(withEveryCore({ NEON_EMBEDDINGS_CONCURRENCY: '1' }).NEON_EMBEDDINGS_CONCURRENCY).toBe('1');
    // An endpoint's own default (4 requests at once) is not the machine's cores.
    expect(withEveryCore({ NEON_EMBEDDER: 'openai' }).NEON_EMBEDDINGS_CONCURRENCY).toBeUndefined();
  });
});

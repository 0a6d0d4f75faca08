import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../processors/embed/embedder.js';
import { EmbeddingBatcher } from '../../streams/embed/embedding-batcher.js';

/** An embedder that records its calls, answers after `delayMs`, and can be told to fail once. */
function recordingEmbedder(callShape?: Embedder['callShape'], delayMs = 5) {
  const calls: string[][] = [];
  let active = 0;
  let mostAtOnce = 0;
  let failNext = false;
  const embedder: Embedder = {
    model: 'recording',
    dimensions: 1,
    ...(callShape ? { callShape } : {}),
    embed: async (texts) => {
      calls.push([...texts]);
      active += 1;
      mostAtOnce = Math.max(mostAtOnce, active);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      active -= 1;
      if (failNext) {
        failNext = false;
        throw new Error('model down');
      }
      return texts.map((t) => Float32Array.from([t.length]));
    },
    close: () => Promise.resolve(),
  };
  return {
    embedder,
    calls,
    mostAtOnce: () => mostAtOnce,
    failNextCall: () => {
      failNext = true;
    },
  };
}

const texts = (n: number, prefix = 't'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${'x'.repeat(i)}`);

describe('EmbeddingBatcher', () => {
  it('hands every caller its own vector, one call at a time of at most 32 texts by default', async () => {
    const model = recordingEmbedder();
    const batcher = new EmbeddingBatcher(model.embedder);
    const input = texts(70);
    const vectors = await Promise.all(input.map((t) => batcher.embed(t)));
    expect(vectors.map((v) => v[0])).toEqual(input.map((t) => t.length));
    expect(model.calls.map((c) => c.length)).toEqual([32, 32, 6]);
    expect(model.mostAtOnce()).toBe(1);
  });

  it('keeps a remote endpoint busy: full requests, as many at once as the embedder takes', async () => {
    const model = recordingEmbedder({ textsPerCall: 4, callsAtOnce: 3 }, 20);
    const batcher = new EmbeddingBatcher(model.embedder);
    await Promise.all(texts(20).map((t) => batcher.embed(t)));
    expect(model.calls.map((c) => c.length)).toEqual([4, 4, 4, 4, 4]);
    expect(model.mostAtOnce()).toBe(3);
  });

  it('embeds a text once: joined while pending, then answered from the recent texts', async () => {
    const model = recordingEmbedder();
    const batcher = new EmbeddingBatcher(model.embedder, { cacheSize: 2 });
    const [a, again] = await Promise.all([batcher.embed('alpha'), batcher.embed('alpha')]);
    expect(again).toBe(a);
    expect(model.calls).toEqual([['alpha']]);
    expect(await batcher.embed('alpha')).toBe(a);
    expect(model.calls).toHaveLength(1);
    expect(batcher.reused).toBe(2);
    // Two newer texts push it out of a cache of two: it is embedded again.
    await batcher.embed('beta');
    await batcher.embed('gamma');
    await batcher.embed('alpha');
    expect(model.calls.flat()).toEqual(['alpha', 'beta', 'gamma', 'alpha']);
  });

  it('rejects every text of a failed call, and embeds them afresh when asked again', async () => {
    const model = recordingEmbedder();
    const batcher = new EmbeddingBatcher(model.embedder);
    model.failNextCall();
    const failed = await Promise.allSettled([batcher.embed('one'), batcher.embed('two')]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((await batcher.embed('one'))[0]).toBe(3);
    expect(model.calls).toEqual([['one', 'two'], ['one']]);
  });
});

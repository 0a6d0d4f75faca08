import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbedderError, type Embedder } from '../../processors/embed/embedder.js';
import { openLocalOnnxEmbedder, padBatch } from '../../processors/embed/local-onnx-embedder.js';
import { cosine } from '../../processors/embed/normalize-vector.js';
import { OnnxInferencePool } from '../../processors/embed/onnx-inference-pool.js';
import { ModelTokenizer } from '../../processors/embed/tokenize-for-model.js';
import { findLocalTestModel } from '../fixtures/embed-local-model.js';

/**
 * The real all-MiniLM-L6-v2 (ONNX, onnxruntime-node, tokenizers.js) against vectors computed by
 * sentence-transformers on PyTorch from the original weights (test/fixtures/embed-reference.py).
 */
interface ReferenceCase {
  name: string;
  text: string;
  token_count: number;
  vector: number[];
}
const reference = JSON.parse(readFileSync(new URL('../fixtures/embed-reference.json', import.meta.url), 'utf8')) as {
  max_seq_length: number;
  cases: ReferenceCase[];
};
const referenceCase = (name: string): ReferenceCase => reference.cases.find((c) => c.name === name)!;

const model = findLocalTestModel();
if (model.missing && !model.required) console.warn(`embed-local-model tests skipped: ${model.missing}`);

function maxAbsDifference(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

function norm(v: Float32Array): number {
  return Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
}

describe.skipIf(model.missing !== undefined && !model.required)('local all-MiniLM-L6-v2 (ONNX)', () => {
  let embedder: Embedder;
  let tokenizer: ModelTokenizer;

  beforeAll(async () => {
    if (model.missing) throw new Error(model.missing);
    tokenizer = new ModelTokenizer(JSON.parse(readFileSync(model.files.tokenizer, 'utf8')) as unknown, 256);
    embedder = await openLocalOnnxEmbedder({ files: model.files, pin: model.pin, batchSize: 16 });
  });
  afterAll(async () => {
    if (!model.missing) await embedder.close();
  });

  it('says which model it is and how long its vectors are', () => {
    expect(embedder.model).toBe('all-MiniLM-L6-v2');
    expect(embedder.dimensions).toBe(384);
  });

  it('tokenises the reference texts into as many word pieces as the Rust tokenizer', () => {
    for (const c of reference.cases) expect(tokenizer.countPieces(c.text) + 2, c.name).toBe(c.token_count);
    expect(referenceCase('long').token_count).toBeGreaterThan(reference.max_seq_length);
  });

  it('matches the sentence-transformers reference vectors (cosine ≥ 0.999, each dimension within 1e-4)', async () => {
    const vectors = await embedder.embed(reference.cases.map((c) => c.text));
    reference.cases.forEach((c, i) => {
      const expected = Float32Array.from(c.vector);
      const actual = vectors[i]!;
      expect(actual).toHaveLength(384);
      expect(cosine(actual, expected), c.name).toBeGreaterThanOrEqual(0.999);
      expect(maxAbsDifference(actual, expected), c.name).toBeLessThanOrEqual(1e-4);
    });
  });

  it('returns unit vectors in input order, for an empty text too', async () => {
    const texts = ['', 'Stocks fell sharply in Tokyo.', referenceCase('short').text];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) expect(norm(v)).toBeCloseTo(1, 5);
    expect(cosine(vectors[2]!, Float32Array.from(referenceCase('short').vector))).toBeGreaterThan(0.999);
    expect(await embedder.embed([])).toEqual([]);
  });

  it('puts a paraphrase closer than an unrelated sentence', async () => {
    const [query, paraphrase, unrelated] = await embedder.embed([
      'The president signed the climate bill into law on Friday.',
      'On Friday the climate legislation was signed into law by the president.',
      'The striker scored twice as the home side won the cup final.',
    ]);
    const near = cosine(query!, paraphrase!);
    const far = cosine(query!, unrelated!);
    expect(near).toBeGreaterThan(0.8);
    expect(far).toBeLessThan(0.3);
    expect(near).toBeGreaterThan(far);
  });

  it('gives the same vectors in batches as one by one (padding does not leak into the mean)', async () => {
    const texts = Array.from(
      { length: 37 },
      (_, i) =>
        `Report ${i}: ` +
        'the council met again to discuss the budget and the new tram line. '.repeat(1 + (i % 7)) +
        (i % 3 === 0 ? referenceCase('accents').text : ''),
    );
    const batched = await embedder.embed(texts);
    for (const [i, text] of texts.entries()) {
      const [single] = await embedder.embed([text]);
      expect(maxAbsDifference(batched[i]!, single!), `text ${i}`).toBeLessThan(1e-5);
    }
  });

  it('truncates at 256 word pieces instead of refusing: what follows the limit changes nothing', async () => {
    const long = referenceCase('long').text;
    expect(tokenizer.encode(long)).toHaveLength(256);
    const huge = `${long} ${'An entirely different story about volcanoes and rare birds. '.repeat(20_000)}`;
    expect(huge.length).toBeGreaterThan(1_000_000);
    expect(tokenizer.encode(huge)).toEqual(tokenizer.encode(long));
    const [a, b] = await embedder.embed([long, huge]);
    expect(maxAbsDifference(a!, b!)).toBeLessThan(1e-5);
  });

  it('keeps a token run without whitespace intact when cutting long input', () => {
    const noSpaces = 'x'.repeat(10_000);
    expect(tokenizer.encode(noSpaces)).toEqual(tokenizer.encode(noSpaces.slice(0, 9_999)));
    const encoded = tokenizer.encode('word '.repeat(300));
    expect(encoded).toHaveLength(256);
    expect(encoded[0]).toBe(tokenizer.encode('')[0]);
    expect(encoded[255]).toBe(tokenizer.encode('')[1]);
  });

  it('runs concurrent calls on two workers with the same results', async () => {
    const two = await openLocalOnnxEmbedder({ files: model.files, pin: model.pin, batchSize: 4, concurrency: 2 });
    try {
      const texts = reference.cases.map((c) => c.text);
      const results = await Promise.all([two.embed(texts), two.embed([...texts].reverse()), two.embed(texts)]);
      results[1].reverse();
      for (const result of results) {
        result.forEach((v, i) => {
          expect(cosine(v, Float32Array.from(reference.cases[i]!.vector))).toBeGreaterThan(0.999);
        });
      }
    } finally {
      await two.close();
    }
  });

  it('refuses work after close', async () => {
    const closing = await openLocalOnnxEmbedder({ files: model.files, pin: model.pin });
    await closing.close();
    const error = await closing.embed(['hello']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderError);
    expect((error as EmbedderError).code).toBe('embedder_unavailable');
  });
});

describe('local embedder without its model', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'neon-embed-missing-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('fails with model_missing, not retriable, and says how to get it', async () => {
    const error = await openLocalOnnxEmbedder({
      files: { onnx: join(dir, 'model.onnx'), tokenizer: join(dir, 'tokenizer.json') },
      pin: { name: 'all-MiniLM-L6-v2', dimensions: 384, maxTokens: 256 },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderError);
    expect((error as EmbedderError).code).toBe('model_missing');
    expect((error as EmbedderError).retriable).toBe(false);
    expect((error as EmbedderError).message).toContain('infra prepare');
  });

  it('fails with model_missing when the ONNX file is not a model', async () => {
    const broken = join(dir, 'broken.onnx');
    await writeFile(broken, 'this is not an ONNX graph');
    const error = await OnnxInferencePool.open({
      modelPath: broken,
      dimensions: 384,
      workers: 2,
      intraOpNumThreads: 1,
      maxQueuedBatches: 4,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderError);
    expect((error as EmbedderError).code).toBe('model_missing');
    expect((error as EmbedderError).message).toContain('cannot load the ONNX model');
  });
});

describe('padBatch', () => {
  it('right-pads rows to the longest and masks only real tokens', () => {
    const batch = padBatch(
      [
        [101, 7, 102],
        [101, 102],
      ],
      0,
    );
    expect(batch.rows).toBe(2);
    expect(batch.columns).toBe(3);
    expect([...batch.ids]).toEqual([101n, 7n, 102n, 101n, 102n, 0n]);
    expect([...batch.mask]).toEqual([1n, 1n, 1n, 1n, 1n, 0n]);
  });
});

import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashFile } from '../../infra/checksums.js';
import { EmbedderError, type Embedder, type EmbeddingPurpose } from '../../processors/embed/embedder.js';
import { openLocalOnnxEmbedder, padBatch } from '../../streams/embed/local-onnx-embedder.js';
import { LOCAL_MODEL_NAMES, type LocalModelName, type SentencePooling } from '../../processors/embed/model-pins.js';
import { cosine } from '../../processors/embed/normalize-vector.js';
import { OnnxInferencePool } from '../../streams/embed/onnx-inference-pool.js';
import { ModelTokenizer } from '../../processors/embed/tokenize-for-model.js';
import { localTestModel, MODEL_DOWNLOAD_TIMEOUT_MS, type LocalTestModel } from '../fixtures/embed-local-model.js';

/**
 * The real local models (ONNX, onnxruntime-node, tokenizers.js). all-MiniLM-L6-v2 is checked
 * against vectors computed by sentence-transformers on PyTorch from the original weights
 * (test/fixtures/embed-reference.py); every model's pooling against the graph's own token vectors,
 * pooled here by hand.
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

const BGE_INSTRUCTION = 'Represent this sentence for searching relevant passages: ';

function maxAbsDifference(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

function norm(v: Float32Array): number {
  return Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
}

function readTokenizer(model: LocalTestModel): ModelTokenizer {
  return new ModelTokenizer(JSON.parse(readFileSync(model.files.tokenizer, 'utf8')) as unknown, model.pin.maxTokens);
}

/**
 * Both poolings of one text, computed here from the graph's `last_hidden_state` (onnxruntime on this
 * thread, one text, no padding): the [CLS] row, and the mean of all rows, each scaled to unit length.
 */
async function pooledByHand(
  session: ort.InferenceSession,
  ids: number[],
  dimensions: number,
): Promise<Record<SentencePooling, Float32Array>> {
  const shape = [1, ids.length];
  const output = await session.run({
    input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), shape),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), shape),
    token_type_ids: new ort.Tensor('int64', new BigInt64Array(ids.length), shape),
  });
  const states = output.last_hidden_state!.data as Float32Array;
  const unit = (v: Float64Array): Float32Array => {
    const length = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
    return Float32Array.from(v, (x) => x / length);
  };
  const mean = new Float64Array(dimensions);
  for (let t = 0; t < ids.length; t++) for (let d = 0; d < dimensions; d++) mean[d]! += states[t * dimensions + d]!;
  return { cls: unit(Float64Array.from(states.subarray(0, dimensions))), mean: unit(mean) };
}

describe('local all-MiniLM-L6-v2 (ONNX) against sentence-transformers', () => {
  let model: LocalTestModel;
  let embedder: Embedder;
  let tokenizer: ModelTokenizer;

  beforeAll(async () => {
    model = await localTestModel('all-MiniLM-L6-v2');
    tokenizer = readTokenizer(model);
    embedder = await openLocalOnnxEmbedder({ files: model.files, pin: model.pin, batchSize: 16 });
  }, MODEL_DOWNLOAD_TIMEOUT_MS);
  afterAll(async () => {
    // Undefined when the model could not be had: beforeAll failed and said why.
    await (embedder as Embedder | undefined)?.close();
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

  it('embeds a query exactly as a document: the model has no instruction', async () => {
    const texts = ['Los Angeles wildfires', referenceCase('short').text];
    const asQueries = await embedder.embed(texts, 'query');
    const asDocuments = await embedder.embed(texts, 'document');
    const byDefault = await embedder.embed(texts);
    texts.forEach((_, i) => {
      expect(maxAbsDifference(asQueries[i]!, asDocuments[i]!)).toBe(0);
      expect(maxAbsDifference(byDefault[i]!, asDocuments[i]!)).toBe(0);
    });
  });

  it('refuses a purpose it does not know', async () => {
    await expect(embedder.embed(['x'], 'question' as EmbeddingPurpose)).rejects.toThrow(RangeError);
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

describe('every pinned local model', () => {
  const models = new Map<LocalModelName, LocalTestModel>();
  beforeAll(async () => {
    // One at a time: a first download goes through one Maven.
    for (const name of LOCAL_MODEL_NAMES) models.set(name, await localTestModel(name));
  }, MODEL_DOWNLOAD_TIMEOUT_MS);

  it('is in the cache with exactly the pinned bytes', async () => {
    for (const { pin, files } of models.values()) {
      expect(await hashFile(files.onnx, 'sha256'), pin.name).toBe(pin.onnxSha256);
      expect(await hashFile(files.tokenizer, 'sha256'), pin.name).toBe(pin.tokenizerSha256);
    }
  });

  it.each(LOCAL_MODEL_NAMES)(
    '%s pools as its pin says (all-MiniLM-L6-v2: mean, bge-small-en-v1.5: CLS), not the other way',
    async (name) => {
      const model = models.get(name)!;
      const expected: Record<LocalModelName, SentencePooling> = {
        'all-MiniLM-L6-v2': 'mean',
        'all-MiniLM-L6-v2-q': 'mean',
        'bge-small-en-v1.5': 'cls',
        'bge-small-en-v1.5-q': 'cls',
      };
      expect(model.pin.pooling).toBe(expected[name]);
      const other: SentencePooling = model.pin.pooling === 'cls' ? 'mean' : 'cls';
      const tokenizer = readTokenizer(model);
      const session = await ort.InferenceSession.create(model.files.onnx, { intraOpNumThreads: 1 });
      const embedder = await openLocalOnnxEmbedder({ files: model.files, pin: model.pin });
      try {
        const texts = [referenceCase('short').text, referenceCase('accents').text, 'Tokyo earthquake'];
        const vectors = await embedder.embed(texts);
        for (const [i, text] of texts.entries()) {
          const byHand = await pooledByHand(session, tokenizer.encode(text), model.pin.dimensions);
          expect(maxAbsDifference(vectors[i]!, byHand[model.pin.pooling]), text).toBeLessThan(1e-5);
          expect(maxAbsDifference(vectors[i]!, byHand[other]), text).toBeGreaterThan(1e-2);
        }
      } finally {
        await embedder.close();
        await session.release();
      }
    },
  );

  it('the inference pool pools one graph either way when told to', async () => {
    const model = models.get('bge-small-en-v1.5')!;
    const tokenizer = readTokenizer(model);
    const ids = tokenizer.encode(referenceCase('short').text);
    const session = await ort.InferenceSession.create(model.files.onnx, { intraOpNumThreads: 1 });
    const byHand = await pooledByHand(session, ids, 384);
    await session.release();
    for (const pooling of ['cls', 'mean'] as const) {
      const pool = await OnnxInferencePool.open({
        modelPath: model.files.onnx,
        dimensions: 384,
        pooling,
        workers: 1,
        intraOpNumThreads: 1,
        maxQueuedBatches: 4,
      });
      try {
        const vector = await pool.run(padBatch([ids], tokenizer.padId));
        expect(maxAbsDifference(vector, byHand[pooling]), pooling).toBeLessThan(1e-5);
      } finally {
        await pool.close();
      }
    }
  });

  it('bge-small-en-v1.5 gives the same vectors in batches as one by one (padding does not reach the [CLS] vector)', async () => {
    const model = models.get('bge-small-en-v1.5')!;
    const single = await openLocalOnnxEmbedder({ files: model.files, pin: model.pin });
    const batching = await openLocalOnnxEmbedder({ files: model.files, pin: model.pin, batchSize: 8 });
    try {
      const texts = Array.from(
        { length: 12 },
        (_, i) => `Report ${i}: ` + 'the council met again to discuss the budget. '.repeat(1 + (i % 5)),
      );
      const batched = await batching.embed(texts);
      const alone = await single.embed(texts);
      texts.forEach((_, i) => expect(maxAbsDifference(batched[i]!, alone[i]!), `text ${i}`).toBeLessThan(1e-5));
    } finally {
      await single.close();
      await batching.close();
    }
  });

  it('refuses to batch the quantised models, whose int8 activations are scaled over the whole batch', async () => {
    for (const name of ['all-MiniLM-L6-v2-q', 'bge-small-en-v1.5-q'] as const) {
      const { pin, files } = models.get(name)!;
      expect(pin.oneTextPerInference).toBe(true);
      await expect(openLocalOnnxEmbedder({ files, pin, batchSize: 2 })).rejects.toThrow(/one text per inference/);
    }
    for (const name of ['all-MiniLM-L6-v2', 'bge-small-en-v1.5'] as const) {
      expect(models.get(name)!.pin.oneTextPerInference).toBe(false);
    }
  });
});

describe.each(['bge-small-en-v1.5', 'bge-small-en-v1.5-q'] as const)('local %s (ONNX)', (name) => {
  let model: LocalTestModel;
  let embedder: Embedder;
  let tokenizer: ModelTokenizer;

  beforeAll(async () => {
    model = await localTestModel(name);
    tokenizer = readTokenizer(model);
    embedder = await openLocalOnnxEmbedder({ files: model.files, pin: model.pin });
  }, MODEL_DOWNLOAD_TIMEOUT_MS);
  afterAll(async () => {
    // Undefined when the model could not be had: beforeAll failed and said why.
    await (embedder as Embedder | undefined)?.close();
  });

  it('says which model it is, how long its vectors are and how many word pieces it reads', () => {
    expect(embedder.model).toBe(name);
    expect(embedder.dimensions).toBe(384);
    expect(model.pin.maxTokens).toBe(512);
    expect(model.pin.queryInstruction).toBe(BGE_INSTRUCTION);
  });

  it('prepends the instruction to queries only', async () => {
    const questions = ['What did the central bank decide about interest rates?', 'Los Angeles wildfires'];
    const asQueries = await embedder.embed(questions, 'query');
    const withInstruction = await embedder.embed(questions.map((q) => BGE_INSTRUCTION + q));
    const asDocuments = await embedder.embed(questions, 'document');
    const byDefault = await embedder.embed(questions);
    questions.forEach((q, i) => {
      expect(maxAbsDifference(asQueries[i]!, withInstruction[i]!), q).toBeLessThan(1e-6);
      expect(maxAbsDifference(byDefault[i]!, asDocuments[i]!), q).toBe(0);
      expect(cosine(asQueries[i]!, asDocuments[i]!), q).toBeLessThan(0.99);
    });
  });

  it('finds the passage that answers a query above an unrelated one', async () => {
    const [query] = await embedder.embed(['What did the central bank decide about interest rates?'], 'query');
    const [answer, unrelated] = await embedder.embed([
      referenceCase('short').text,
      'The striker scored twice as the home side won the cup final.',
    ]);
    expect(cosine(query!, answer!)).toBeGreaterThan(cosine(query!, unrelated!) + 0.1);
  });

  it('reads 512 word pieces and truncates beyond: what follows the limit changes nothing', async () => {
    const long = `${referenceCase('long').text} ${referenceCase('long').text}`;
    expect(tokenizer.countPieces(long)).toBeGreaterThan(600);
    expect(tokenizer.encode(long)).toHaveLength(512);
    const longer = `${long} ${'An entirely different story about volcanoes and rare birds. '.repeat(2_000)}`;
    expect(tokenizer.encode(longer)).toEqual(tokenizer.encode(long));
    const [a, b] = await embedder.embed([long, longer]);
    expect(maxAbsDifference(a!, b!)).toBeLessThan(1e-5);
    // Word pieces past the 410th still count (all-MiniLM-L6-v2 stops at 256).
    const head = referenceCase('long').text;
    const [shorter] = await embedder.embed([head]);
    expect(maxAbsDifference(shorter!, a!)).toBeGreaterThan(1e-3);
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
      pin: { name: 'all-MiniLM-L6-v2', dimensions: 384, maxTokens: 256, pooling: 'mean', oneTextPerInference: false },
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
      pooling: 'mean',
      workers: 2,
      intraOpNumThreads: 1,
      maxQueuedBatches: 4,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderError);
    expect((error as EmbedderError).code).toBe('model_missing');
    expect((error as EmbedderError).message).toContain('cannot load the ONNX model');
  });

  it('refuses a pooling it does not know', async () => {
    await expect(
      OnnxInferencePool.open({
        modelPath: join(dir, 'model.onnx'),
        dimensions: 384,
        pooling: 'max' as SentencePooling,
        workers: 1,
        intraOpNumThreads: 1,
        maxQueuedBatches: 4,
      }),
    ).rejects.toThrow(/pooling must be mean or cls/);
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

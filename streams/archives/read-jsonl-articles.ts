/**
 * Streaming reader for JSONL article files (or any byte stream such as stdin), gzip transparently.
 *
 * Delivery: every non-blank line comes out exactly once, in file order, with its original bytes, as
 * either an ArticleInput or a rejection — a bad line never ends the stream. Rejection reasons:
 * `invalid_utf8`, `invalid_json`, `invalid_input` (wrong shape), `oversized` (longer than
 * `maxLineBytes`). Read errors of the stream itself (a missing file, a truncated gzip) are thrown:
 * they are not about one line.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { IntakeRejection, type ArticleInput } from '../../processors/intake/article-input.js';
import { decodeUtf8 } from '../../processors/intake/decode-body.js';
import { parseArticleLine } from '../../processors/intake/article-line.js';

export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

export interface ReadJsonlOptions {
  /** A longer line is reported as `oversized` (its first bytes kept as `raw`) and skipped. Default 16 MiB. */
  maxLineBytes?: number;
}

/** One parsed JSON line: `value` or `error`, never both. `line` counts from 1, blank lines included. */
export type JsonLine =
  | { line: number; raw: Buffer; value: unknown; error?: undefined }
  | { line: number; raw: Buffer; value?: undefined; error: IntakeRejection };

export type JsonlArticleLine =
  | { line: number; raw: Buffer; input: ArticleInput; error?: undefined }
  | { line: number; raw: Buffer; input?: undefined; error: IntakeRejection };

/** Article lines of a JSONL file path or byte stream (gzip detected by its magic bytes). */
export async function* readJsonlArticles(
  source: string | Readable,
  options: ReadJsonlOptions = {},
): AsyncGenerator<JsonlArticleLine> {
  for await (const item of readJsonLines(source, options)) {
    if (item.error !== undefined) {
      yield item;
      continue;
    }
    try {
      yield { line: item.line, raw: item.raw, input: parseArticleLine(item.value) };
    } catch (err) {
      if (!(err instanceof IntakeRejection)) throw err;
      yield { line: item.line, raw: item.raw, error: err };
    }
  }
}

/** Any JSONL: each non-blank line decoded as UTF-8 and parsed as JSON. */
export async function* readJsonLines(
  source: string | Readable,
  options: ReadJsonlOptions = {},
): AsyncGenerator<JsonLine> {
  for await (const { line, raw, truncated } of readLines(source, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES)) {
    if (truncated) {
      yield { line, raw, error: new IntakeRejection('oversized', `line ${line} is longer than ${raw.length} bytes`) };
      continue;
    }
    let text: string;
    try {
      text = decodeUtf8(raw);
    } catch (err) {
      if (!(err instanceof IntakeRejection)) throw err;
      yield { line, raw, error: err };
      continue;
    }
    if (line === 1 && text.startsWith('\uFEFF')) text = text.slice(1);
    if (text.trim() === '') continue;
    try {
      yield { line, raw, value: JSON.parse(text) as unknown };
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      yield { line, raw, error: new IntakeRejection('invalid_json', `line ${line}: ${reason}`) };
    }
  }
}

interface RawLine {
  line: number;
  raw: Buffer;
  truncated: boolean;
}

/**
 * Splits bytes on `\n` (dropping a trailing `\r`) without decoding, so `raw` is exactly what the
 * file held. Memory is bounded by `maxLineBytes`: the rest of a longer line is skipped.
 */
async function* readLines(source: string | Readable, maxLineBytes: number): AsyncGenerator<RawLine> {
  let line = 0;
  const current = { parts: [] as Buffer[], length: 0, truncated: false };
  const finish = (): RawLine => {
    line += 1;
    const { parts, length, truncated } = current;
    let raw = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
    if (!truncated && raw.length > 0 && raw[raw.length - 1] === 0x0d) raw = raw.subarray(0, raw.length - 1);
    current.parts = [];
    current.length = 0;
    current.truncated = false;
    return { line, raw, truncated };
  };
  const append = (bytes: Buffer): void => {
    if (current.truncated) return;
    const room = maxLineBytes - current.length;
    if (bytes.length > room) {
      current.truncated = true;
      if (room > 0) {
        current.parts.push(bytes.subarray(0, room));
        current.length += room;
      }
      return;
    }
    current.parts.push(bytes);
    current.length += bytes.length;
  };
  for await (const chunk of decompressed(source)) {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) break;
      append(chunk.subarray(start, newline));
      yield finish();
      start = newline + 1;
    }
    if (start < chunk.length) append(chunk.subarray(start));
  }
  if (current.length > 0 || current.truncated) yield finish();
}

/** The stream's bytes, gunzipped when they start with the gzip magic number (1f 8b). */
async function* decompressed(source: string | Readable): AsyncGenerator<Buffer> {
  const input = typeof source === 'string' ? createReadStream(source) : source;
  const iterator = (input as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  try {
    const head: Buffer[] = [];
    let headLength = 0;
    // Two bytes decide; a pipe may hand over fewer in its first chunk.
    while (headLength < 2) {
      const next = await iterator.next();
      if (next.done === true) break;
      const chunk = toBuffer(next.value);
      head.push(chunk);
      headLength += chunk.length;
    }
    const start = Buffer.concat(head);
    const rest = async function* (): AsyncGenerator<Buffer> {
      if (start.length > 0) yield start;
      for (;;) {
        const next = await iterator.next();
        if (next.done === true) return;
        yield toBuffer(next.value);
      }
    };
    if (start[0] !== 0x1f || start[1] !== 0x8b) {
      yield* rest();
      return;
    }
    const gunzip = createGunzip();
    // The pipeline destroys gunzip with the source's error, so iterating gunzip throws it here.
    pipeline(Readable.from(rest()), gunzip).catch(() => undefined);
    for await (const chunk of gunzip as AsyncIterable<Buffer>) yield chunk;
  } finally {
    await iterator.return?.();
  }
}

function toBuffer(chunk: Buffer | string): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
}

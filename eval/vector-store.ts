/**
 * Vectors on disk, keyed by a 32-byte digest, for the evaluations and benchmarks that embed the
 * same texts run after run. A folder of immutable segment files, each written whole to a temporary
 * name, synced, then renamed into place: a crash leaves a complete segment or none (a stray
 * temporary file is ignored, and removed once it is old), never a half-written one that would be
 * read back. Segments that do not add up (size, header) are skipped with a warning, not trusted.
 *
 * Segment layout (little-endian): `NEONVEC1` (8 bytes), dimensions (u32), count (u32), then the
 * count keys (32 bytes each), then the count vectors (float32 × dimensions each). The keys come
 * first so that opening reads only them: memory holds the key index (about 100 bytes a vector) and
 * at most `flushEvery` vectors not yet written; a vector is read from disk when asked for.
 *
 * Several processes may share a folder: each writes segments under its own names, and a merge
 * removes only the segments it merged (a reader that had them open keeps reading them; one that
 * lists the folder a moment later finds the merged segment instead).
 */
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

const MAGIC = Buffer.from('NEONVEC1', 'latin1');
const HEADER_BYTES = 16;
export const KEY_BYTES = 32;
const SEGMENT_SUFFIX = '.vec';
const TEMPORARY_SUFFIX = '.tmp';
/** A temporary file older than this belongs to a writer that died. */
const STALE_TEMPORARY_MS = 60 * 60 * 1000;
const BIG_ENDIAN = endianness() === 'BE';

export interface VectorStoreOptions {
  /** Unwritten vectors held before they are written as a segment (default 2,048, some 3 MB at 384 dimensions). */
  flushEvery?: number;
  /** More segments than this at opening are merged into one (default 32). */
  mergeAbove?: number;
  /** Warnings (a skipped segment); never fails an evaluation. */
  log?: (line: string) => void;
}

interface Segment {
  path: string;
  fd: number;
  count: number;
  vectorsAt: number;
}

export class VectorStore {
  readonly #dir: string;
  readonly #dimensions: number;
  readonly #flushEvery: number;
  readonly #log: (line: string) => void;
  readonly #segments: Segment[] = [];
  /** Key (as a 32-character latin1 string) → segment number × 2^26 + row. */
  readonly #index = new Map<string, number>();
  readonly #pending = new Map<string, Float32Array>();
  #closed = false;

  private constructor(dir: string, dimensions: number, options: VectorStoreOptions) {
    this.#dir = dir;
    this.#dimensions = dimensions;
    this.#flushEvery = options.flushEvery ?? 2_048;
    this.#log = options.log ?? (() => undefined);
  }

  /** Opens (creating it if need be) the store in `dir` for vectors of `dimensions` floats. */
  static open(dir: string, dimensions: number, options: VectorStoreOptions = {}): VectorStore {
    if (!Number.isInteger(dimensions) || dimensions < 1) throw new RangeError('dimensions must be a positive integer');
    mkdirSync(dir, { recursive: true });
    const store = new VectorStore(dir, dimensions, options);
    store.#removeStaleTemporaries();
    for (const name of store.#segmentNames()) store.#load(name);
    if (store.#segments.length > (options.mergeAbove ?? 32)) store.#merge();
    return store;
  }

  get dimensions(): number {
    return this.#dimensions;
  }

  /** Vectors stored or waiting to be written. */
  get size(): number {
    return this.#index.size + this.#pending.size;
  }

  /** Segment files in use (after any merge at opening). */
  get segmentCount(): number {
    return this.#segments.length;
  }

  has(key: Uint8Array): boolean {
    const k = keyString(key);
    return this.#pending.has(k) || this.#index.has(k);
  }

  /** The vector stored under `key` (a fresh copy), or undefined. */
  get(key: Uint8Array): Float32Array | undefined {
    this.#checkOpen();
    const k = keyString(key);
    const waiting = this.#pending.get(k);
    if (waiting) return waiting.slice();
    const at = this.#index.get(k);
    if (at === undefined) return undefined;
    const segment = this.#segments[Math.floor(at / 2 ** 26)]!;
    const row = at % 2 ** 26;
    const vector = new Float32Array(this.#dimensions);
    const bytes = new Uint8Array(vector.buffer);
    const read = readSync(segment.fd, bytes, 0, bytes.length, segment.vectorsAt + row * bytes.length);
    if (read !== bytes.length) throw new Error(`${segment.path}: short read at row ${row}`);
    if (BIG_ENDIAN) Buffer.from(vector.buffer).swap32();
    return vector;
  }

  /** Stores a copy of `vector` under `key` (the first one stored for a key stays). */
  put(key: Uint8Array, vector: Float32Array): void {
    this.#checkOpen();
    if (vector.length !== this.#dimensions) {
      throw new RangeError(`a vector of ${vector.length} floats in a store of ${this.#dimensions}`);
    }
    const k = keyString(key);
    if (this.#pending.has(k) || this.#index.has(k)) return;
    this.#pending.set(k, vector.slice());
    if (this.#pending.size >= this.#flushEvery) this.flush();
  }

  /** Writes the waiting vectors as one new segment. */
  flush(): void {
    this.#checkOpen();
    if (this.#pending.size === 0) return;
    const entries = [...this.#pending.entries()];
    const name = this.#writeSegment(
      entries.length,
      entries.map(([k]) => k),
      entries.map(([, v]) => v),
    );
    this.#pending.clear();
    this.#load(name);
  }

  /** Writes what waits and releases the files. Further use throws. */
  close(): void {
    if (this.#closed) return;
    this.flush();
    for (const segment of this.#segments) closeSync(segment.fd);
    this.#closed = true;
  }

  #checkOpen(): void {
    if (this.#closed) throw new Error('the vector store is closed');
  }

  #segmentNames(): string[] {
    return readdirSync(this.#dir)
      .filter((name) => name.endsWith(SEGMENT_SUFFIX))
      .sort();
  }

  #removeStaleTemporaries(): void {
    for (const name of readdirSync(this.#dir)) {
      if (!name.endsWith(TEMPORARY_SUFFIX)) continue;
      const path = join(this.#dir, name);
      try {
        if (Date.now() - statSync(path).mtimeMs > STALE_TEMPORARY_MS) unlinkSync(path);
      } catch {
        // Another process removed or renamed it meanwhile.
      }
    }
  }

  /** Adds one segment's keys to the index; a segment that does not add up is skipped. */
  #load(name: string): void {
    const path = join(this.#dir, name);
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (error) {
      // Merged away by another process between the listing and now: its vectors are in the merged segment.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    const size = statSync(path).size;
    const header = Buffer.alloc(HEADER_BYTES);
    const problem = (): string | undefined => {
      if (size < HEADER_BYTES || readSync(fd, header, 0, HEADER_BYTES, 0) !== HEADER_BYTES) return 'too short';
      if (!header.subarray(0, MAGIC.length).equals(MAGIC)) return 'not a vector segment';
      const dimensions = header.readUInt32LE(8);
      if (dimensions !== this.#dimensions) return `${dimensions} dimensions, not ${this.#dimensions}`;
      const count = header.readUInt32LE(12);
      const expected = HEADER_BYTES + count * (KEY_BYTES + dimensions * 4);
      if (size !== expected) return `${size} bytes where ${count} vectors take ${expected}`;
      return undefined;
    };
    const wrong = problem();
    if (wrong !== undefined) {
      closeSync(fd);
      this.#log(`vector cache: ${path} skipped (${wrong})`);
      return;
    }
    const count = header.readUInt32LE(12);
    const keys = Buffer.alloc(count * KEY_BYTES);
    if (readSync(fd, keys, 0, keys.length, HEADER_BYTES) !== keys.length) {
      closeSync(fd);
      this.#log(`vector cache: ${path} skipped (short read)`);
      return;
    }
    const number = this.#segments.length;
    this.#segments.push({ path, fd, count, vectorsAt: HEADER_BYTES + keys.length });
    for (let row = 0; row < count; row += 1) {
      const k = keys.toString('latin1', row * KEY_BYTES, (row + 1) * KEY_BYTES);
      if (!this.#index.has(k)) this.#index.set(k, number * 2 ** 26 + row);
    }
  }

  /**
   * Writes a segment under a temporary name, syncs it, and renames it into place (atomic on one
   * file system); returns its name.
   */
  #writeSegment(count: number, keys: readonly string[], vectors: Iterable<Float32Array>): string {
    const unique = `${Date.now().toString(16).padStart(12, '0')}-${process.pid}-${randomBytes(4).toString('hex')}`;
    const name = `${unique}${SEGMENT_SUFFIX}`;
    const temporary = join(this.#dir, `${unique}${TEMPORARY_SUFFIX}`);
    const fd = openSync(temporary, 'wx');
    try {
      const header = Buffer.alloc(HEADER_BYTES);
      MAGIC.copy(header, 0);
      header.writeUInt32LE(this.#dimensions, 8);
      header.writeUInt32LE(count, 12);
      writeAll(fd, header);
      writeAll(fd, Buffer.from(keys.join(''), 'latin1'));
      // Vectors go out in blocks of about 1 MB: one write per vector would be slow, one for all large.
      const perBlock = Math.max(1, Math.floor(2 ** 20 / (this.#dimensions * 4)));
      let block = Buffer.alloc(perBlock * this.#dimensions * 4);
      let filled = 0;
      for (const vector of vectors) {
        Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).copy(block, filled * this.#dimensions * 4);
        filled += 1;
        if (filled === perBlock) {
          writeAll(fd, BIG_ENDIAN ? Buffer.from(block).swap32() : block);
          block = Buffer.alloc(block.length);
          filled = 0;
        }
      }
      const rest = block.subarray(0, filled * this.#dimensions * 4);
      writeAll(fd, BIG_ENDIAN ? Buffer.from(rest).swap32() : rest);
      fsyncSync(fd);
    } catch (error) {
      closeSync(fd);
      unlinkSync(temporary);
      throw error;
    }
    closeSync(fd);
    renameSync(temporary, join(this.#dir, name));
    syncDirectory(this.#dir);
    return name;
  }

  *#vectorsOf(keys: readonly string[]): Generator<Float32Array> {
    for (const k of keys) yield this.get(Buffer.from(k, 'latin1'))!;
  }

  /** All segments into one, written before the old ones are removed. */
  #merge(): void {
    const merged = [...this.#segments];
    const keys = [...this.#index.keys()];
    const name = this.#writeSegment(keys.length, keys, this.#vectorsOf(keys));
    for (const segment of merged) {
      closeSync(segment.fd);
      try {
        unlinkSync(segment.path);
      } catch {
        // Already gone: another process merged the same segments.
      }
    }
    this.#segments.length = 0;
    this.#index.clear();
    this.#load(name);
  }
}

function keyString(key: Uint8Array): string {
  if (key.length !== KEY_BYTES) throw new RangeError(`a key is ${KEY_BYTES} bytes (got ${key.length})`);
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
}

/** The rename itself survives a power cut only once the folder is synced. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse to sync a directory; the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

import { createHash } from 'node:crypto';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VectorStore } from '../vector-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'neon-vector-store-'));
  dirs.push(dir);
  return dir;
}
const key = (text: string) => createHash('sha256').update(text).digest();
const vector = (...values: number[]) => Float32Array.from(values);
const segments = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.vec'));

describe('VectorStore', () => {
  it('gives back exactly the float32 values stored, before and after they are written, and after reopening', () => {
    const dir = freshDir();
    const store = VectorStore.open(dir, 3);
    store.put(key('a'), vector(0.1, -0.2, 0.3));
    expect(Array.from(store.get(key('a'))!)).toEqual(Array.from(vector(0.1, -0.2, 0.3)));
    expect(segments(dir)).toHaveLength(0);
    store.close();
    expect(segments(dir)).toHaveLength(1);
    // 16-byte header + 32-byte key + 3 float32: binary, not JSON.
    expect(statSync(join(dir, segments(dir)[0]!)).size).toBe(16 + 32 + 12);

    const reopened = VectorStore.open(dir, 3);
    expect(reopened.size).toBe(1);
    expect(Array.from(reopened.get(key('a'))!)).toEqual(Array.from(vector(0.1, -0.2, 0.3)));
    expect(reopened.get(key('b'))).toBeUndefined();
    reopened.close();
  });

  it('writes a segment every flushEvery vectors, and keeps the first vector stored under a key', () => {
    const dir = freshDir();
    const store = VectorStore.open(dir, 2, { flushEvery: 2 });
    store.put(key('a'), vector(1, 0));
    store.put(key('a'), vector(0, 1));
    expect(segments(dir)).toHaveLength(0);
    store.put(key('b'), vector(0, 1));
    expect(segments(dir)).toHaveLength(1);
    store.put(key('b'), vector(1, 1));
    store.put(key('c'), vector(1, 1));
    store.close();
    const reopened = VectorStore.open(dir, 2);
    expect(Array.from(reopened.get(key('a'))!)).toEqual([1, 0]);
    expect(Array.from(reopened.get(key('b'))!)).toEqual([0, 1]);
    expect(Array.from(reopened.get(key('c'))!)).toEqual([1, 1]);
    expect(reopened.size).toBe(3);
    reopened.close();
  });

  it('hands out copies: changing a returned or stored array does not change the cache', () => {
    const store = VectorStore.open(freshDir(), 2);
    const stored = vector(1, 2);
    store.put(key('a'), stored);
    stored[0] = 9;
    const got = store.get(key('a'))!;
    got[1] = 9;
    expect(Array.from(store.get(key('a'))!)).toEqual([1, 2]);
    store.close();
  });

  it('ignores a half-written temporary file and skips a truncated or foreign segment with a warning', () => {
    const dir = freshDir();
    const store = VectorStore.open(dir, 2);
    store.put(key('a'), vector(1, 0));
    store.close();
    const good = segments(dir)[0]!;
    // A writer that died before its rename; and one "segment" cut short, one of another size.
    writeFileSync(join(dir, 'ffff-1-dead.tmp'), Buffer.alloc(10));
    const copy = (name: string, bytes: Buffer) => writeFileSync(join(dir, name), bytes);
    const whole = readFileSync(join(dir, good));
    copy('zz-truncated.vec', whole.subarray(0, whole.length - 3));
    copy('zz-foreign.vec', Buffer.from('not a vector segment at all'));
    const warnings: string[] = [];
    const reopened = VectorStore.open(dir, 2, { log: (line) => warnings.push(line) });
    expect(reopened.size).toBe(1);
    expect(Array.from(reopened.get(key('a'))!)).toEqual([1, 0]);
    expect(warnings.join('\n')).toMatch(/zz-truncated\.vec skipped \(\d+ bytes where 1 vectors take \d+\)/);
    expect(warnings.join('\n')).toMatch(/zz-foreign\.vec skipped/);
    expect(readdirSync(dir)).toContain('ffff-1-dead.tmp');
    reopened.close();
  });

  it('removes a temporary file once it is old, and skips segments of other dimensions', () => {
    const dir = freshDir();
    const store = VectorStore.open(dir, 3);
    store.put(key('a'), vector(1, 0, 0));
    store.close();
    const stale = join(dir, 'old-1-dead.tmp');
    writeFileSync(stale, Buffer.alloc(10));
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(stale, twoHoursAgo, twoHoursAgo);
    const warnings: string[] = [];
    const other = VectorStore.open(dir, 2, { log: (line) => warnings.push(line) });
    expect(other.size).toBe(0);
    expect(warnings.join('\n')).toMatch(/3 dimensions, not 2/);
    expect(readdirSync(dir)).not.toContain('old-1-dead.tmp');
    other.close();
  });

  it('merges many segments into one at opening, keeping every vector', () => {
    const dir = freshDir();
    for (let i = 0; i < 5; i += 1) {
      const store = VectorStore.open(dir, 2, { mergeAbove: 100 });
      store.put(key(`t${i}`), vector(i, -i));
      store.close();
    }
    expect(segments(dir)).toHaveLength(5);
    const merged = VectorStore.open(dir, 2, { mergeAbove: 3 });
    expect(merged.segmentCount).toBe(1);
    expect(segments(dir)).toHaveLength(1);
    for (let i = 0; i < 5; i += 1) expect(Array.from(merged.get(key(`t${i}`))!)).toEqual([i, -i]);
    merged.close();
  });

  it('refuses a vector of the wrong length, a key that is not 32 bytes, and use after close', () => {
    const store = VectorStore.open(freshDir(), 2);
    expect(() => store.put(key('a'), vector(1, 2, 3))).toThrow(/3 floats in a store of 2/);
    expect(() => store.get(Buffer.alloc(5))).toThrow(/32 bytes/);
    store.close();
    expect(() => store.get(key('a'))).toThrow(/closed/);
  });

  it('does not trust a segment cut short after it was written (its keys are not indexed)', () => {
    const dir = freshDir();
    const store = VectorStore.open(dir, 2);
    store.put(key('a'), vector(1, 2));
    store.close();
    truncateSync(join(dir, segments(dir)[0]!), 20);
    const reopened = VectorStore.open(dir, 2, { log: () => undefined });
    expect(reopened.has(key('a'))).toBe(false);
    reopened.close();
  });
});

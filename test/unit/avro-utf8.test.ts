import { describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord } from '../../schemas/avro-codec.js';
import { codecError, fixture, NOW } from './avro-fixtures.js';

/**
 * Avro strings are UTF-8. Bytes that are not must make the record `undecodable` (so the stage
 * dead-letters the original bytes), not turn silently into U+FFFD in an article or an entity name.
 */
const options = { now: NOW };
const TEXT = 'Zürich 東京 😀';

/** `bytes` with the first occurrence of `find` replaced by `replacement` (same length, so the framing holds). */
function corrupt(bytes: Buffer, find: Buffer, replacement: Buffer): Buffer {
  const at = bytes.indexOf(find);
  expect(at).toBeGreaterThanOrEqual(0);
  const copy = Buffer.from(bytes);
  replacement.copy(copy, at);
  return copy;
}

describe('UTF-8 inside Avro strings', () => {
  it('valid non-ASCII text round-trips unchanged', () => {
    const article = { ...fixture('Article'), title: TEXT };
    const encoded = encodeRecord('Article', article, options);
    expect(decodeRecord('Article', encoded.value, encoded.headers, options).title).toBe(TEXT);
  });

  it('a string field holding invalid UTF-8 (0xC3 0x28) is undecodable', () => {
    const article = { ...fixture('Article'), title: TEXT };
    const encoded = encodeRecord('Article', article, options);
    // "ü" is 0xC3 0xBC; 0xC3 followed by "(" is a lead byte without its continuation byte.
    const bytes = corrupt(encoded.value, Buffer.from('ü'), Buffer.from([0xc3, 0x28]));
    const error = codecError(() => decodeRecord('Article', bytes, encoded.headers, options));
    expect(error.code).toBe('undecodable');
    expect(error.message).toMatch(/UTF-8/);
    // The message names no field content.
    expect(error.message).not.toContain('Z');
  });

  it('a lone surrogate half and a cut-off emoji are undecodable too', () => {
    const article = { ...fixture('Article'), title: TEXT };
    const encoded = encodeRecord('Article', article, options);
    const emoji = Buffer.from('😀'); // F0 9F 98 80
    for (const replacement of [
      Buffer.from([0xed, 0xa0, 0x80, 0x20]), // U+D800 encoded as UTF-8: not allowed
      Buffer.from([0xf0, 0x9f, 0x98, 0x20]), // four-byte sequence missing its last byte
    ]) {
      const bytes = corrupt(encoded.value, emoji, replacement);
      expect(codecError(() => decodeRecord('Article', bytes, encoded.headers, options)).code).toBe('undecodable');
    }
  });

  it('a map key holding invalid UTF-8 is undecodable', () => {
    const answer = { ...fixture('Answer'), timings_ms: { Zürich: 1.5 } };
    const encoded = encodeRecord('Answer', answer, options);
    expect(decodeRecord('Answer', encoded.value, encoded.headers, options).timings_ms).toEqual({ Zürich: 1.5 });
    const bytes = corrupt(encoded.value, Buffer.from('ü'), Buffer.from([0xc3, 0x28]));
    expect(codecError(() => decodeRecord('Answer', bytes, encoded.headers, options)).code).toBe('undecodable');
  });
});

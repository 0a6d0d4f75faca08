import { describe, expect, it } from 'vitest';
import { charsetOf, decodeBody, decodeUtf8 } from '../../processors/intake/decode-body.js';
import { reasonOf } from './intake-rejections.js';

describe('decodeUtf8', () => {
  it('decodes valid UTF-8, including multi-byte characters', () => {
    expect(decodeUtf8(Buffer.from('Zürich – 東京 🌍', 'utf8'))).toBe('Zürich – 東京 🌍');
    expect(decodeUtf8(new Uint8Array([0x68, 0x69]))).toBe('hi');
    expect(decodeUtf8(new Uint8Array())).toBe('');
  });

  it('drops a UTF-8 byte-order mark', () => {
    expect(decodeUtf8(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]))).toBe('{"a":1}');
  });

  it('rejects invalid UTF-8 instead of inserting replacement characters', () => {
    for (const bytes of [[0xff], [0xc3], [0x61, 0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
      expect(
        reasonOf(() => decodeUtf8(Buffer.from(bytes))),
        bytes.join(','),
      ).toBe('invalid_utf8');
    }
  });
});

describe('decodeBody', () => {
  it('reads the charset parameter of a Content-Type', () => {
    expect(charsetOf('text/html; charset=ISO-8859-1')).toBe('iso-8859-1');
    expect(charsetOf('application/rss+xml;charset="utf-8"')).toBe('utf-8');
    expect(charsetOf('text/html')).toBeUndefined();
    expect(charsetOf(undefined)).toBeUndefined();
  });

  it('decodes latin-1 and windows-1252 bodies by their declared charset', () => {
    const bytes = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]);
    expect(decodeBody(bytes, 'text/html; charset=iso-8859-1')).toBe('café €');
    expect(decodeBody(bytes, 'text/html; charset=windows-1252')).toBe('café €');
    expect(decodeBody(Buffer.from([0x93, 0x68, 0x69, 0x94, 0x85]), 'text/plain; charset=latin1')).toBe('“hi”…');
  });

  it('is strict UTF-8 without a charset, with charset=utf-8 and with an unknown charset', () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]);
    expect(reasonOf(() => decodeBody(latin1))).toBe('invalid_utf8');
    expect(reasonOf(() => decodeBody(latin1, 'text/html; charset=utf-8'))).toBe('invalid_utf8');
    expect(reasonOf(() => decodeBody(latin1, 'text/html; charset=x-made-up'))).toBe('invalid_utf8');
    expect(decodeBody(Buffer.from('café'), 'text/html; charset=x-made-up')).toBe('café');
  });

  it('lets a UTF-8 byte-order mark win over a declared charset', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('café')]);
    expect(decodeBody(bytes, 'text/html; charset=iso-8859-1')).toBe('café');
  });

  it('rejects bytes that are invalid in a declared multi-byte charset', () => {
    expect(decodeBody(Buffer.from([0x82, 0xa0]), 'text/plain; charset=shift_jis')).toBe('あ');
    expect(reasonOf(() => decodeBody(Buffer.from([0x82]), 'text/plain; charset=shift_jis'))).toBe('invalid_utf8');
  });
});

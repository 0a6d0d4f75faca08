/**
 * Bytes to text for everything intake receives. UTF-8 is decoded strictly: a replacement
 * character silently inserted into an article would shift every entity offset computed on it and
 * hide a broken source, so undecodable bytes are a rejection instead.
 *
 * A body whose Content-Type names another charset the WHATWG Encoding Standard knows (e.g.
 * `iso-8859-1`, which it reads as windows-1252, or `shift_jis`) is decoded with that charset,
 * also strictly; an unknown label falls back to UTF-8. A UTF-8 byte-order mark wins over any
 * label, as in browsers.
 *
 * Rejection reason: `invalid_utf8` (for any body that is not valid in its charset).
 */
import { IntakeRejection } from './article-input.js';

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

function hasUtf8Bom(bytes: Uint8Array): boolean {
  return bytes[0] === UTF8_BOM[0] && bytes[1] === UTF8_BOM[1] && bytes[2] === UTF8_BOM[2];
}

/**
 * Bytes 0x80–0x9F of windows-1252 (WHATWG's reading of latin1/iso-8859-1 labels too); the five
 * it leaves undefined stay C1 controls. Written out because Node 20's TextDecoder decodes this
 * encoding as plain ISO-8859-1 and turns `€` and curly quotes into control characters.
 */
const WINDOWS_1252_HIGH =
  '\u20AC\u0081\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\u008D\u017D\u008F' +
  '\u0090\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\u009D\u017E\u0178';

function decodeWindows1252(bytes: Uint8Array): string {
  let text = '';
  const CHUNK = 8192;
  for (let start = 0; start < bytes.length; start += CHUNK) {
    const codes = Array.from(bytes.subarray(start, start + CHUNK), (byte) =>
      byte >= 0x80 && byte <= 0x9f ? WINDOWS_1252_HIGH.charCodeAt(byte - 0x80) : byte,
    );
    text += String.fromCharCode(...codes);
  }
  return text;
}

/** Strict UTF-8; a leading byte-order mark is dropped. Throws `invalid_utf8`. */
export function decodeUtf8(bytes: Buffer | Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new IntakeRejection('invalid_utf8', `body of ${bytes.byteLength} bytes is not valid UTF-8`);
  }
}

/** The charset parameter of a Content-Type header, lower-cased, without quotes. */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const match = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(contentType);
  return match?.[2]?.toLowerCase();
}

/** The WHATWG encoding name for a charset label, or undefined when the label is unknown. */
function encodingFor(label: string): string | undefined {
  try {
    return new TextDecoder(label).encoding;
  } catch {
    return undefined;
  }
}

/** Decodes a fetched or posted body by its Content-Type charset (default UTF-8). Throws `invalid_utf8`. */
export function decodeBody(bytes: Buffer | Uint8Array, contentType?: string): string {
  const label = charsetOf(contentType);
  const encoding = label === undefined || hasUtf8Bom(bytes) ? 'utf-8' : (encodingFor(label) ?? 'utf-8');
  if (encoding === 'utf-8') return decodeUtf8(bytes);
  if (encoding === 'windows-1252') return decodeWindows1252(bytes);
  try {
    return new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    throw new IntakeRejection('invalid_utf8', `body of ${bytes.byteLength} bytes is not valid ${encoding}`);
  }
}

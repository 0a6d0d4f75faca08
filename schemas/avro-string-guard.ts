import { isUtf8 } from 'node:buffer';
import avsc from 'avsc';
import type { Schema, Type } from 'avsc';

/**
 * avsc decodes an Avro string with Node's lenient UTF-8 decoder: bytes that are not UTF-8 become
 * U+FFFD, so a corrupt record would pass as a well-formed one with mangled text in an article or an
 * entity name. The spec says Avro strings are UTF-8; bytes that are not make the record
 * undecodable, and the stage dead-letters the original bytes with that reason.
 *
 * Like avro-collection-guard.ts, this is a subclass overriding avsc's private `_read`, handed to
 * `Type.forSchema` through its `typeHook` option (resolvers copy `_read` from the reader type, for
 * string → string and bytes → string alike). It mirrors avsc 5.7's `Tap.readString`; the hook
 * refuses to run if those internals are not where it expects them.
 */

interface Tap {
  buf: Buffer;
  pos: number;
  readLong(): number;
  _invalidate(): void;
}

/** Thrown from inside avsc's decode; the codec reports it as `undecodable`. */
export class InvalidUtf8Error extends Error {
  override readonly name = 'InvalidUtf8Error';
}

/**
 * One Avro string: its length, then that many bytes of UTF-8. Past the end of the buffer it returns
 * undefined as avsc does, and decode reports the truncation.
 */
export function readUtf8String(tap: Tap): string | undefined {
  const length = tap.readLong();
  if (length < 0) {
    tap._invalidate();
    return '';
  }
  const start = tap.pos;
  tap.pos += length;
  if (tap.pos > tap.buf.length) return undefined;
  // Validated natively first: the common case costs one pass more than avsc's own read.
  const bytes = tap.buf.subarray(start, tap.pos);
  if (!isUtf8(bytes)) throw new InvalidUtf8Error('a string is not valid UTF-8');
  return bytes.toString('utf8');
}

function assertInternals(): void {
  const proto = avsc.types.StringType.prototype as unknown as { _read?: unknown };
  if (typeof proto._read !== 'function') {
    throw new Error('avsc internals changed: the string type no longer has _read; review avro-string-guard.ts');
  }
}

class Utf8StringType extends avsc.types.StringType {
  _read(tap: Tap): string | undefined {
    return readUtf8String(tap);
  }
}

/**
 * `typeHook` for `Type.forSchema`: strings become the variant that refuses invalid UTF-8. The
 * registry passes no `logicalTypes`, so avsc reads every `{ type: 'string' }` as a plain string too.
 */
export function utf8StringsTypeHook(schema: Schema): Type | undefined {
  const isString =
    schema === 'string' ||
    (typeof schema === 'object' &&
      !Array.isArray(schema) &&
      !avsc.Type.isType(schema) &&
      (schema as { type?: unknown }).type === 'string');
  if (!isString) return undefined;
  assertInternals();
  return new Utf8StringType();
}

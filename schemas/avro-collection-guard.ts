import avsc from 'avsc';
import type { Schema, Type } from 'avsc';
import { readUtf8String } from './avro-string-guard.js';

/**
 * avsc trusts the item count at the head of each array and map block: a ten-byte poison message
 * claiming 2^31 items makes it loop billions of times over an exhausted buffer (minutes of CPU, then
 * an out-of-memory crash), and a negative block size in a skipped field moves the read position
 * backwards. Either would stop a partition, which the pipeline promises never happens. Every item
 * of every collection in our schemas takes at least one byte on the wire, so a block can never hold
 * more items than there are bytes left; reject such blocks up front.
 *
 * avsc types are frozen, so the guard is a pair of subclasses overriding avsc's private `_read` and
 * `_skip`, handed to `Type.forSchema` through its `typeHook` option (resolvers copy `_read` from the
 * reader type, so resolved reads are covered too). The code mirrors avsc 5.7's own readers; the
 * hook refuses to run if those internals are not where it expects them.
 */

interface Tap {
  buf: Buffer;
  pos: number;
  readLong(): number;
  skipLong(): void;
  readString(): string | undefined;
  skipString(): void;
  _invalidate(): void;
}

interface Internal {
  typeName: string;
  _read(this: Internal, tap: Tap): unknown;
  _skip(this: Internal, tap: Tap): void;
}

interface ArrayInternal extends Internal {
  itemsType: Internal;
}

interface MapInternal extends Internal {
  valuesType: Internal;
}

/** Thrown from inside avsc's decode; the codec reports it as `undecodable`. */
export class CollectionBoundsError extends Error {
  override readonly name = 'CollectionBoundsError';
}

function blockCount(tap: Tap): number {
  let n = tap.readLong();
  if (n < 0) {
    n = -n;
    if (tap.readLong() < 0) throw new CollectionBoundsError('negative block size');
  }
  if (n > tap.buf.length - tap.pos) {
    throw new CollectionBoundsError(`a block of ${n} items cannot fit in the ${tap.buf.length - tap.pos} bytes left`);
  }
  return n;
}

function readArray(this: ArrayInternal, tap: Tap): unknown[] {
  const items = this.itemsType;
  const result: unknown[] = [];
  for (let n = blockCount(tap); n > 0; n = blockCount(tap)) {
    while (n-- > 0) result.push(items._read(tap));
    // Past the end of the buffer every further read returns garbage; decode reports the overrun.
    if (tap.pos > tap.buf.length) return result;
  }
  return result;
}

function readMap(this: MapInternal, tap: Tap): Record<string, unknown> {
  const values = this.valuesType;
  const result: Record<string, unknown> = {};
  for (let n = blockCount(tap); n > 0; n = blockCount(tap)) {
    while (n-- > 0) {
      // Keys are Avro strings: invalid UTF-8 makes the record undecodable, as in a string field.
      const key = readUtf8String(tap) ?? '';
      // defineProperty, not assignment: a `__proto__` key must stay data, not replace the prototype.
      Object.defineProperty(result, key, {
        value: values._read(tap),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    if (tap.pos > tap.buf.length) return result;
  }
  return result;
}

function skipBlocks(tap: Tap, skipItem: () => void): void {
  for (;;) {
    let n = tap.readLong();
    if (n === 0) return;
    if (n < 0) {
      const size = tap.readLong();
      if (size < 0) throw new CollectionBoundsError('negative block size');
      tap.pos += size;
    } else {
      if (n > tap.buf.length - tap.pos) {
        throw new CollectionBoundsError(
          `a block of ${n} items cannot fit in the ${tap.buf.length - tap.pos} bytes left`,
        );
      }
      while (n-- > 0) skipItem();
    }
    if (tap.pos > tap.buf.length) return;
  }
}

function skipArray(this: ArrayInternal, tap: Tap): void {
  skipBlocks(tap, () => this.itemsType._skip(tap));
}

function skipMap(this: MapInternal, tap: Tap): void {
  skipBlocks(tap, () => {
    tap.skipString();
    this.valuesType._skip(tap);
  });
}

function childTypes(type: Type): Type[] {
  const t = type as unknown as {
    typeName: string;
    fields?: { type: Type }[];
    itemsType?: Type;
    valuesType?: Type;
    types?: Type[];
  };
  if (t.typeName === 'record' || t.typeName === 'error') return (t.fields ?? []).map((f) => f.type);
  if (t.typeName === 'array' && t.itemsType) return [t.itemsType];
  if (t.typeName === 'map' && t.valuesType) return [t.valuesType];
  if (t.typeName.startsWith('union') && t.types) return t.types;
  return [];
}

/** The fewest bytes a value of this type can take on the wire. */
function minEncodedBytes(type: Type): number {
  switch (type.typeName) {
    case 'null':
      return 0;
    case 'float':
      return 4;
    case 'double':
      return 8;
    case 'fixed':
      return (type as unknown as { size: number }).size;
    case 'record':
    case 'error':
      return childTypes(type).reduce((sum, field) => sum + minEncodedBytes(field), 0);
    default:
      // boolean, int, long, enum, string, bytes, array, map and union all start with at least one byte.
      return 1;
  }
}

function assertInternals(): void {
  for (const proto of [avsc.types.ArrayType.prototype, avsc.types.MapType.prototype]) {
    const internal = proto as unknown as Partial<Internal>;
    if (typeof internal._read !== 'function' || typeof internal._skip !== 'function') {
      throw new Error(
        'avsc internals changed: array/map types no longer have _read/_skip; review avro-collection-guard.ts',
      );
    }
  }
}

class BoundedArrayType extends avsc.types.ArrayType {
  _read(tap: Tap): unknown[] {
    return readArray.call(this as unknown as ArrayInternal, tap);
  }

  _skip(tap: Tap): void {
    skipArray.call(this as unknown as ArrayInternal, tap);
  }
}

class BoundedMapType extends avsc.types.MapType {
  _read(tap: Tap): Record<string, unknown> {
    return readMap.call(this, tap);
  }

  _skip(tap: Tap): void {
    skipMap.call(this, tap);
  }
}

/** `typeHook` for `Type.forSchema`: arrays and maps become their bounded variants. */
export function boundedCollectionsTypeHook(schema: Schema, options: object): Type | undefined {
  if (typeof schema !== 'object' || Array.isArray(schema) || avsc.Type.isType(schema)) return undefined;
  const kind = (schema as { type?: unknown }).type;
  if (kind === 'array') {
    assertInternals();
    const type = new BoundedArrayType(schema, options);
    if (minEncodedBytes(type.itemsType) < 1) {
      throw new Error(`arrays of zero-byte items (${type.toString()}) cannot be bounded; give the items a field`);
    }
    return type;
  }
  if (kind === 'map') {
    assertInternals();
    return new BoundedMapType(schema, options);
  }
  return undefined;
}

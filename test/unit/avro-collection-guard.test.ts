import avsc from 'avsc';
import type { Schema } from 'avsc';
import { describe, expect, it } from 'vitest';
import { boundedCollectionsTypeHook, CollectionBoundsError } from '../../schemas/avro-collection-guard.js';

function bounded(schema: Schema): avsc.Type {
  return avsc.Type.forSchema(schema, { typeHook: boundedCollectionsTypeHook });
}

const long = avsc.Type.forSchema('long');
const string = avsc.Type.forSchema('string');
const varint = (n: number): Buffer => long.toBuffer(n);

describe('bounded arrays and maps', () => {
  const arraySchema: Schema = { type: 'array', items: 'string' };

  it('decode what avsc decodes, including blocks written with a byte size (negative count)', () => {
    const items = Buffer.concat([string.toBuffer('a'), string.toBuffer('bc')]);
    const bytes = Buffer.concat([varint(-2), varint(items.length), items, varint(1), string.toBuffer('d'), varint(0)]);
    expect(bounded(arraySchema).fromBuffer(bytes)).toEqual(['a', 'bc', 'd']);
    expect(avsc.Type.forSchema(arraySchema).fromBuffer(bytes)).toEqual(['a', 'bc', 'd']);
    const map = { x: 1.5, y: -2 };
    expect(
      bounded({ type: 'map', values: 'double' }).fromBuffer(
        avsc.Type.forSchema({ type: 'map', values: 'double' }).toBuffer(map),
      ),
    ).toEqual(map);
  });

  it('refuse a block that claims more items than bytes remain', () => {
    const bytes = Buffer.concat([varint(2 ** 40), Buffer.from('abc')]);
    expect(() => bounded(arraySchema).decode(bytes, 0)).toThrow(CollectionBoundsError);
    expect(() => bounded({ type: 'map', values: 'int' }).decode(bytes, 0)).toThrow(CollectionBoundsError);
  });

  it('refuse a negative block size while skipping a field the reader does not have', () => {
    const writer = bounded({
      type: 'record',
      name: 'W',
      fields: [
        { name: 'tags', type: { type: 'array', items: 'string' } },
        { name: 'n', type: 'int' },
      ],
    });
    const reader = bounded({ type: 'record', name: 'W', fields: [{ name: 'n', type: 'int' }] });
    const resolver = reader.createResolver(writer);
    expect(reader.fromBuffer(writer.toBuffer({ tags: ['a'], n: 7 }), resolver)).toEqual({ n: 7 });
    // A block of -1 items whose byte size is -8 would move the read position backwards forever.
    const poison = Buffer.concat([varint(-1), varint(-8), varint(0), varint(7)]);
    expect(() => reader.decode(poison, 0, resolver)).toThrow(CollectionBoundsError);
  });

  it('refuse to build arrays whose items can take zero bytes, which could not be bounded', () => {
    expect(() => bounded({ type: 'array', items: 'null' })).toThrow(/zero-byte items/);
  });
});

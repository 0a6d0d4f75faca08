import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { GENERATED_HEADER, generatedFilePath, renderRecordTypes } from '../../scripts/generate-record-types.js';
import type { Article, Query, RecordName, RecordTypes } from '../../schemas/records.generated.js';
import { RECORD_NAMES } from '../../schemas/records.generated.js';

describe('records.generated.ts', () => {
  it('is exactly what the generator makes of the current schemas', async () => {
    const committed = readFileSync(generatedFilePath(), 'utf8');
    expect(committed.startsWith(`${GENERATED_HEADER}\n`)).toBe(true);
    expect(await renderRecordTypes(), 'a schema changed without regenerating: run `npm run generate:records`').toBe(
      committed,
    );
  });

  it('types the records the way the codec decodes them', () => {
    expectTypeOf<RecordName>().toEqualTypeOf<(typeof RECORD_NAMES)[number]>();
    expectTypeOf<RecordTypes['Article']>().toEqualTypeOf<Article>();
    expectTypeOf<Article['published_at']>().toEqualTypeOf<number>();
    expectTypeOf<Article['language']>().toEqualTypeOf<string | null>();
    expectTypeOf<Query['strategy']>().toEqualTypeOf<'temporal' | 'generic' | 'tempralm'>();
    expectTypeOf<RecordTypes['Answer']['timings_ms']>().toEqualTypeOf<Record<string, number>>();
    expect([...RECORD_NAMES].sort()).toEqual([...RECORD_NAMES]);
  });
});

describe('renderRecordTypes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'neon-avro-types-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('maps every Avro construct to its TS type', async () => {
    writeFileSync(
      join(dir, 'Sample.avsc'),
      JSON.stringify({
        type: 'record',
        name: 'Sample',
        namespace: 'neon',
        doc: 'Every construct once. A doc with */ in it must not end the comment.',
        fields: [
          { name: 'flag', type: 'boolean', doc: 'b' },
          { name: 'count', type: 'int', doc: 'i' },
          { name: 'at', type: { type: 'long', logicalType: 'timestamp-millis' }, doc: 't' },
          { name: 'ratio', type: 'float', doc: 'f' },
          { name: 'blob', type: 'bytes', doc: 'y' },
          { name: 'hash', type: { type: 'fixed', name: 'Hash', size: 4 }, doc: 'x' },
          { name: 'maybe', type: ['null', 'string'], default: null, doc: 'n' },
          { name: 'tail_null', type: ['double', 'null'], doc: 'n last' },
          { name: 'tags', type: { type: 'array', items: ['null', 'string'] }, doc: 'a' },
          { name: 'scores', type: { type: 'map', values: 'double' }, doc: 'm' },
          {
            name: 'child',
            type: {
              type: 'record',
              name: 'Child',
              doc: 'nested',
              fields: [{ name: 'color', type: { type: 'enum', name: 'Color', symbols: ['RED', 'GREEN'] }, doc: 'c' }],
            },
            doc: 'r',
          },
          { name: 'children', type: { type: 'array', items: 'Child' }, doc: 'reference by name' },
        ],
      }),
    );
    const text = await renderRecordTypes(dir);
    expect(text).toContain('*\\/ in it');
    for (const line of [
      'export interface Sample {',
      '  flag: boolean;',
      '  count: number;',
      '  at: number;',
      '  ratio: number;',
      '  blob: Buffer;',
      '  hash: Hash;',
      '  maybe: string | null;',
      '  tail_null: number | null;',
      '  tags: (string | null)[];',
      '  scores: Record<string, number>;',
      '  child: Child;',
      '  children: Child[];',
      'export type Hash = Buffer;',
      'export interface Child {',
      "export const COLOR_SYMBOLS = ['RED', 'GREEN'] as const;",
      'export type Color = (typeof COLOR_SYMBOLS)[number];',
      "export const RECORD_NAMES = ['Sample'] as const satisfies readonly RecordName[];",
    ]) {
      expect(text).toContain(line);
    }
    // Named types appear once however often they are referenced.
    expect(text.match(/export interface Child \{/g)).toHaveLength(1);
  });
});

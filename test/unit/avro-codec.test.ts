import avsc from 'avsc';
import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  decodeRecord,
  encodeRecord,
  RECORD_CODEC_ERROR_CODES,
  RecordCodecError,
  SCHEMA_ID_HEADER,
  schemaIdFromHeaders,
  type KafkaHeaders,
  type RecordCodecErrorCode,
} from '../../schemas/avro-codec.js';
import { avroRegistry, currentSchemaId, currentType, RECORD_NAMES } from '../../schemas/avro-registry.js';
import type { RecordName, RecordTypes } from '../../schemas/records.generated.js';
import { STAGE_ERROR_CODES, type StageErrorCode } from '../../streams/runtime/stage-error.js';
import { arbitraryRecord, repairRecord } from './avro-arbitraries.js';
import { codecError, FIXTURES, fixture, NOW } from './avro-fixtures.js';

const options = { now: NOW };

/** Avro bytes written straight with the current type, bypassing encodeRecord's own validation. */
function rawMessage(name: RecordName, value: unknown): { value: Buffer; headers: KafkaHeaders } {
  return { value: currentType(name).toBuffer(value), headers: { [SCHEMA_ID_HEADER]: currentSchemaId(name) } };
}

/** A small seeded PRNG (mulberry32), so a failing byte pattern can be reproduced. */
function seededBytes(seed: number, length: number): Buffer {
  let a = seed >>> 0;
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    bytes[i] = ((t ^ (t >>> 14)) >>> 0) & 0xff;
  }
  return bytes;
}

describe('round trip', () => {
  it.each(RECORD_NAMES)('%s: a realistic value decodes to what was encoded', (name) => {
    const encoded = encodeRecord(name, FIXTURES[name], options);
    expect(encoded.headers).toEqual({ [SCHEMA_ID_HEADER]: currentSchemaId(name) });
    expect(decodeRecord(name, encoded.value, encoded.headers, options)).toEqual(FIXTURES[name]);
  });

  it('decodes timestamps as plain millisecond numbers, not Date objects', () => {
    const encoded = encodeRecord('Article', FIXTURES.Article, options);
    const article = decodeRecord('Article', encoded.value, encoded.headers, options);
    expect(typeof article.published_at).toBe('number');
    expect(article.published_at).toBe(FIXTURES.Article.published_at);
  });

  it('accepts the schema header as kafkajs delivers it: a Buffer, or an array of repeats', () => {
    const encoded = encodeRecord('Mention', FIXTURES.Mention, options);
    const id = currentSchemaId('Mention');
    expect(decodeRecord('Mention', encoded.value, { [SCHEMA_ID_HEADER]: Buffer.from(id) }, options)).toEqual(
      FIXTURES.Mention,
    );
    expect(
      decodeRecord('Mention', encoded.value, { [SCHEMA_ID_HEADER]: [id, Buffer.from(id)], other: undefined }, options),
    ).toEqual(FIXTURES.Mention);
  });

  it('keeps a map key named __proto__ as data', () => {
    const answer = fixture('Answer');
    answer.timings_ms = JSON.parse('{"__proto__": 3, "retrieve": 4}') as Record<string, number>;
    const encoded = encodeRecord('Answer', answer, options);
    const decoded = decodeRecord('Answer', encoded.value, encoded.headers, options);
    expect(Object.keys(decoded.timings_ms)).toEqual(['__proto__', 'retrieve']);
    expect(Object.getPrototypeOf(decoded.timings_ms)).toBe(Object.prototype);
  });

  for (const name of RECORD_NAMES) {
    it(`${name}: any value generated from the schema round-trips through the codec`, () => {
      const schema = avroRegistry.currentSchema(name);
      fc.assert(
        fc.property(arbitraryRecord(schema.node, NOW), (raw) => {
          const value = repairRecord(name, raw);
          const encoded = encodeRecord(name, value, options);
          expect(decodeRecord(name, encoded.value, encoded.headers, options)).toEqual(value);
        }),
        // Shrinking unicode strings and URLs can run for minutes; a counterexample within 20 s is enough.
        { numRuns: 150, interruptAfterTimeLimit: 20_000, markInterruptAsFailure: true },
      );
    });
  }
});

describe('error codes', () => {
  it('are StageErrorCode values, so a stage can dead-letter with them unchanged', () => {
    expectTypeOf<RecordCodecErrorCode>().toExtend<StageErrorCode>();
    for (const code of RECORD_CODEC_ERROR_CODES) expect(STAGE_ERROR_CODES).toContain(code);
  });
});

describe('unknown_schema', () => {
  const encoded = encodeRecord('Article', FIXTURES.Article, options);

  it('when the schema header is missing', () => {
    const error = codecError(() => decodeRecord('Article', encoded.value, {}, options));
    expect(error.code).toBe('unknown_schema');
    expect(error.message).toContain(SCHEMA_ID_HEADER);
    expect(codecError(() => decodeRecord('Article', encoded.value, undefined, options)).code).toBe('unknown_schema');
  });

  it('when the id is not one this build knows', () => {
    const error = codecError(() =>
      decodeRecord('Article', encoded.value, { [SCHEMA_ID_HEADER]: 'Article@0123456789abcdef' }, options),
    );
    expect(error.code).toBe('unknown_schema');
    expect(error.schemaId).toBe('Article@0123456789abcdef');
    expect(error.message).toContain('Article@0123456789abcdef');
  });

  it('when the writer schema belongs to another record', () => {
    const mention = encodeRecord('Mention', FIXTURES.Mention, options);
    const error = codecError(() => decodeRecord('Article', mention.value, mention.headers, options));
    expect(error.code).toBe('unknown_schema');
    expect(error.message).toMatch(/is a Mention schema, expected a Article one/);
  });

  it('when repeated schema headers disagree', () => {
    const headers = { [SCHEMA_ID_HEADER]: [currentSchemaId('Article'), currentSchemaId('Mention')] };
    expect(codecError(() => decodeRecord('Article', encoded.value, headers, options)).code).toBe('unknown_schema');
    expect(codecError(() => schemaIdFromHeaders(headers)).code).toBe('unknown_schema');
  });
});

describe('undecodable', () => {
  const encoded = encodeRecord('Article', FIXTURES.Article, options);

  it('random bytes (seeded)', () => {
    const error = codecError(() => decodeRecord('Article', seededBytes(20230831, 96), encoded.headers, options));
    expect(error.code).toBe('undecodable');
    expect(error.message).toContain(currentSchemaId('Article'));
  });

  it('a valid encoding with its last bytes cut off', () => {
    const error = codecError(() =>
      decodeRecord('Article', encoded.value.subarray(0, encoded.value.length - 3), encoded.headers, options),
    );
    expect(error.code).toBe('undecodable');
    expect(error.message).toMatch(/truncated/);
  });

  it('a valid encoding followed by garbage', () => {
    const bytes = Buffer.concat([encoded.value, Buffer.from([0x02, 0x41, 0x00])]);
    const error = codecError(() => decodeRecord('Article', bytes, encoded.headers, options));
    expect(error.code).toBe('undecodable');
    expect(error.message).toMatch(/3 trailing bytes/);
  });

  it('an empty or missing value', () => {
    expect(codecError(() => decodeRecord('Article', Buffer.alloc(0), encoded.headers, options)).code).toBe(
      'undecodable',
    );
    expect(codecError(() => decodeRecord('Article', null, encoded.headers, options)).code).toBe('undecodable');
  });

  it('an enum index out of range', () => {
    const mention = encodeRecord('Mention', FIXTURES.Mention, options);
    // entity_type is the third field; find its one-byte index (PERSON = 0) after the two strings.
    const bytes = Buffer.from(mention.value);
    const offset = 1 + FIXTURES.Mention.entity_id.length + 1 + FIXTURES.Mention.name.length;
    expect(bytes[offset]).toBe(0);
    bytes[offset] = 0x7e; // zig-zag 63
    const error = codecError(() => decodeRecord('Mention', bytes, mention.headers, options));
    expect(error.code).toBe('undecodable');
    expect(error.message).toMatch(/enum index/);
  });

  it('an array claiming 2^31 items is refused at once instead of looping over an exhausted buffer', () => {
    const chunk = fixture('Chunk');
    // Chunk's fields before entity_ids, encoded alone: a record's encoding is its fields' in order.
    const head = avsc.Type.forSchema({
      type: 'record',
      name: 'ChunkHead',
      fields: [
        { name: 'id', type: 'string' },
        { name: 'article_id', type: 'string' },
        { name: 'index', type: 'int' },
        { name: 'text', type: 'string' },
        { name: 'title', type: 'string' },
        { name: 'marked_text', type: 'string' },
      ],
    });
    const bomb = Buffer.concat([
      head.toBuffer(chunk),
      avsc.Type.forSchema('long').toBuffer(2 ** 31),
      Buffer.from('ent-a'),
    ]);
    const headers = { [SCHEMA_ID_HEADER]: currentSchemaId('Chunk') };
    const started = performance.now();
    const error = codecError(() => decodeRecord('Chunk', bomb, headers, options));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error.code).toBe('undecodable');
    expect(error.message).toMatch(/block of 2147483648 items cannot fit/);
  });

  it('any bytes either decode to a valid record or fail with undecodable / invalid_record, never anything else', () => {
    for (const name of RECORD_NAMES) {
      const headers = { [SCHEMA_ID_HEADER]: currentSchemaId(name) };
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
          try {
            decodeRecord(name, Buffer.from(bytes), headers, options);
          } catch (error) {
            expect(error).toBeInstanceOf(RecordCodecError);
            expect(['undecodable', 'invalid_record']).toContain((error as RecordCodecError).code);
          }
        }),
        { numRuns: 300 },
      );
    }
  });

  it('a valid encoding with one byte changed is never anything but a decoded record or a RecordCodecError', () => {
    for (const name of RECORD_NAMES) {
      const valid = encodeRecord(name, FIXTURES[name], options);
      fc.assert(
        fc.property(fc.nat({ max: valid.value.length - 1 }), fc.integer({ min: 0, max: 255 }), (index, byte) => {
          const bytes = Buffer.from(valid.value);
          bytes[index] = byte;
          try {
            decodeRecord(name, bytes, valid.headers, options);
          } catch (error) {
            expect(error).toBeInstanceOf(RecordCodecError);
          }
        }),
        { numRuns: 200 },
      );
    }
  });
});

describe('invalid_record on decode', () => {
  function decodeRaw<N extends RecordName>(name: N, value: RecordTypes[N]): RecordCodecError {
    const message = rawMessage(name, value);
    return codecError(() => decodeRecord(name, message.value, message.headers, options));
  }

  it('a published_at before 1900 (negative)', () => {
    const error = decodeRaw('Article', { ...fixture('Article'), published_at: -10_000_000_000_000 });
    expect(error.code).toBe('invalid_record');
    expect(error.paths).toEqual(['published_at']);
    expect(error.message).toMatch(/published_at: -10000000000000 .* not a plausible time/);
  });

  it('a timestamp more than two days ahead of now', () => {
    const error = decodeRaw('Mention', { ...fixture('Mention'), t: NOW + 3 * 24 * 3600_000 });
    expect(error.code).toBe('invalid_record');
    expect(error.paths).toEqual(['t']);
  });

  it('an empty id, in a top-level field and inside arrays', () => {
    expect(decodeRaw('Article', { ...fixture('Article'), id: '' }).paths).toEqual(['id']);
    const chunk = fixture('Chunk');
    chunk.entity_ids = ['ent-a', '  '];
    chunk.provenance[1] = { ...chunk.provenance[1]!, article_id: '' };
    const error = decodeRaw('Chunk', chunk);
    expect(error.code).toBe('invalid_record');
    expect(error.paths).toEqual(['entity_ids.1', 'provenance.1.article_id']);
    expect(error.message).toContain('entity_ids.1: must be a non-empty id');
  });

  it('a URL that is not an absolute http(s) URL', () => {
    const error = decodeRaw('Article', { ...fixture('Article'), canonical_url: 'ftp://example.com/a' });
    expect(error.code).toBe('invalid_record');
    expect(error.message).toContain('canonical_url: must be an absolute http(s) URL');
    const alert = fixture('SpikeAlert');
    alert.urls = ['not a url'];
    expect(decodeRaw('SpikeAlert', alert).paths).toEqual(['urls.0']);
    const answer = fixture('Answer');
    answer.citations[0] = { ...answer.citations[0]!, url: '/relative/path' };
    expect(decodeRaw('Answer', answer).paths).toEqual(['citations.0.url']);
  });

  it('a non-finite double', () => {
    expect(decodeRaw('SpikeAlert', { ...fixture('SpikeAlert'), score: Number.POSITIVE_INFINITY }).paths).toEqual([
      'score',
    ]);
    expect(decodeRaw('SpikeAlert', { ...fixture('SpikeAlert'), baseline_mean: Number.NaN }).paths).toEqual([
      'baseline_mean',
    ]);
  });

  it('cross-field rules: k, offsets, windows, M2 objects', () => {
    const zeroK = decodeRaw('Query', { ...fixture('Query'), k: 0 });
    expect(zeroK.paths).toEqual(['k']);
    expect(zeroK.message).toContain('k: must be between 1 and 1000');
    expect(decodeRaw('Query', { ...fixture('Query'), k: 1001 }).paths).toEqual(['k']);
    expect(decodeRaw('Query', { ...fixture('Query'), t_q: -1e13 }).paths).toEqual(['t_q']);

    const marked = fixture('MarkedArticle');
    marked.mentions[1] = { ...marked.mentions[1]!, end: marked.article.text.length + 5, sentence_index: 7 };
    expect(decodeRaw('MarkedArticle', marked).paths).toEqual(['mentions.1.end', 'mentions.1.sentence_index']);

    const alert = fixture('SpikeAlert');
    alert.window_end = alert.window_start;
    expect(decodeRaw('SpikeAlert', alert).paths).toEqual(['window_end']);

    const interaction = fixture('Interaction');
    interaction.object_id = null;
    interaction.object_name = null;
    expect(decodeRaw('Interaction', interaction).paths).toEqual(['object_id']);
  });
});

describe('invalid_record on encode', () => {
  it('names the fields that do not match the Avro schema', () => {
    const bad = { ...fixture('Article'), published_at: 1.5, title: null } as unknown as RecordTypes['Article'];
    const error = codecError(() => encodeRecord('Article', bad, options));
    expect(error.code).toBe('invalid_record');
    expect(error.paths).toEqual(['title', 'published_at']);
    expect(error.message).toContain('published_at (expected long)');
  });

  it('names nested fields and enum symbols', () => {
    const marked = fixture('MarkedArticle');
    (marked.mentions[0] as { entity_type: string }).entity_type = 'PRODUCT';
    const error = codecError(() => encodeRecord('MarkedArticle', marked, options));
    expect(error.paths).toEqual(['mentions.0.entity_type']);
    expect(error.message).toContain('one of PERSON, ORGANIZATION, LOCATION, EVENT, OTHER');
  });

  it('refuses fields the schema does not declare instead of dropping them silently', () => {
    const bad = { ...fixture('Mention'), entity_typ: 'PERSON' } as RecordTypes['Mention'];
    const error = codecError(() => encodeRecord('Mention', bad, options));
    expect(error.paths).toEqual(['entity_typ']);
  });

  it('lets a date the text speaks of lie far in the past or future, but not off the calendar', () => {
    const marked = fixture('MarkedArticle');
    marked.dates[0]!.refers_to = Date.UTC(2043, 4, 8);
    expect(() => encodeRecord('MarkedArticle', marked, options)).not.toThrow();
    marked.dates[0]!.refers_to = Date.UTC(1066, 9, 14);
    expect(() => encodeRecord('MarkedArticle', marked, options)).not.toThrow();
    marked.dates[0]!.refers_to = Date.UTC(12000, 0, 1);
    expect(codecError(() => encodeRecord('MarkedArticle', marked, options)).paths).toEqual(['dates.0.refers_to']);
    const article = fixture('Article');
    article.published_at = Date.UTC(2043, 4, 8);
    expect(codecError(() => encodeRecord('Article', article, options)).paths).toEqual(['published_at']);
  });

  it('applies the same semantic checks as decoding, so producers never write what readers reject', () => {
    const error = codecError(() =>
      encodeRecord('Article', { ...fixture('Article'), url: 'javascript:alert(1)' }, options),
    );
    expect(error.code).toBe('invalid_record');
    expect(error.paths).toEqual(['url']);
    expect(error.schemaId).toBe(currentSchemaId('Article'));
  });

  it('does not put field contents in the message', () => {
    const secret = 'Confidential body text that must not reach logs';
    const error = codecError(() =>
      encodeRecord('Article', { ...fixture('Article'), text: secret, id: '', url: secret }, options),
    );
    expect(error.message).not.toContain(secret);
  });
});

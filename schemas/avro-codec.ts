import type { Type } from 'avsc';
import {
  avroRegistry,
  type AvroRegistry,
  type RecordName,
  type RegisteredSchema,
  type Resolver,
} from './avro-registry.js';
import type { RecordTypes } from './records.generated.js';
import {
  checkRecordRules,
  compileSchemaChecks,
  type SemanticContext,
  type SemanticProblem,
} from './validate-record-semantics.js';

/**
 * Topic values as Avro: the bytes are the bare Avro binary encoding of the record, and the writer's
 * schema id (`Article@a7de5fb23237dd92`, see avro-registry.ts) travels in the `neon-schema` Kafka
 * header. Readers decode with their current schema, resolving older (or newer, when known) writer
 * schemas, and reject what they cannot trust with one of three codes that match the pipeline's
 * StageErrorCode values, so a stage can dead-letter the original bytes with a precise reason:
 *
 * - `unknown_schema`: no header, an id this build does not know, or a schema of another record;
 * - `undecodable`: the bytes are not one complete record of the writer schema (garbage, truncated,
 *   trailing bytes, absurd collection sizes, strings that are not UTF-8);
 * - `invalid_record`: well-formed Avro whose values make no sense (see validate-record-semantics.ts);
 *   also raised by encodeRecord, so a producer never writes what its readers would reject.
 *
 * Error messages name fields and schema ids, never field contents: they end up in DLQ headers and
 * logs, where article text does not belong.
 */

export const SCHEMA_ID_HEADER = 'neon-schema';

export const RECORD_CODEC_ERROR_CODES = ['undecodable', 'unknown_schema', 'invalid_record'] as const;
export type RecordCodecErrorCode = (typeof RECORD_CODEC_ERROR_CODES)[number];

export class RecordCodecError extends Error {
  override readonly name = 'RecordCodecError';

  constructor(
    readonly code: RecordCodecErrorCode,
    message: string,
    /** Record the caller expected, e.g. `Article`. */
    readonly recordName: string,
    /** Writer schema id from the header (decode) or the schema written with (encode), when known. */
    readonly schemaId: string | undefined,
    /** Dotted paths of the offending fields, for invalid_record. */
    readonly paths: readonly string[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Kafka headers as kafkajs delivers them. */
export type KafkaHeaders = Record<string, Buffer | string | (Buffer | string)[] | undefined>;

export interface EncodedRecord {
  readonly value: Buffer;
  readonly headers: Record<string, string>;
}

export interface CodecOptions {
  /** Defaults to the registry of this build. */
  readonly registry?: AvroRegistry;
  /** Milliseconds since the epoch for the timestamp plausibility check; defaults to Date.now(). */
  readonly now?: number;
}

export function encodeRecord<N extends RecordName>(
  name: N,
  value: RecordTypes[N],
  options: CodecOptions = {},
): EncodedRecord {
  const registry = options.registry ?? avroRegistry;
  return encodeWith(registry.currentSchema(name), value, options);
}

/**
 * Encodes with a registered schema that need not be current, e.g. a historical one to prove
 * readers still resolve it, or to replay fixtures as an older producer wrote them.
 */
export function encodeWithSchema(schemaId: string, value: unknown, options: CodecOptions = {}): EncodedRecord {
  const registry = options.registry ?? avroRegistry;
  const schema = registry.schemaForId(schemaId);
  if (!schema) {
    throw new RecordCodecError(
      'unknown_schema',
      `unknown schema id ${schemaId}`,
      schemaId.split('@')[0] ?? '',
      schemaId,
    );
  }
  return encodeWith(schema, value, options);
}

/**
 * Decodes a topic value as the current schema of `name`. Throws RecordCodecError; anything else
 * thrown is a bug.
 */
export function decodeRecord<N extends RecordName>(
  name: N,
  bytes: Buffer | null | undefined,
  headers: KafkaHeaders | undefined,
  options: CodecOptions = {},
): RecordTypes[N] {
  const registry = options.registry ?? avroRegistry;
  return decodeAs(registry, registry.currentSchema(name), bytes, headers, options) as RecordTypes[N];
}

/**
 * Decodes with a registered reader schema that need not be current: how a consumer built with an
 * older schema sees the record (forward compatibility). The shape is that schema's, hence unknown.
 */
export function decodeWithReaderSchema(
  readerSchemaId: string,
  bytes: Buffer | null | undefined,
  headers: KafkaHeaders | undefined,
  options: CodecOptions = {},
): unknown {
  const registry = options.registry ?? avroRegistry;
  const reader = registry.schemaForId(readerSchemaId);
  if (!reader) throw new Error(`unknown reader schema id ${readerSchemaId}`);
  return decodeAs(registry, reader, bytes, headers, options);
}

/**
 * The writer schema id carried by a message, or undefined when there is none. kafkajs hands over
 * repeated headers as an array; repeats that disagree are refused rather than guessed between.
 */
export function schemaIdFromHeaders(headers: KafkaHeaders | undefined, recordName = ''): string | undefined {
  const raw = headers?.[SCHEMA_ID_HEADER];
  if (raw === undefined) return undefined;
  const values = [
    ...new Set((Array.isArray(raw) ? raw : [raw]).map((v) => (typeof v === 'string' ? v : v.toString('utf8')))),
  ];
  if (values.length > 1) {
    throw new RecordCodecError(
      'unknown_schema',
      `${values.length} different ${SCHEMA_ID_HEADER} headers on one message`,
      recordName,
      undefined,
    );
  }
  return values[0];
}

function encodeWith(schema: RegisteredSchema, value: unknown, options: CodecOptions): EncodedRecord {
  const mismatches = schemaMismatches(schema.type, value);
  if (mismatches.length > 0) {
    throw new RecordCodecError(
      'invalid_record',
      `${schema.recordName} does not match schema ${schema.id} at ${mismatches.map((m) => m.description).join('; ')}`,
      schema.recordName,
      schema.id,
      mismatches.map((m) => m.path),
    );
  }
  assertSemanticallyValid(schema, value, options);
  return { value: schema.type.toBuffer(value), headers: { [SCHEMA_ID_HEADER]: schema.id } };
}

function decodeAs(
  registry: AvroRegistry,
  reader: RegisteredSchema,
  bytes: Buffer | null | undefined,
  headers: KafkaHeaders | undefined,
  options: CodecOptions,
): unknown {
  const name = reader.recordName;
  const writerId = schemaIdFromHeaders(headers, name);
  if (writerId === undefined) {
    throw new RecordCodecError('unknown_schema', `no ${SCHEMA_ID_HEADER} header on a ${name} message`, name, undefined);
  }
  const writer = registry.schemaForId(writerId);
  if (!writer) {
    throw new RecordCodecError('unknown_schema', `unknown schema id ${writerId} on a ${name} message`, name, writerId);
  }
  if (writer.recordName !== name) {
    throw new RecordCodecError(
      'unknown_schema',
      `${writerId} is a ${writer.recordName} schema, expected a ${name} one`,
      name,
      writerId,
    );
  }
  let resolver: Resolver | undefined;
  try {
    resolver = registry.resolverFor(reader, writer);
  } catch (error) {
    throw new RecordCodecError('unknown_schema', `${reader.id} cannot read ${writerId}`, name, writerId, [], {
      cause: error,
    });
  }
  if (!bytes) throw new RecordCodecError('undecodable', `${name} message has no value`, name, writerId);

  let decoded: { value: unknown; offset: number };
  try {
    decoded = reader.type.decode(bytes, 0, resolver);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RecordCodecError('undecodable', `not a ${writerId} record: ${reason}`, name, writerId, [], {
      cause: error,
    });
  }
  if (decoded.offset < 0) {
    throw new RecordCodecError(
      'undecodable',
      `not a ${writerId} record: truncated, ${bytes.length} bytes end mid-record`,
      name,
      writerId,
    );
  }
  if (decoded.offset !== bytes.length) {
    throw new RecordCodecError(
      'undecodable',
      `not a ${writerId} record: ${bytes.length - decoded.offset} trailing bytes after the record`,
      name,
      writerId,
    );
  }
  assertSemanticallyValid(reader, decoded.value, options, writerId);
  return decoded.value;
}

type SchemaChecks = (value: unknown, ctx: SemanticContext) => SemanticProblem[];
const compiledChecks = new WeakMap<RegisteredSchema, SchemaChecks>();

function assertSemanticallyValid(
  schema: RegisteredSchema,
  value: unknown,
  options: CodecOptions,
  writerId: string = schema.id,
): void {
  let checks = compiledChecks.get(schema);
  if (!checks) {
    checks = compileSchemaChecks(schema.node);
    compiledChecks.set(schema, checks);
  }
  const problems = checks(value, { now: options.now ?? Date.now() });
  // Cross-field rules are typed against the current schemas; values read with an older reader skip them.
  if (schema.revision === 'current' && problems.length === 0) {
    problems.push(...checkRecordRules(schema.recordName, value as RecordTypes[RecordName]));
  }
  if (problems.length > 0) {
    throw new RecordCodecError(
      'invalid_record',
      `invalid ${schema.recordName}: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
      schema.recordName,
      writerId,
      problems.map((p) => p.path),
    );
  }
}

interface Mismatch {
  readonly path: string;
  readonly description: string;
}

function describeType(type: Type): string {
  const t = type as unknown as { typeName: string; name?: string; types?: Type[]; symbols?: string[] };
  if (t.typeName.startsWith('union') && t.types) return t.types.map(describeType).join(' | ');
  if (t.typeName === 'enum' && t.symbols) return `one of ${t.symbols.join(', ')}`;
  if (t.typeName === 'record' && t.name) return `a ${t.name.replace(/^.*\./, '')} record`;
  return t.typeName;
}

/** Fields where `value` breaks the Avro schema, with what was expected there. */
function schemaMismatches(type: Type, value: unknown): Mismatch[] {
  // An undeclared field would be silently dropped on encode: almost always a misspelt field.
  // Tracking paths makes avsc take a slow path, so only a value that fails is checked again with a hook.
  if (type.isValid(value, { noUndeclaredFields: true })) return [];
  const found = new Map<string, string>();
  type.isValid(value, {
    noUndeclaredFields: true,
    errorHook: (path: string[], val: unknown, at: Type) => {
      const where = path.join('.');
      const fields = (at as unknown as { fields?: { name: string }[] }).fields;
      if (fields && typeof val === 'object' && val !== null && !Array.isArray(val)) {
        const declared = new Set(fields.map((f) => f.name));
        const undeclared = Object.keys(val).filter((key) => !declared.has(key));
        for (const key of undeclared) {
          const fieldPath = where === '' ? key : `${where}.${key}`;
          found.set(fieldPath, `${fieldPath} (not a field of ${describeType(at)})`);
        }
        if (undeclared.length > 0) return;
      }
      const fieldPath = where === '' ? '(record)' : where;
      found.set(fieldPath, `${fieldPath} (expected ${describeType(at)})`);
    },
  });
  return [...found].map(([path, description]) => ({ path, description }));
}

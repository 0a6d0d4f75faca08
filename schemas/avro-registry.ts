import avsc from 'avsc';
import type { Schema, Type } from 'avsc';
import { boundedCollectionsTypeHook } from './avro-collection-guard.js';
import { utf8StringsTypeHook } from './avro-string-guard.js';
import { readAvroSchemaFiles, type AvroSchemaFile, type RecordNode } from './avro-schema-files.js';
import { RECORD_NAMES, type RecordName } from './records.generated.js';

export { RECORD_NAMES };
export type { RecordName };

/**
 * Every Avro schema a reader in this build understands: the current schema of each topic record
 * and the historical writer schemas kept under `schemas/avro/history/`.
 *
 * A schema is identified by `<Record>@<first 16 hex digits of the SHA-256 of its Parsing Canonical
 * Form>`, e.g. `Article@a7de5fb23237dd92`. The canonical form drops docs, defaults and logical
 * types, so the id changes exactly when the bytes on the wire would be read differently; editing a
 * doc keeps the id. The id travels in a Kafka header (see avro-codec.ts), never inside the bytes.
 *
 * Schemas ship with the code, there is no schema registry service: a reader knows the ids of this
 * build and older ones. Deploy readers before the writers of a new schema version.
 */

export type Resolver = ReturnType<Type['createResolver']>;

export interface RegisteredSchema {
  /** `<Record>@<16 hex>`. */
  readonly id: string;
  readonly recordName: RecordName;
  /** `current`, or the n of `history/<Record>.<n>.avsc`. */
  readonly revision: 'current' | number;
  /** Path under schemas/avro/, for messages. */
  readonly file: string;
  readonly type: Type;
  /** The parsed schema with docs and logical types, which avsc's Type no longer has. */
  readonly node: RecordNode;
}

/**
 * How avsc builds types here: unions stay unwrapped (`string | null`, as the generated TS types
 * say; avsc refuses ambiguous unions at load instead of changing the value shape), decoded records
 * carry no methods, and no logical type implementation is registered, so timestamp-millis fields
 * decode as plain millisecond numbers rather than Date objects. Arrays and maps are the bounded
 * variants of avro-collection-guard.ts.
 */
const TYPE_OPTIONS = { wrapUnions: 'never', omitRecordMethods: true } as const;

/** What decoding refuses beyond avsc: collections larger than their bytes, strings that are not UTF-8. */
function decodeGuardsTypeHook(schema: Schema, options: object): Type | undefined {
  return boundedCollectionsTypeHook(schema, options) ?? utf8StringsTypeHook(schema);
}

const ID_HEX_DIGITS = 16;

export function schemaIdOf(recordName: string, type: Type): string {
  return `${recordName}@${type.fingerprint('sha256').toString('hex').slice(0, ID_HEX_DIGITS)}`;
}

function isRecordName(name: string): name is RecordName {
  return (RECORD_NAMES as readonly string[]).includes(name);
}

export class AvroRegistry {
  readonly #byId = new Map<string, RegisteredSchema>();
  readonly #current = new Map<RecordName, RegisteredSchema>();
  readonly #resolvers = new Map<string, Resolver>();

  constructor(files: { current: readonly AvroSchemaFile[]; history: readonly AvroSchemaFile[] }) {
    const currentNames = files.current.map((f) => f.recordName);
    const missing = RECORD_NAMES.filter((name) => !currentNames.includes(name));
    const extra = currentNames.filter((name) => !isRecordName(name));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(
        `schemas/avro/ and records.generated.ts disagree (missing: ${missing.join(', ') || 'none'}; ` +
          `not generated: ${extra.join(', ') || 'none'}); run \`npm run generate:records\``,
      );
    }
    for (const file of [...files.current, ...files.history]) {
      const schema = this.#register(file);
      if (file.revision === 'current') this.#current.set(schema.recordName, schema);
    }
    // An old writer schema the current reader cannot resolve would only show up when such a record
    // arrives; fail at start-up instead.
    for (const schema of this.#byId.values()) {
      if (schema.revision !== 'current') this.resolverFor(this.currentSchema(schema.recordName), schema);
    }
  }

  #register(file: AvroSchemaFile): RegisteredSchema {
    const { recordName } = file;
    if (!isRecordName(recordName)) throw new Error(`${file.file}: ${recordName} has no current schema`);
    let type: Type;
    try {
      type = avsc.Type.forSchema(file.json as Schema, { ...TYPE_OPTIONS, typeHook: decodeGuardsTypeHook });
    } catch (error) {
      throw new Error(`${file.file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    const id = schemaIdOf(recordName, type);
    const clash = this.#byId.get(id);
    if (clash) {
      throw new Error(
        `${file.file} and ${clash.file} have the same canonical form (${id}); a historical version must differ on the wire`,
      );
    }
    const schema: RegisteredSchema = {
      id,
      recordName,
      revision: file.revision,
      file: file.file,
      type,
      node: file.root,
    };
    this.#byId.set(id, schema);
    return schema;
  }

  get recordNames(): readonly RecordName[] {
    return RECORD_NAMES;
  }

  /** Every registered schema, current ones first. */
  get schemas(): readonly RegisteredSchema[] {
    return [...this.#byId.values()];
  }

  currentSchema(name: RecordName): RegisteredSchema {
    const schema = this.#current.get(name);
    if (!schema) throw new Error(`no current schema for ${name}`);
    return schema;
  }

  currentSchemaId(name: RecordName): string {
    return this.currentSchema(name).id;
  }

  currentType(name: RecordName): Type {
    return this.currentSchema(name).type;
  }

  schemaForId(id: string): RegisteredSchema | undefined {
    return this.#byId.get(id);
  }

  typeForSchemaId(id: string): Type | undefined {
    return this.#byId.get(id)?.type;
  }

  /**
   * How `reader` reads bytes written with `writer`; undefined when they are the same schema.
   * Throws when the schemas are incompatible. Resolvers are built once per pair.
   */
  resolverFor(reader: RegisteredSchema, writer: RegisteredSchema): Resolver | undefined {
    if (reader.id === writer.id) return undefined;
    const key = `${reader.id}<${writer.id}`;
    let resolver = this.#resolvers.get(key);
    if (!resolver) {
      try {
        resolver = reader.type.createResolver(writer.type);
      } catch (error) {
        throw new Error(
          `${reader.file} cannot read records written with ${writer.file}: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      this.#resolvers.set(key, resolver);
    }
    return resolver;
  }
}

/** Loads the registry from an avro directory (default: this package's schemas/avro). */
export function loadAvroRegistry(avroDir?: string): AvroRegistry {
  return new AvroRegistry(readAvroSchemaFiles(avroDir));
}

/**
 * The registry of this build, loaded when the module is first imported so a broken or
 * incompatible schema stops the process at start-up rather than at the first record.
 */
export const avroRegistry: AvroRegistry = loadAvroRegistry();

export function currentSchemaId(name: RecordName): string {
  return avroRegistry.currentSchemaId(name);
}

export function currentType(name: RecordName): Type {
  return avroRegistry.currentType(name);
}

export function typeForSchemaId(id: string): Type | undefined {
  return avroRegistry.typeForSchemaId(id);
}

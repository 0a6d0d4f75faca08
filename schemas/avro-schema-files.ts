import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Reads the `.avsc` files under `schemas/avro/` into a tree that keeps what avsc throws away:
 * `doc`, `default` and `logicalType` (avsc only keeps logical types it has an implementation for,
 * and we deliberately register none so timestamps decode as plain millisecond numbers). The type
 * generator, the semantic checks and the registry all read schemas through here, so they cannot
 * disagree about what a file says.
 *
 * Layout: `avro/<Record>.avsc` is the current schema of a topic record; `avro/history/<Record>.<n>.avsc`
 * are older writer schemas that readers must still resolve.
 */

export const AVRO_NAMESPACE = 'neon';

export const PRIMITIVE_TYPES = ['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string'] as const;
export type PrimitiveTypeName = (typeof PRIMITIVE_TYPES)[number];

export interface PrimitiveNode {
  readonly kind: 'primitive';
  readonly type: PrimitiveTypeName;
  readonly logicalType: string | undefined;
}

export interface FieldNode {
  readonly name: string;
  readonly doc: string | undefined;
  readonly type: AvroNode;
  readonly hasDefault: boolean;
  readonly default: unknown;
}

export interface RecordNode {
  readonly kind: 'record';
  readonly fullName: string;
  readonly name: string;
  readonly doc: string | undefined;
  readonly fields: readonly FieldNode[];
}

export interface EnumNode {
  readonly kind: 'enum';
  readonly fullName: string;
  readonly name: string;
  readonly doc: string | undefined;
  readonly symbols: readonly string[];
  readonly default: string | undefined;
}

export interface FixedNode {
  readonly kind: 'fixed';
  readonly fullName: string;
  readonly name: string;
  readonly doc: string | undefined;
  readonly size: number;
}

export interface ArrayNode {
  readonly kind: 'array';
  readonly items: AvroNode;
}

export interface MapNode {
  readonly kind: 'map';
  readonly values: AvroNode;
}

export interface UnionNode {
  readonly kind: 'union';
  readonly branches: readonly AvroNode[];
}

export type NamedNode = RecordNode | EnumNode | FixedNode;
export type AvroNode = PrimitiveNode | NamedNode | ArrayNode | MapNode | UnionNode;

export interface AvroSchemaFile {
  /** Short record name, e.g. `Article`. */
  readonly recordName: string;
  /** `current` for `avro/<Record>.avsc`, n for `avro/history/<Record>.<n>.avsc`. */
  readonly revision: 'current' | number;
  /** Path relative to the avro directory, for messages. */
  readonly file: string;
  /** The JSON as written, handed to avsc. */
  readonly json: unknown;
  readonly root: RecordNode;
  /** Every named type the file defines, by full name, in definition order. */
  readonly named: ReadonlyMap<string, NamedNode>;
}

export interface AvroSchemaFiles {
  readonly dir: string;
  readonly current: readonly AvroSchemaFile[];
  readonly history: readonly AvroSchemaFile[];
}

/**
 * The `schemas/avro` directory of this package. The code runs both from `schemas/` (tsx) and from
 * `dist/schemas/` (tsc output, where the .avsc files are not copied), so walk up from the module
 * until a directory holding `schemas/avro` appears.
 */
export function findAvroDir(fromUrl: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(fromUrl));
  for (;;) {
    const candidate = join(dir, 'schemas', 'avro');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no schemas/avro directory above ${dirname(fileURLToPath(fromUrl))}`);
    dir = parent;
  }
}

const HISTORY_FILE = /^([A-Za-z_][A-Za-z0-9_]*)\.([1-9][0-9]*)\.avsc$/;
const CURRENT_FILE = /^([A-Za-z_][A-Za-z0-9_]*)\.avsc$/;

export function readAvroSchemaFiles(dir: string = findAvroDir()): AvroSchemaFiles {
  const current = readdirSync(dir)
    .filter((name) => name.endsWith('.avsc'))
    .sort()
    .map((name) => {
      const match = CURRENT_FILE.exec(name);
      if (!match?.[1]) throw new Error(`${name}: current schema files are named <Record>.avsc`);
      return readSchemaFile(dir, name, match[1], 'current');
    });
  const historyDir = join(dir, 'history');
  const history = existsSync(historyDir)
    ? readdirSync(historyDir)
        .filter((name) => name.endsWith('.avsc'))
        .sort()
        .map((name) => {
          const match = HISTORY_FILE.exec(name);
          if (!match?.[1] || !match[2])
            throw new Error(`history/${name}: historical schema files are named <Record>.<n>.avsc`);
          return readSchemaFile(dir, `history/${name}`, match[1], Number(match[2]));
        })
    : [];
  assertSharedTypesAgree(current);
  return { dir, current, history };
}

function readSchemaFile(dir: string, file: string, recordName: string, revision: 'current' | number): AvroSchemaFile {
  const json: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const named = new Map<string, NamedNode>();
  let root: AvroNode;
  try {
    root = parseSchema(json, AVRO_NAMESPACE, named);
  } catch (error) {
    throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (root.kind !== 'record') throw new Error(`${file}: the top-level schema must be a record`);
  if (root.fullName !== `${AVRO_NAMESPACE}.${recordName}`) {
    throw new Error(`${file}: defines ${root.fullName}, expected ${AVRO_NAMESPACE}.${recordName}`);
  }
  return { recordName, revision, file, json, root, named };
}

/**
 * Files are self-contained (any Avro tool can read one alone), so a type shared between records,
 * such as the Article embedded in MarkedArticle, is written out in each file. Copies that drift
 * apart would silently produce two different TS types under one name; refuse that.
 */
function assertSharedTypesAgree(files: readonly AvroSchemaFile[]): void {
  const seen = new Map<string, { file: string; json: string }>();
  for (const file of files) {
    for (const [fullName, node] of file.named) {
      const json = JSON.stringify(node);
      const earlier = seen.get(fullName);
      if (!earlier) seen.set(fullName, { file: file.file, json });
      else if (earlier.json !== json) {
        throw new Error(
          `${fullName} is defined differently in ${earlier.file} and ${file.file}; make the copies identical`,
        );
      }
    }
  }
}

function isPrimitive(name: string): name is PrimitiveTypeName {
  return (PRIMITIVE_TYPES as readonly string[]).includes(name);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown, what: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new Error(`${what} must be a string`);
  return value;
}

function requiredString(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`${what} must be a non-empty string`);
  return value;
}

function qualify(name: string, namespace: string): string {
  return name.includes('.') ? name : `${namespace}.${name}`;
}

function shortName(fullName: string): string {
  return fullName.slice(fullName.lastIndexOf('.') + 1);
}

/**
 * Named types are registered only after their body is parsed, so a self-reference fails as an
 * undefined name: recursive records are not supported (nothing here needs them, and every walker
 * can then assume a tree).
 */
function parseSchema(schema: unknown, namespace: string, named: Map<string, NamedNode>): AvroNode {
  if (typeof schema === 'string') {
    if (isPrimitive(schema)) return { kind: 'primitive', type: schema, logicalType: undefined };
    const node = named.get(qualify(schema, namespace));
    if (!node) throw new Error(`undefined type name ${schema}`);
    return node;
  }
  if (Array.isArray(schema)) {
    return { kind: 'union', branches: schema.map((branch) => parseSchema(branch, namespace, named)) };
  }
  if (!isObject(schema)) throw new Error(`not a schema: ${JSON.stringify(schema)}`);
  const type = schema['type'];
  if (typeof type === 'string' && isPrimitive(type)) {
    return { kind: 'primitive', type, logicalType: optionalString(schema['logicalType'], 'logicalType') };
  }
  switch (type) {
    case 'record':
    case 'enum':
    case 'fixed': {
      const name = requiredString(schema['name'], 'name');
      const ns = optionalString(schema['namespace'], 'namespace') ?? namespace;
      const fullName = qualify(name, ns);
      if (named.has(fullName)) throw new Error(`${fullName} is defined twice`);
      const innerNamespace = fullName.slice(0, fullName.lastIndexOf('.'));
      const doc = optionalString(schema['doc'], `${fullName} doc`);
      let node: NamedNode;
      if (type === 'record') {
        const fields = schema['fields'];
        if (!Array.isArray(fields)) throw new Error(`${fullName}.fields must be an array`);
        node = {
          kind: 'record',
          fullName,
          name: shortName(fullName),
          doc,
          fields: fields.map((field: unknown): FieldNode => {
            if (!isObject(field)) throw new Error(`${fullName} has a field that is not an object`);
            const fieldName = requiredString(field['name'], `${fullName} field name`);
            return {
              name: fieldName,
              doc: optionalString(field['doc'], `${fullName}.${fieldName} doc`),
              type: parseSchema(field['type'], innerNamespace, named),
              hasDefault: 'default' in field,
              default: field['default'],
            };
          }),
        };
      } else if (type === 'enum') {
        const symbols = schema['symbols'];
        if (!Array.isArray(symbols) || !symbols.every((s): s is string => typeof s === 'string')) {
          throw new Error(`${fullName}.symbols must be an array of strings`);
        }
        node = {
          kind: 'enum',
          fullName,
          name: shortName(fullName),
          doc,
          symbols,
          default: optionalString(schema['default'], `${fullName} default`),
        };
      } else {
        const size = schema['size'];
        if (typeof size !== 'number') throw new Error(`${fullName}.size must be a number`);
        node = { kind: 'fixed', fullName, name: shortName(fullName), doc, size };
      }
      named.set(fullName, node);
      return node;
    }
    case 'array':
      return { kind: 'array', items: parseSchema(schema['items'], namespace, named) };
    case 'map':
      return { kind: 'map', values: parseSchema(schema['values'], namespace, named) };
    default:
      // `{"type": <schema or name>}` wraps another schema or refers to a named type.
      if (type === undefined) throw new Error(`missing type in ${JSON.stringify(schema)}`);
      return parseSchema(type, namespace, named);
  }
}

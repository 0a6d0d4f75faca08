import { parseAllDocuments } from 'yaml';

/**
 * Turns the OpenAPI v3 schemas of CustomResourceDefinitions into JSON Schema (draft 4, which is what
 * OpenAPI 3.0's schema objects are built on and what kubeconform assumes) for kubeconform.
 */

type Schema = Record<string, unknown>;

export interface CrdSchemaFile {
  group: string;
  kind: string;
  version: string;
  /** Where kubeconform's `{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json` template looks. */
  relativePath: string;
  schema: Schema;
}

export interface ConversionOptions {
  /**
   * A `$ref` (relative to the written file) to Kubernetes' strict ObjectMeta schema. The API server
   * validates a custom resource's metadata as ObjectMeta whatever its CRD says, so a misspelt
   * `lables:` should fail here too.
   */
  objectMetaRef?: string;
}

function isObject(value: unknown): value is Schema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions'] as const;
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'] as const;

/**
 * Converts one schema node. Strict, like openapi2jsonschema's `--strict`: an object that lists its
 * properties rejects any other, unless it keeps unknown fields (x-kubernetes-preserve-unknown-fields)
 * or says what else it takes (additionalProperties). That is what the API server does with
 * server-side field validation set to Strict, kubectl's default. Branches of allOf/anyOf/oneOf/not
 * are only constraints on a node whose fields are all declared at its root (a structural schema), so
 * they never get additionalProperties: false.
 */
export function convertNode(node: unknown, strict = true): unknown {
  if (!isObject(node)) return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if ((SCHEMA_MAPS as readonly string[]).includes(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, convertNode(sub, strict)]));
    } else if ((SCHEMA_LISTS as readonly string[]).includes(key) && Array.isArray(value)) {
      out[key] = value.map((sub) => convertNode(sub, false));
    } else if (key === 'not') {
      out[key] = convertNode(value, false);
    } else if (key === 'items') {
      out[key] = Array.isArray(value) ? value.map((sub) => convertNode(sub, strict)) : convertNode(value, strict);
    } else if (key === 'additionalProperties') {
      out[key] = typeof value === 'boolean' ? value : convertNode(value, strict);
    } else if (key !== 'nullable') {
      out[key] = value;
    }
  }
  if (node.nullable === true) {
    // OpenAPI's nullable is JSON Schema's "null" among the types (and the allowed values).
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    const allowed: unknown = out.enum;
    if (Array.isArray(allowed) && !allowed.includes(null)) out.enum = [...(allowed as unknown[]), null];
  }
  const properties = out.properties;
  if (node['x-kubernetes-embedded-resource'] === true && isObject(properties)) {
    // An embedded object always may carry these, listed or not.
    properties.apiVersion ??= { type: 'string' };
    properties.kind ??= { type: 'string' };
    properties.metadata ??= { type: 'object' };
  }
  if (
    strict &&
    isObject(properties) &&
    out.additionalProperties === undefined &&
    node['x-kubernetes-preserve-unknown-fields'] !== true
  ) {
    out.additionalProperties = false;
  }
  return out;
}

/** The JSON Schema of one served version of a custom resource. */
export function convertCrdVersionSchema(openApiV3Schema: Schema, options: ConversionOptions = {}): Schema {
  const schema = convertNode(openApiV3Schema) as Schema;
  const properties = isObject(schema.properties) ? { ...schema.properties } : undefined;
  if (options.objectMetaRef && properties) {
    const declared = isObject(openApiV3Schema.properties) ? openApiV3Schema.properties.metadata : undefined;
    // The CRD may narrow metadata (a name's length, say); both must hold. Its own node is not made
    // strict: it lists a field or two, never all of ObjectMeta.
    const own = isObject(declared) ? convertNode(declared, false) : undefined;
    properties.metadata = {
      allOf: [{ $ref: options.objectMetaRef }, ...(own ? [own] : [])],
    };
    schema.properties = properties;
  }
  return schema;
}

/**
 * Every served version of every CustomResourceDefinition in a YAML stream, as JSON Schema files.
 * Anything other than apiextensions.k8s.io/v1 CRDs is refused: a document silently skipped would
 * turn into a kind "without a schema" much later, far from the cause.
 */
export function crdSchemaFiles(yamlText: string, source: string, options: ConversionOptions = {}): CrdSchemaFile[] {
  const files: CrdSchemaFile[] = [];
  for (const document of parseAllDocuments(yamlText)) {
    if (document.errors.length > 0) throw new Error(`${source}: ${document.errors[0]!.message}`);
    const crd: unknown = document.toJS();
    if (crd === null || crd === undefined) continue;
    if (!isObject(crd) || crd.kind !== 'CustomResourceDefinition' || crd.apiVersion !== 'apiextensions.k8s.io/v1') {
      throw new Error(`${source}: expected apiextensions.k8s.io/v1 CustomResourceDefinitions only`);
    }
    const spec = isObject(crd.spec) ? crd.spec : {};
    const group = spec.group;
    const kind = isObject(spec.names) ? spec.names.kind : undefined;
    if (typeof group !== 'string' || typeof kind !== 'string' || !Array.isArray(spec.versions)) {
      throw new Error(`${source}: a CustomResourceDefinition without group, kind or versions`);
    }
    for (const version of spec.versions as unknown[]) {
      if (!isObject(version) || version.served === false || typeof version.name !== 'string') continue;
      const openApi = isObject(version.schema) ? version.schema.openAPIV3Schema : undefined;
      if (!isObject(openApi)) throw new Error(`${source}: ${kind} ${version.name} has no openAPIV3Schema`);
      files.push({
        group,
        kind,
        version: version.name,
        relativePath: `${group}/${kind.toLowerCase()}_${version.name}.json`,
        schema: convertCrdVersionSchema(openApi, options),
      });
    }
  }
  return files;
}

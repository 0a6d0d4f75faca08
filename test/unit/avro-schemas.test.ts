import { describe, expect, it } from 'vitest';
import {
  AVRO_NAMESPACE,
  readAvroSchemaFiles,
  type AvroNode,
  type RecordNode,
} from '../../schemas/avro-schema-files.js';

/**
 * House rules for the .avsc files that Avro itself does not enforce. They keep the schemas
 * self-explanatory (every field documented), evolvable (optional means `["null", T]` with a null
 * default) and the timestamp checks complete (a time is always a timestamp-millis long, named so).
 */

const files = readAvroSchemaFiles();
const all = [...files.current, ...files.history];

const TIME_FIELD = /^(t|t_q|window_start|window_end|refers_to)$|_at$|_start$|_since$/;

interface FieldVisit {
  readonly path: string;
  readonly name: string;
  readonly doc: string | undefined;
  readonly type: AvroNode;
  readonly hasDefault: boolean;
  readonly default: unknown;
}

function visitFields(record: RecordNode, path: string, visit: (field: FieldVisit) => void): void {
  const walk = (node: AvroNode, at: string): void => {
    if (node.kind === 'record') visitFields(node, at, visit);
    else if (node.kind === 'array') walk(node.items, `${at}[]`);
    else if (node.kind === 'map') walk(node.values, `${at}{}`);
    else if (node.kind === 'union') node.branches.forEach((b) => walk(b, at));
  };
  for (const field of record.fields) {
    const at = `${path}.${field.name}`;
    visit({ ...field, path: at });
    walk(field.type, at);
  }
}

function isTimestamp(node: AvroNode): boolean {
  return node.kind === 'primitive' && node.type === 'long' && node.logicalType === 'timestamp-millis';
}

describe.each(all.map((file) => [file.file, file] as const))('%s', (_name, file) => {
  it(`is a documented record in the ${AVRO_NAMESPACE} namespace`, () => {
    expect(file.json).toMatchObject({ type: 'record', namespace: AVRO_NAMESPACE });
    for (const node of file.named.values()) {
      expect(node.doc?.trim(), `${node.fullName} needs a doc`).toBeTruthy();
      expect(node.fullName.startsWith(`${AVRO_NAMESPACE}.`)).toBe(true);
    }
  });

  it('documents every field', () => {
    visitFields(file.root, file.root.name, (field) => {
      expect(field.doc?.trim(), `${field.path} needs a doc`).toBeTruthy();
    });
  });

  it('writes optional fields as ["null", T] with default null', () => {
    visitFields(file.root, file.root.name, (field) => {
      if (field.type.kind !== 'union') return;
      expect(field.type.branches, `${field.path}: only ["null", T] unions`).toHaveLength(2);
      expect(field.type.branches[0], `${field.path}: null first`).toMatchObject({ kind: 'primitive', type: 'null' });
      expect(field.hasDefault && field.default === null, `${field.path}: default null`).toBe(true);
    });
  });

  it('stores every time as a timestamp-millis long, and names times so', () => {
    visitFields(file.root, file.root.name, (field) => {
      const type = field.type.kind === 'union' ? field.type.branches[1] : field.type;
      if (type === undefined) return;
      expect(isTimestamp(type), `${field.path}: a time field must be timestamp-millis`).toBe(
        TIME_FIELD.test(field.name),
      );
    });
  });
});

describe('the schema directory', () => {
  it('has one current schema per record and keeps the older revisions as history', () => {
    expect(files.current.map((f) => f.recordName)).toEqual([
      'Answer',
      'Article',
      'Chunk',
      'EntitySpikeState',
      'Interaction',
      'MarkedArticle',
      'Mention',
      'Query',
      'RegistryEntity',
      'SpikeAlert',
    ]);
    expect(files.history.map((f) => f.file)).toEqual([
      'history/Article.1.avsc',
      'history/Chunk.1.avsc',
      'history/Chunk.2.avsc',
      'history/EntitySpikeState.1.avsc',
      'history/EntitySpikeState.2.avsc',
      'history/Interaction.1.avsc',
      'history/Interaction.2.avsc',
      'history/MarkedArticle.1.avsc',
      'history/Mention.1.avsc',
      'history/Query.1.avsc',
      'history/RegistryEntity.1.avsc',
      'history/SpikeAlert.1.avsc',
      'history/SpikeAlert.2.avsc',
    ]);
  });
});

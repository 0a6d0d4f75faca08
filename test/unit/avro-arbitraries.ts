import fc from 'fast-check';
import type { AvroNode, PrimitiveNode, RecordNode } from '../../schemas/avro-schema-files.js';
import type { RecordName, RecordTypes } from '../../schemas/records.generated.js';
import { EARLIEST_PLAUSIBLE_TIME } from '../../schemas/validate-record-semantics.js';

/**
 * fast-check arbitraries built from the parsed schemas, so a new field is generated without test
 * changes. Values follow the naming rules of validate-record-semantics.ts (ids, URLs, timestamps);
 * `repairRecord` then fixes the cross-field rules so the whole value passes the codec.
 */

type Role = 'id' | 'url' | undefined;

const text = fc.string({ unit: 'binary', maxLength: 40 });
const id = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== '');
const url = fc.webUrl({ withQueryParameters: true, withFragments: true }).filter((u) => URL.canParse(u));

function roles(fieldName: string): { value: Role; items: Role } {
  return {
    value:
      fieldName === 'id' || fieldName.endsWith('_id')
        ? 'id'
        : fieldName === 'url' || fieldName.endsWith('_url')
          ? 'url'
          : undefined,
    items: fieldName.endsWith('_ids') ? 'id' : fieldName === 'urls' ? 'url' : undefined,
  };
}

function primitiveArbitrary(node: PrimitiveNode, now: number, role: Role): fc.Arbitrary<unknown> {
  switch (node.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'int':
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    case 'long':
      return node.logicalType === 'timestamp-millis'
        ? fc.integer({ min: EARLIEST_PLAUSIBLE_TIME, max: now })
        : // avsc refuses longs beyond ±2^52 rather than risk losing precision.
          fc.integer({ min: -(2 ** 52), max: 2 ** 52 });
    case 'float':
      return fc.float({ noNaN: true, noDefaultInfinity: true });
    case 'double':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'bytes':
      return fc.uint8Array({ maxLength: 20 }).map((bytes) => Buffer.from(bytes));
    case 'string':
      return role === 'id' ? id : role === 'url' ? url : text;
  }
}

export function arbitraryFor(node: AvroNode, now: number, role: { value: Role; items: Role }): fc.Arbitrary<unknown> {
  switch (node.kind) {
    case 'primitive':
      return primitiveArbitrary(node, now, role.value);
    case 'record':
      return fc.record(
        Object.fromEntries(node.fields.map((field) => [field.name, arbitraryFor(field.type, now, roles(field.name))])),
      );
    case 'enum':
      return fc.constantFrom(...node.symbols);
    case 'fixed':
      return fc.uint8Array({ minLength: node.size, maxLength: node.size }).map((bytes) => Buffer.from(bytes));
    case 'array':
      return fc.array(arbitraryFor(node.items, now, { value: role.items, items: undefined }), { maxLength: 4 });
    case 'map':
      return fc.dictionary(text, arbitraryFor(node.values, now, { value: undefined, items: undefined }), {
        maxKeys: 4,
      });
    case 'union':
      return fc.oneof(...node.branches.map((branch) => arbitraryFor(branch, now, role)));
  }
}

export function arbitraryRecord(root: RecordNode, now: number): fc.Arbitrary<Record<string, unknown>> {
  return arbitraryFor(root, now, { value: undefined, items: undefined }) as fc.Arbitrary<Record<string, unknown>>;
}

const nonNegative = (n: number): number => Math.abs(n);

/** Makes a schema-shaped value satisfy the cross-field rules of its record. */
export function repairRecord<N extends RecordName>(name: N, raw: Record<string, unknown>): RecordTypes[N] {
  const value = raw as unknown as RecordTypes[RecordName];
  switch (name) {
    case 'Article': {
      const article = value as RecordTypes['Article'];
      article.version = (Math.abs(article.version) % 1000) + 1;
      break;
    }
    case 'MarkedArticle': {
      const marked = value as RecordTypes['MarkedArticle'];
      marked.article.version = (Math.abs(marked.article.version) % 1000) + 1;
      for (const sentence of marked.sentences) Object.assign(sentence, { start: 0, end: 0 });
      if (marked.sentences.length === 0) marked.mentions = [];
      for (const m of marked.mentions) Object.assign(m, { start: 0, end: 0, sentence_index: 0 });
      if (marked.sentences.length === 0) marked.dates = [];
      for (const d of marked.dates) Object.assign(d, { start: 0, end: 0, sentence_index: 0 });
      break;
    }
    case 'Chunk': {
      const chunk = value as RecordTypes['Chunk'];
      chunk.index = Math.abs(chunk.index) % 2 ** 31;
      if (chunk.provenance.length === 0) {
        chunk.provenance.push({
          article_id: chunk.article_id,
          url: 'https://example.com/a',
          source: 's',
          published_at: chunk.t,
        });
      }
      break;
    }
    case 'RegistryEntity': {
      const entity = value as RecordTypes['RegistryEntity'];
      entity.last_seen_at = Math.max(entity.first_seen_at, entity.last_seen_at);
      entity.mentions = nonNegative(entity.mentions);
      break;
    }
    case 'SpikeAlert': {
      const alert = value as RecordTypes['SpikeAlert'];
      alert.window_end = alert.window_start + 1;
      alert.observed = nonNegative(alert.observed);
      alert.baseline_std = nonNegative(alert.baseline_std);
      break;
    }
    case 'Interaction': {
      const interaction = value as RecordTypes['Interaction'];
      if (interaction.object_id === null) {
        interaction.object_name = null;
        interaction.variant = 'M1';
      } else {
        interaction.object_name ??= 'object';
      }
      if (interaction.chunk_ids.length === 0) interaction.chunk_ids.push('chunk-0');
      break;
    }
    case 'Query': {
      const query = value as RecordTypes['Query'];
      if (query.q.trim() === '') query.q = 'news';
      query.k = (Math.abs(query.k) % 1000) + 1;
      if (query.window_days !== null) query.window_days = Math.abs(query.window_days) % 367;
      break;
    }
    case 'Answer': {
      const answer = value as RecordTypes['Answer'];
      for (const citation of answer.citations) citation.n = (Math.abs(citation.n) % 100) + 1;
      for (const key of Object.keys(answer.timings_ms)) {
        answer.timings_ms[key] = nonNegative(answer.timings_ms[key] ?? 0);
      }
      break;
    }
    case 'Mention':
      break;
    case 'EntitySpikeState': {
      const state = value as RecordTypes['EntitySpikeState'];
      state.partition = Math.abs(state.partition % 1000);
      for (const bucket of [...state.days, ...state.hours]) bucket.count = Math.abs(bucket.count % 100_000);
      break;
    }
  }
  return value as RecordTypes[N];
}

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  decodeRecord,
  decodeWithReaderSchema,
  encodeRecord,
  encodeWithSchema,
  SCHEMA_ID_HEADER,
} from '../../schemas/avro-codec.js';
import { avroRegistry, currentSchemaId, loadAvroRegistry, typeForSchemaId } from '../../schemas/avro-registry.js';
import { findAvroDir } from '../../schemas/avro-schema-files.js';
import { codecError, FIXTURES, NOW } from './avro-fixtures.js';

const options = { now: NOW };
const AVRO_DIR = findAvroDir();

/** Ids of the schemas this build ships. Changing one means the bytes on the wire changed. */
const SCHEMA_IDS = {
  Answer: 'Answer@102b32f4e8da928e',
  Article: 'Article@a7de5fb23237dd92',
  Chunk: 'Chunk@ed04ae4307bb0480',
  EntitySpikeState: 'EntitySpikeState@90c12dd7d861d6db',
  Interaction: 'Interaction@773d197e7b822a79',
  MarkedArticle: 'MarkedArticle@5216a3e269bf4e6b',
  Mention: 'Mention@36fd7338223df405',
  Query: 'Query@03fc218fcbcde16c',
  RegistryEntity: 'RegistryEntity@9fadbdfb49717cd3',
  SpikeAlert: 'SpikeAlert@a0e95e9f84e517a8',
} as const;
const ARTICLE_V1_ID = 'Article@8811f480d75b2b0e';
const CHUNK_V1_ID = 'Chunk@44193e6f3fd87c61';
const CHUNK_V2_ID = 'Chunk@822c3a81f2022b31';
const MARKED_ARTICLE_V1_ID = 'MarkedArticle@ab6a5d3da00e8311';
const MENTION_V1_ID = 'Mention@548e72d021d2d441';
const SPIKE_ALERT_V1_ID = 'SpikeAlert@2920f90411858966';
const SPIKE_ALERT_V2_ID = 'SpikeAlert@45f66189b78dc061';
const ENTITY_SPIKE_STATE_V1_ID = 'EntitySpikeState@c6108bccf66b0e33';
const ENTITY_SPIKE_STATE_V2_ID = 'EntitySpikeState@93c71c5632f73529';
const INTERACTION_V1_ID = 'Interaction@23f721409f0eeb33';
const INTERACTION_V2_ID = 'Interaction@7f703d09656791a4';
const QUERY_V1_ID = 'Query@7b612d6f98bbdb36';
const REGISTRY_ENTITY_V1_ID = 'RegistryEntity@241ff7d0e960c4ff';

/** The fixture as a producer on history/Article.1 would have written it. */
const articleV1 = Object.fromEntries(
  Object.entries(FIXTURES.Article).filter(([field]) => field !== 'language' && field !== 'version'),
);

describe('schema ids', () => {
  it('are stable: a change here is a wire change, so keep the old .avsc under history/ and update this table', () => {
    for (const [name, id] of Object.entries(SCHEMA_IDS)) {
      expect(currentSchemaId(name as keyof typeof SCHEMA_IDS)).toBe(id);
    }
    expect(avroRegistry.schemas.map((s) => s.id).sort()).toEqual(
      [
        ...Object.values(SCHEMA_IDS),
        ARTICLE_V1_ID,
        CHUNK_V1_ID,
        CHUNK_V2_ID,
        MARKED_ARTICLE_V1_ID,
        MENTION_V1_ID,
        SPIKE_ALERT_V2_ID,
        ENTITY_SPIKE_STATE_V1_ID,
        ENTITY_SPIKE_STATE_V2_ID,
        SPIKE_ALERT_V1_ID,
        INTERACTION_V1_ID,
        INTERACTION_V2_ID,
        QUERY_V1_ID,
        REGISTRY_ENTITY_V1_ID,
      ].sort(),
    );
  });

  it('are Name@ plus 16 hex digits of the canonical form, which docs and defaults do not touch', () => {
    for (const schema of avroRegistry.schemas) expect(schema.id).toMatch(/^[A-Za-z]+@[0-9a-f]{16}$/);
    expect(avroRegistry.schemaForId(ARTICLE_V1_ID)).toMatchObject({ recordName: 'Article', revision: 1 });
    expect(typeForSchemaId(ARTICLE_V1_ID)).toBeDefined();
    expect(typeForSchemaId('Article@ffffffffffffffff')).toBeUndefined();
  });
});

describe('Chunk evolution', () => {
  const chunkV1 = Object.fromEntries(
    Object.entries(FIXTURES.Chunk).filter(([field]) => field !== 'entities' && field !== 'title'),
  );
  const chunkV2 = Object.fromEntries(Object.entries(FIXTURES.Chunk).filter(([field]) => field !== 'title'));

  it('reads a Chunk written with history/Chunk.1 with no entities and no title (backward)', () => {
    const old = encodeWithSchema(CHUNK_V1_ID, chunkV1, options);
    expect(decodeRecord('Chunk', old.value, old.headers, options)).toEqual({ ...chunkV1, entities: [], title: '' });
  });

  it('reads a Chunk written with history/Chunk.2 with no title (backward)', () => {
    const old = encodeWithSchema(CHUNK_V2_ID, chunkV2, options);
    expect(decodeRecord('Chunk', old.value, old.headers, options)).toEqual({ ...chunkV2, title: '' });
  });

  it('lets a reader still on history/Chunk.2 read a current Chunk (forward)', () => {
    const current = encodeRecord('Chunk', FIXTURES.Chunk, options);
    expect(decodeWithReaderSchema(CHUNK_V2_ID, current.value, current.headers, options)).toEqual(chunkV2);
  });

  it('lets a reader still on history/Chunk.1 read a current Chunk (forward)', () => {
    const current = encodeRecord('Chunk', FIXTURES.Chunk, options);
    expect(decodeWithReaderSchema(CHUNK_V1_ID, current.value, current.headers, options)).toEqual(chunkV1);
  });
});

describe('MarkedArticle evolution', () => {
  const markedV1 = Object.fromEntries(Object.entries(FIXTURES.MarkedArticle).filter(([field]) => field !== 'dates'));

  it('reads a MarkedArticle written with history/MarkedArticle.1 with no dates (backward)', () => {
    const old = encodeWithSchema(MARKED_ARTICLE_V1_ID, markedV1, options);
    expect(decodeRecord('MarkedArticle', old.value, old.headers, options)).toEqual({ ...markedV1, dates: [] });
  });

  it('lets a reader still on history/MarkedArticle.1 read a current MarkedArticle (forward)', () => {
    const current = encodeRecord('MarkedArticle', FIXTURES.MarkedArticle, options);
    expect(decodeWithReaderSchema(MARKED_ARTICLE_V1_ID, current.value, current.headers, options)).toEqual(markedV1);
  });
});

describe('Mention evolution', () => {
  const mentionV1 = Object.fromEntries(Object.entries(FIXTURES.Mention).filter(([field]) => field !== 'url'));

  it('reads a Mention written with history/Mention.1 with no url (backward)', () => {
    const old = encodeWithSchema(MENTION_V1_ID, mentionV1, options);
    expect(decodeRecord('Mention', old.value, old.headers, options)).toEqual({ ...mentionV1, url: null });
  });

  it('lets a reader still on history/Mention.1 read a current Mention (forward)', () => {
    const current = encodeRecord('Mention', FIXTURES.Mention, options);
    expect(decodeWithReaderSchema(MENTION_V1_ID, current.value, current.headers, options)).toEqual(mentionV1);
  });
});

describe('SpikeAlert evolution', () => {
  const ranking = ['method', 'significance', 'articles'];
  const added = [
    'entity_type',
    'episode_start',
    'rule',
    'baseline_buckets',
    'counts',
    'first_interactions',
    ...ranking,
  ];
  const alertV1 = Object.fromEntries(Object.entries(FIXTURES.SpikeAlert).filter(([field]) => !added.includes(field)));
  const alertV2 = Object.fromEntries(Object.entries(FIXTURES.SpikeAlert).filter(([field]) => !ranking.includes(field)));

  it('reads a SpikeAlert written with history/SpikeAlert.1 with the defaults of the drill-down fields (backward)', () => {
    const old = encodeWithSchema(SPIKE_ALERT_V1_ID, alertV1, options);
    expect(decodeRecord('SpikeAlert', old.value, old.headers, options)).toEqual({
      ...alertV1,
      entity_type: 'OTHER',
      episode_start: null,
      rule: '',
      baseline_buckets: 0,
      counts: [],
      first_interactions: [],
      method: 'neon',
      significance: 0,
      articles: 0,
    });
  });

  it('lets a reader still on history/SpikeAlert.1 read a current SpikeAlert (forward)', () => {
    const current = encodeRecord('SpikeAlert', FIXTURES.SpikeAlert, options);
    expect(decodeWithReaderSchema(SPIKE_ALERT_V1_ID, current.value, current.headers, options)).toEqual(alertV1);
  });

  it("reads a SpikeAlert written with history/SpikeAlert.2 as NEON's, unranked (backward)", () => {
    const old = encodeWithSchema(SPIKE_ALERT_V2_ID, alertV2, options);
    expect(decodeRecord('SpikeAlert', old.value, old.headers, options)).toEqual({
      ...alertV2,
      method: 'neon',
      significance: 0,
      articles: 0,
    });
  });

  it('lets a reader still on history/SpikeAlert.2 read a current SpikeAlert (forward)', () => {
    const current = encodeRecord('SpikeAlert', FIXTURES.SpikeAlert, options);
    expect(decodeWithReaderSchema(SPIKE_ALERT_V2_ID, current.value, current.headers, options)).toEqual(alertV2);
  });
});

/** An item as history/EntitySpikeState.2 wrote it. */
function withoutPosition<T extends { position: number }>(item: T): Omit<T, 'position'> {
  const copy: Partial<T> = { ...item };
  delete copy.position;
  return copy as Omit<T, 'position'>;
}

describe('EntitySpikeState evolution', () => {
  const current = FIXTURES.EntitySpikeState;
  /** As a replica on history/EntitySpikeState.2 wrote it: no positions. */
  const stateV2 = Object.fromEntries(
    Object.entries({
      ...current,
      recent_chunks: current.recent_chunks.map((chunk) => withoutPosition(chunk)),
      counted_articles: current.counted_articles.map((article) => withoutPosition(article)),
    }).filter(([field]) => field !== 'decided_through'),
  );
  const added = ['article_days', 'article_hours', 'counted_articles'];
  const stateV1 = Object.fromEntries(Object.entries(stateV2).filter(([field]) => !added.includes(field)));
  const unpositioned = {
    recent_chunks: current.recent_chunks.map((chunk) => ({ ...chunk, position: -1 })),
    decided_through: -1,
  };

  it('reads a state written with history/EntitySpikeState.1 with no article counts and no positions (backward)', () => {
    const old = encodeWithSchema(ENTITY_SPIKE_STATE_V1_ID, stateV1, options);
    expect(decodeRecord('EntitySpikeState', old.value, old.headers, options)).toEqual({
      ...stateV1,
      ...unpositioned,
      article_days: [],
      article_hours: [],
      counted_articles: [],
    });
  });

  it('reads a state written with history/EntitySpikeState.2 with no positions (backward)', () => {
    const old = encodeWithSchema(ENTITY_SPIKE_STATE_V2_ID, stateV2, options);
    expect(decodeRecord('EntitySpikeState', old.value, old.headers, options)).toEqual({
      ...stateV2,
      ...unpositioned,
      counted_articles: current.counted_articles.map((article) => ({ ...article, position: -1 })),
    });
  });

  it('lets a replica still on history/EntitySpikeState.2 read a current state (forward)', () => {
    const encoded = encodeRecord('EntitySpikeState', current, options);
    expect(decodeWithReaderSchema(ENTITY_SPIKE_STATE_V2_ID, encoded.value, encoded.headers, options)).toEqual(stateV2);
  });

  it('lets a replica still on history/EntitySpikeState.1 read a current state (forward)', () => {
    const encoded = encodeRecord('EntitySpikeState', current, options);
    expect(decodeWithReaderSchema(ENTITY_SPIKE_STATE_V1_ID, encoded.value, encoded.headers, options)).toEqual(stateV1);
  });
});

describe('Interaction evolution', () => {
  const interactionV1 = Object.fromEntries(
    Object.entries(FIXTURES.Interaction).filter(([field]) => field !== 'urls' && field !== 'title'),
  );
  const interactionV2 = Object.fromEntries(Object.entries(FIXTURES.Interaction).filter(([field]) => field !== 'title'));

  it('reads an Interaction written with history/Interaction.1 with no URLs and no title (backward)', () => {
    const old = encodeWithSchema(INTERACTION_V1_ID, interactionV1, options);
    expect(decodeRecord('Interaction', old.value, old.headers, options)).toEqual({
      ...interactionV1,
      urls: [],
      title: '',
    });
  });

  it('reads an Interaction written with history/Interaction.2 with no title (backward)', () => {
    const old = encodeWithSchema(INTERACTION_V2_ID, interactionV2, options);
    expect(decodeRecord('Interaction', old.value, old.headers, options)).toEqual({ ...interactionV2, title: '' });
  });

  it('lets a reader still on history/Interaction.2 read a current Interaction (forward)', () => {
    const current = encodeRecord('Interaction', FIXTURES.Interaction, options);
    expect(decodeWithReaderSchema(INTERACTION_V2_ID, current.value, current.headers, options)).toEqual(interactionV2);
  });
});

describe('Query evolution', () => {
  const queryV1 = Object.fromEntries(Object.entries(FIXTURES.Query).filter(([field]) => field !== 'hops'));

  it('reads a Query written with history/Query.1 as a one-hop question (backward)', () => {
    const old = encodeWithSchema(QUERY_V1_ID, queryV1, options);
    expect(decodeRecord('Query', old.value, old.headers, options)).toEqual({ ...queryV1, hops: 1 });
  });

  it('lets a reader still on history/Query.1 read a current Query (forward)', () => {
    const current = encodeRecord('Query', FIXTURES.Query, options);
    expect(decodeWithReaderSchema(QUERY_V1_ID, current.value, current.headers, options)).toEqual(queryV1);
  });
});

describe('RegistryEntity evolution', () => {
  const entityV1 = Object.fromEntries(Object.entries(FIXTURES.RegistryEntity).filter(([field]) => field !== 'fusion'));
  const fused = {
    ...FIXTURES.RegistryEntity,
    fusion: {
      into: 'ent-karl-otto-lagerfeld',
      rule: 'short_form',
      score: 1,
      evidence: 'an article called "Karl Otto Lagerfeld" "Karl Lagerfeld"',
      decided_at: Date.UTC(2023, 7, 30),
      revoked: false,
    },
  };

  it('reads a RegistryEntity written with history/RegistryEntity.1 as not fused (backward)', () => {
    const old = encodeWithSchema(REGISTRY_ENTITY_V1_ID, entityV1, options);
    expect(decodeRecord('RegistryEntity', old.value, old.headers, options)).toEqual({ ...entityV1, fusion: null });
  });

  it('round-trips a fused entity, and a reader on history/RegistryEntity.1 reads it without the fusion (forward)', () => {
    const current = encodeRecord('RegistryEntity', fused, options);
    expect(decodeRecord('RegistryEntity', current.value, current.headers, options)).toEqual(fused);
    expect(decodeWithReaderSchema(REGISTRY_ENTITY_V1_ID, current.value, current.headers, options)).toEqual(entityV1);
  });
});

describe('Article evolution', () => {
  it('reads an Article written with history/Article.1 with the defaults of the new fields (backward)', () => {
    const old = encodeWithSchema(ARTICLE_V1_ID, articleV1, options);
    expect(old.headers).toEqual({ [SCHEMA_ID_HEADER]: ARTICLE_V1_ID });
    const article = decodeRecord('Article', old.value, old.headers, options);
    expect(article).toEqual({ ...articleV1, language: null, version: 1 });
  });

  it('lets a reader still on history/Article.1 read a current Article, dropping the new fields (forward)', () => {
    const current = encodeRecord('Article', FIXTURES.Article, options);
    const seenByOldReader = decodeWithReaderSchema(ARTICLE_V1_ID, current.value, current.headers, options);
    expect(seenByOldReader).toEqual(articleV1);
    expect(Object.keys(seenByOldReader as object)).not.toContain('language');
  });

  it('validates values written with the old schema too', () => {
    const bytes = typeForSchemaId(ARTICLE_V1_ID)!.toBuffer({ ...articleV1, url: 'mailto:desk@example.com' });
    const error = codecError(() => decodeRecord('Article', bytes, { [SCHEMA_ID_HEADER]: ARTICLE_V1_ID }, options));
    expect(error.code).toBe('invalid_record');
    expect(error.schemaId).toBe(ARTICLE_V1_ID);
    expect(error.paths).toEqual(['url']);
  });

  it('refuses truncated bytes of an old writer as undecodable', () => {
    const old = encodeWithSchema(ARTICLE_V1_ID, articleV1, options);
    const error = codecError(() =>
      decodeRecord('Article', old.value.subarray(0, old.value.length - 2), old.headers, options),
    );
    expect(error.code).toBe('undecodable');
  });
});

describe('registries built from other schema directories', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function copyOfSchemas(): string {
    const dir = mkdtempSync(join(tmpdir(), 'neon-avro-'));
    dirs.push(dir);
    cpSync(AVRO_DIR, dir, { recursive: true });
    return dir;
  }

  function editSchema(dir: string, file: string, edit: (schema: Record<string, unknown>) => void): void {
    const schema = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;
    edit(schema);
    writeFileSync(join(dir, file), JSON.stringify(schema, null, 2));
  }

  function fields(schema: Record<string, unknown>): { name: string; type: unknown; default?: unknown }[] {
    return schema['fields'] as { name: string; type: unknown; default?: unknown }[];
  }

  it('maps an entity type the reader does not know to OTHER (enum default)', () => {
    const dir = copyOfSchemas();
    cpSync(join(dir, 'Mention.avsc'), join(dir, 'history', 'Mention.2.avsc'));
    editSchema(dir, 'history/Mention.2.avsc', (schema) => {
      const entityType = fields(schema).find((f) => f.name === 'entity_type')!.type as { symbols: string[] };
      entityType.symbols.push('PRODUCT');
    });
    const registry = loadAvroRegistry(dir);
    const newer = registry.schemas.find((s) => s.file === 'history/Mention.2.avsc')!;
    const written = encodeWithSchema(
      newer.id,
      { ...FIXTURES.Mention, entity_type: 'PRODUCT' },
      { ...options, registry },
    );
    const mention = decodeRecord('Mention', written.value, written.headers, { ...options, registry });
    expect(mention.entity_type).toBe('OTHER');
  });

  it('refuses at load a historical schema the current reader cannot resolve', () => {
    const dir = copyOfSchemas();
    cpSync(join(dir, 'history', 'Article.1.avsc'), join(dir, 'history', 'Article.2.avsc'));
    editSchema(dir, 'history/Article.2.avsc', (schema) => {
      schema['fields'] = fields(schema).filter((f) => f.name !== 'title');
    });
    expect(() => loadAvroRegistry(dir)).toThrow(
      /Article.avsc cannot read records written with history\/Article.2.avsc/,
    );
  });

  it('refuses a new required field without a default, which old records could not fill', () => {
    const dir = copyOfSchemas();
    const addSection = (schema: Record<string, unknown>): void => {
      fields(schema).push({ name: 'section', type: 'string' });
    };
    editSchema(dir, 'Article.avsc', addSection);
    // MarkedArticle embeds Article, and its copy must stay identical.
    editSchema(dir, 'MarkedArticle.avsc', (schema) => {
      addSection(fields(schema).find((f) => f.name === 'article')!.type as Record<string, unknown>);
    });
    expect(() => loadAvroRegistry(dir)).toThrow(/cannot read records written with history\/Article.1.avsc/);
  });

  it('refuses a historical schema identical on the wire to another', () => {
    const dir = copyOfSchemas();
    cpSync(join(dir, 'Article.avsc'), join(dir, 'history', 'Article.2.avsc'));
    editSchema(dir, 'history/Article.2.avsc', (schema) => {
      schema['doc'] = 'Only the doc differs.';
    });
    expect(() => loadAvroRegistry(dir)).toThrow(/same canonical form/);
  });

  it('refuses copies of a shared type that drifted apart', () => {
    const dir = copyOfSchemas();
    editSchema(dir, 'MarkedArticle.avsc', (schema) => {
      const article = fields(schema).find((f) => f.name === 'article')!.type as Record<string, unknown>;
      article['fields'] = fields(article).filter((f) => f.name !== 'version');
    });
    expect(() => loadAvroRegistry(dir)).toThrow(
      /neon.Article is defined differently in Article.avsc and MarkedArticle.avsc/,
    );
  });

  it('refuses a schema file that records.generated.ts does not know', () => {
    const dir = copyOfSchemas();
    cpSync(join(dir, 'Mention.avsc'), join(dir, 'Signal.avsc'));
    editSchema(dir, 'Signal.avsc', (schema) => {
      schema['name'] = 'Signal';
      schema['fields'] = fields(schema).filter((f) => f.name !== 'entity_type');
    });
    expect(() => loadAvroRegistry(dir)).toThrow(/not generated: Signal.*generate:records/);
  });
});

describe('finding the schemas', () => {
  it('works from the compiled dist/schemas/ too, where the .avsc files are not copied', () => {
    const root = join(AVRO_DIR, '..', '..');
    const compiledModule = pathToFileURL(join(root, 'dist', 'schemas', 'avro-registry.js')).href;
    expect(findAvroDir(compiledModule)).toBe(AVRO_DIR);
  });
});

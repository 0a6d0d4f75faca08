import type { Client, estypes } from '@elastic/elasticsearch';
import {
  datastoreNames,
  datastoreTemplate,
  monthEnd,
  monthOfIndex,
  type DatastoreKind,
  type EmbeddingSpec,
} from './datastore-templates.js';

export class DatastoreMismatchError extends Error {
  override readonly name = 'DatastoreMismatchError';
}

/**
 * Installs (or updates) the index templates of both datastores. Refuses to switch an existing
 * datastore to another embedding model or size: its vectors would not be comparable, so the
 * operator must pick a new prefix (or drop the old indices) on purpose.
 */
export async function ensureDatastores(
  client: Client,
  embedding: EmbeddingSpec,
  options: { prefix?: string; shards?: number; replicas?: number } = {},
): Promise<void> {
  for (const kind of ['chunks', 'interactions'] as const) {
    const names = datastoreNames(kind, options.prefix);
    const existing = await client.indices.getIndexTemplate({ name: names.template }).catch((error: unknown) => {
      if ((error as { meta?: { statusCode?: number } }).meta?.statusCode === 404) return undefined;
      throw error;
    });
    const meta = existing?.index_templates[0]?.index_template._meta as
      { embedding_model?: string; dimensions?: number } | undefined;
    if (meta && (meta.embedding_model !== embedding.model || meta.dimensions !== embedding.dimensions)) {
      const indices = await monthlyIndices(client, kind, options.prefix);
      if (indices.length > 0) {
        throw new DatastoreMismatchError(
          `${names.alias} holds vectors of ${meta.embedding_model} (${meta.dimensions} dimensions), not ` +
            `${embedding.model} (${embedding.dimensions}); use another NEON_INDEX_PREFIX or drop ${names.indexPrefix}*`,
        );
      }
    }
    const template = datastoreTemplate(kind, embedding, options.prefix, options);
    await client.indices.putIndexTemplate(template);
    await addNewFields(client, kind, template.template?.mappings?.properties ?? {}, options.prefix);
  }
}

/**
 * A template change reaches only the months created after it. Fields a newer version declares (the
 * chunks' `title`, say) are added to the existing monthly indices too, or their strict mappings would
 * refuse every document this version writes there. Adding a field is allowed on a live index; only
 * the missing ones are sent, so an up-to-date datastore needs no more than reading its mappings.
 */
async function addNewFields(
  client: Client,
  kind: DatastoreKind,
  declared: Record<string, estypes.MappingProperty>,
  prefix?: string,
): Promise<void> {
  const indices = await monthlyIndices(client, kind, prefix);
  if (indices.length === 0) return;
  const mappings = await client.indices.getMapping({ index: indices.join(',') });
  for (const [index, { mappings: current }] of Object.entries(mappings)) {
    const missing = Object.fromEntries(
      Object.entries(declared).filter(([field]) => current.properties?.[field] === undefined),
    );
    if (Object.keys(missing).length === 0) continue;
    await client.indices.putMapping({ index, properties: missing }).catch((error: unknown) => {
      const status = (error as { meta?: { statusCode?: number } }).meta?.statusCode;
      if (status !== 403) throw error;
      throw new DatastoreMismatchError(
        `${index} lacks the fields ${Object.keys(missing).join(', ')} that this version writes, and this key may ` +
          `not add them: add them once with a key allowed to manage the index (PUT ${index}/_mapping), or ` +
          `let the month end`,
      );
    });
  }
}

/**
 * The datastore's monthly indices, oldest first. Resolved rather than listed with `_cat/indices`,
 * which needs the cluster-wide `monitor` privilege: resolving needs only `view_index_metadata` on
 * the datastore's own indices (see infra/kubernetes/elasticsearch-roles.ts).
 */
export async function monthlyIndices(client: Client, kind: DatastoreKind, prefix?: string): Promise<string[]> {
  const names = datastoreNames(kind, prefix);
  const resolved = await client.indices.resolveIndex({
    name: `${names.indexPrefix}*`,
    expand_wildcards: ['open', 'closed'],
  });
  return resolved.indices
    .map((index) => index.name)
    .filter((index) => monthOfIndex(names, index) !== undefined)
    .sort();
}

/**
 * Retention: drops the monthly indices whose whole month lies before `keepFrom` (ms). Returns what
 * was dropped. Nothing else is touched, whatever else matches the pattern.
 */
export async function dropMonthsBefore(
  client: Client,
  kind: DatastoreKind,
  keepFrom: number,
  prefix?: string,
): Promise<string[]> {
  const names = datastoreNames(kind, prefix);
  const dropped: string[] = [];
  for (const index of await monthlyIndices(client, kind, prefix)) {
    if (monthEnd(monthOfIndex(names, index)!) <= keepFrom) {
      await client.indices.delete({ index });
      dropped.push(index);
    }
  }
  return dropped;
}

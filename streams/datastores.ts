import type { Client } from '@elastic/elasticsearch';
import {
  datastoreNames,
  datastoreTemplate,
  monthEnd,
  monthOfIndex,
  type DatastoreKind,
  type EmbeddingSpec,
} from '../schemas/elasticsearch/datastore-templates.js';

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
    await client.indices.putIndexTemplate(datastoreTemplate(kind, embedding, options.prefix, options));
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

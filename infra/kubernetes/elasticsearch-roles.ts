import { datastoreNames, type DatastoreKind } from '../../streams/elasticsearch/datastore-templates.js';

/** An Elasticsearch role descriptor, as `POST /_security/api_key` takes it. */
export interface RoleDescriptor {
  cluster: string[];
  indices: { names: string[]; privileges: string[] }[];
}

export type ServiceRole = 'indexer' | 'query';

const KINDS: readonly DatastoreKind[] = ['chunks', 'interactions'];

/** The aliases and their monthly indices: `<prefix>-chunks`, `<prefix>-chunks-2025.03`, … */
function datastorePatterns(prefix: string): string[] {
  return KINDS.map((kind) => `${datastoreNames(kind, prefix).alias}*`);
}

/**
 * Least privilege for each service, on the two datastores' aliases and monthly indices only —
 * neither key can read, write or even list another index. Checked against a security-enabled
 * Elasticsearch by test/integration/es-api-keys.test.ts.
 *
 * Indexers (`neon-index-chunks`, `neon-index-interactions`):
 * - cluster `manage_index_templates`: `prepare` reads and writes the two index templates (there is
 *   no narrower privilege; templates are cluster-level);
 * - `auto_configure`: the first document of a month creates that month's index from the template
 *   (a `_bulk` auto-create; `write` alone does not include it, and explicit index creation is not
 *   needed);
 * - `write`: `_bulk` indexing (and partial-document updates);
 * - `read`: the readiness probe's `_count`;
 * - `view_index_metadata`: listing the monthly indices (`_resolve/index`) for retention;
 * - `delete_index`: retention drops whole months;
 * - `monitor`: each month's document and segment counts (`_stats`), which tell when a month is quiet;
 * - `maintenance`: merging a finished month into one segment (`_forcemerge`).
 * Not `manage`, which would also allow changing settings and mappings, closing, shrinking… indices.
 *
 * Query service (`neon-query`):
 * - `read`: `_search` (kNN, lists, histograms) and `_count`;
 * - `view_index_metadata`: the embedding model, read from the indices' mappings, so that questions are
 *   never embedded with another model than the documents.
 */
export function serviceRoles(prefix = 'neon'): Record<ServiceRole, RoleDescriptor> {
  const names = datastorePatterns(prefix);
  return {
    indexer: {
      cluster: ['manage_index_templates'],
      indices: [
        {
          names,
          privileges: [
            'auto_configure',
            'write',
            'read',
            'view_index_metadata',
            'delete_index',
            'monitor',
            'maintenance',
          ],
        },
      ],
    },
    query: {
      cluster: [],
      indices: [{ names, privileges: ['read', 'view_index_metadata'] }],
    },
  };
}

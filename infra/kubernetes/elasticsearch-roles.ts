import { datastoreNames, type DatastoreKind } from '../../schemas/elasticsearch/datastore-templates.js';

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
 * Least privilege for each service: the indexers create the templates, monthly indices and
 * aliases, write documents and drop months past the retention (`manage` on their own indices only;
 * `read` for the readiness count); the query service only reads. Neither can touch another index.
 */
export function serviceRoles(prefix = 'neon'): Record<ServiceRole, RoleDescriptor> {
  const names = datastorePatterns(prefix);
  return {
    indexer: {
      cluster: ['manage_index_templates', 'monitor'],
      indices: [{ names, privileges: ['manage', 'write', 'read'] }],
    },
    query: {
      cluster: [],
      indices: [{ names, privileges: ['read', 'view_index_metadata'] }],
    },
  };
}

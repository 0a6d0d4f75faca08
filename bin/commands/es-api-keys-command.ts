import { writeFileSync } from 'node:fs';
import type { Client } from '@elastic/elasticsearch';
import type { Command } from 'commander';
import { UsageError } from '../../infra/cli-errors.js';
import { stringify } from 'yaml';
import { serviceRoles, type ServiceRole } from '../../infra/kubernetes/elasticsearch-roles.js';
import { clusterElasticsearch, indexPrefix } from './cluster-services.js';

interface CreatedKey {
  role: ServiceRole;
  name: string;
  id: string;
  encoded: string;
}

/** A Kubernetes Secret per key (`api_key`), for `kubectl apply -f` — no shell needed to store them. */
export function secretsManifest(keys: readonly CreatedKey[], namespace: string): string {
  return keys
    .map(
      (key) =>
        `---\n${stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: key.name,
            namespace,
            labels: { 'app.kubernetes.io/part-of': 'neon-stream' },
            annotations: { 'neon-stream.io/api-key-id': key.id },
          },
          type: 'Opaque',
          stringData: { api_key: key.encoded },
        })}`,
    )
    .join('');
}

/** Invalidates every active neon-stream key of a role whose id is not kept; returns the ids invalidated. */
async function invalidateExcept(es: Client, keep: ReadonlySet<string>): Promise<string[]> {
  const invalidated: string[] = [];
  for (const role of ['indexer', 'query'] as const) {
    const found = await es.security.getApiKey({ name: `neon-es-${role}`, active_only: true });
    const stale = found.api_keys.map((k) => k.id).filter((id) => !keep.has(id));
    if (stale.length > 0) await es.security.invalidateApiKey({ ids: stale });
    invalidated.push(...stale);
  }
  return invalidated;
}

/**
 * `neon es-api-keys` — creates one Elasticsearch API key per service role (indexer, query) with the
 * least privileges it needs (infra/kubernetes/elasticsearch-roles.ts). Run with an administrator's
 * credentials; on Kubernetes the Job in k8s/base/elasticsearch-api-keys.yaml writes the keys as a
 * Secrets manifest that its second container applies. Earlier keys stay valid, so running pods keep
 * working through a rotation; `--invalidate-except <ids>` (the ids in use, from the Secrets'
 * annotations) retires the others afterwards and creates nothing.
 */
export function registerEsApiKeysCommand(program: Command): void {
  program
    .command('es-api-keys')
    .description('create least-privilege Elasticsearch API keys for the indexers and the query service')
    .option('--secrets-manifest <file>', 'write the keys as Kubernetes Secrets (mode 0600) instead of printing them')
    .option('--namespace <name>', 'namespace of those Secrets', 'neon')
    .option(
      '--invalidate-except <ids>',
      'create nothing; invalidate every other active neon-stream key (comma-separated ids to keep)',
    )
    .action(async (flags: { secretsManifest?: string; namespace: string; invalidateExcept?: string }) => {
      const { es, url } = clusterElasticsearch();
      try {
        if (flags.invalidateExcept !== undefined) {
          const keep = new Set(
            flags.invalidateExcept
              .split(',')
              .map((id) => id.trim())
              .filter((id) => id !== ''),
          );
          if (keep.size === 0) throw new UsageError('--invalidate-except needs the ids of the keys in use');
          const invalidated = await invalidateExcept(es, keep);
          process.stdout.write(`${JSON.stringify({ invalidated, kept: [...keep] })}\n`);
          return;
        }
        const prefix = indexPrefix();
        const roles = serviceRoles(prefix);
        const created: CreatedKey[] = [];
        for (const role of Object.keys(roles) as ServiceRole[]) {
          const name = `neon-es-${role}`;
          const key = await es.security.createApiKey({
            name,
            role_descriptors: { [`neon-${role}`]: roles[role] },
            metadata: { application: 'neon-stream', role, index_prefix: prefix },
          });
          created.push({ role, name, id: key.id, encoded: key.encoded });
        }
        if (flags.secretsManifest) {
          writeFileSync(flags.secretsManifest, secretsManifest(created, flags.namespace), { mode: 0o600 });
          process.stderr.write(
            `API keys ${created.map((k) => `${k.name} (${k.id})`).join(', ')} from ${url} written to ${flags.secretsManifest}\n`,
          );
        } else {
          for (const key of created) {
            process.stdout.write(
              `${JSON.stringify({ role: key.role, name: key.name, id: key.id, api_key: key.encoded })}\n`,
            );
          }
        }
      } finally {
        await es.close();
      }
    });
}

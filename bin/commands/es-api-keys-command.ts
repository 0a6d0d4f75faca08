import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { UsageError } from '../../infra/cli-errors.js';
import { stringify } from 'yaml';
import { ConfigError } from '../../schemas/local-infra-config.js';
import { serviceRoles, type ServiceRole } from '../../infra/kubernetes/elasticsearch-roles.js';
import {
  activeApiKeyIds,
  createApiKey,
  elasticsearchRefusal,
  invalidateApiKeys,
} from '../../streams/elasticsearch/elasticsearch-api-keys.js';
import type { ElasticsearchClient } from '../../streams/elasticsearch/elasticsearch-client.js';
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

/**
 * Invalidates every active neon-stream key of a role whose id is not kept; returns the ids
 * invalidated. Refuses, before invalidating anything, when a role would be left without an active
 * key (a mistyped or stale id would otherwise lock its pods out).
 */
async function invalidateExcept(es: ElasticsearchClient, keep: ReadonlySet<string>): Promise<string[]> {
  const stale: string[] = [];
  for (const role of ['indexer', 'query'] as const) {
    const ids = await activeApiKeyIds(es, `neon-es-${role}`);
    if (ids.length > 0 && !ids.some((id) => keep.has(id))) {
      throw new UsageError(
        `none of ${[...keep].join(', ')} is an active neon-es-${role} key, so every ${role} key would be invalidated; ` +
          'pass the ids in the neon-stream.io/api-key-id annotations of both Secrets',
      );
    }
    stale.push(...ids.filter((id) => !keep.has(id)));
  }
  if (stale.length > 0) await invalidateApiKeys(es, stale);
  return stale;
}

/**
 * Elasticsearch's refusals as what to do about them: wrong credentials (401), credentials that may
 * not manage API keys (403), or a node without security, whose `_security` endpoints are missing
 * (the integ-test distribution answers 405, others 400 "no handler found"). Undefined for anything
 * else.
 */
export function explainRefusal(error: unknown, url: string): Error | undefined {
  const refusal = elasticsearchRefusal(error);
  if (refusal === undefined) return undefined;
  const { status, reason } = refusal;
  if (status === 401) {
    return new ConfigError([
      `Elasticsearch at ${url} rejected the credentials (${reason}): set ES_USERNAME and ES_PASSWORD, or ES_API_KEY, to an administrator's`,
    ]);
  }
  if (status === 403) {
    return new ConfigError([
      `the credentials given for ${url} may not create or invalidate API keys (${reason}): use an administrator (e.g. the elastic user), or one with the manage_api_key or manage_security cluster privilege`,
    ]);
  }
  if ((status === 400 || status === 404 || status === 405) && reason.includes('/_security/')) {
    return new UsageError(
      `Elasticsearch at ${url} has no API keys (${reason}): is its security turned off (xpack.security.enabled: false)? API keys need it on`,
    );
  }
  return undefined;
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
        await createOrInvalidate(es, url, flags);
      } catch (error) {
        throw explainRefusal(error, url) ?? error;
      } finally {
        await es.close();
      }
    });
}

/** The command's work: create a key per role, or (`--invalidate-except`) retire the others. */
async function createOrInvalidate(
  es: ElasticsearchClient,
  url: string,
  flags: { secretsManifest?: string; namespace: string; invalidateExcept?: string },
): Promise<void> {
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
    const key = await createApiKey(es, {
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
      process.stdout.write(`${JSON.stringify({ role: key.role, name: key.name, id: key.id, api_key: key.encoded })}\n`);
    }
  }
}

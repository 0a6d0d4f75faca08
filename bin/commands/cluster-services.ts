import { createEmbedder } from '../../streams/embed/create-embedder.js';
import type { Embedder } from '../../processors/embed/embedder.js';
import { embedderConfigFromEnv } from '../../processors/embed/embedder-config.js';
import { ensureEmbeddingModel } from '../../infra/models/download-embedding-model.js';
import { localEndpoints } from '../../infra/local-infrastructure.js';
import {
  elasticsearchCaFromEnv,
  elasticsearchUrlSchema,
  redactUrl,
  Secret,
  type ElasticsearchConnection,
} from '../../schemas/connection-config.js';
import { ConfigError, loadLocalInfraConfig } from '../../schemas/local-infra-config.js';
import {
  createElasticsearchClient,
  type ElasticsearchClient,
} from '../../streams/elasticsearch/elasticsearch-client.js';

/**
 * The Elasticsearch a command talks to: `ES_URL` (with `ES_API_KEY` or `ES_USERNAME`/`ES_PASSWORD`)
 * when set, otherwise the local node of `neon infra up`. `url` is for messages and the status: any
 * credentials `ES_URL` carries (`https://user:password@host`) are redacted from it.
 */
export function clusterElasticsearch(env = process.env): { es: ElasticsearchClient; url: string } {
  if (env.ES_URL !== undefined) {
    const parsed = elasticsearchUrlSchema.safeParse(env.ES_URL);
    if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `ES_URL: ${i.message}`));
    if ((env.ES_USERNAME === undefined) !== (env.ES_PASSWORD === undefined)) {
      throw new ConfigError(['ES_USERNAME and ES_PASSWORD must be set together']);
    }
    const caCertificate = elasticsearchCaFromEnv(env);
    const connection: ElasticsearchConnection = {
      url: parsed.data,
      ...(env.ES_API_KEY ? { apiKey: new Secret(env.ES_API_KEY) } : {}),
      ...(caCertificate === undefined ? {} : { caCertificate }),
      ...(env.ES_USERNAME !== undefined && env.ES_PASSWORD !== undefined
        ? { username: env.ES_USERNAME, password: new Secret(env.ES_PASSWORD) }
        : {}),
    };
    return { es: createElasticsearchClient(connection), url: redactUrl(connection.url) };
  }
  const url = localEndpoints(loadLocalInfraConfig(env)).elasticsearchUrl;
  const parsed = elasticsearchUrlSchema.safeParse(url);
  if (!parsed.success) throw new ConfigError([`local Elasticsearch URL ${url} is not valid`]);
  return { es: createElasticsearchClient({ url: parsed.data }), url: parsed.data };
}

/** The configured embedder (NEON_EMBEDDER, default the local model), fetching the model on first use. */
export async function configuredEmbedder(
  env = process.env,
  log = (line: string) => void process.stderr.write(`${line}\n`),
): Promise<Embedder> {
  const config = embedderConfigFromEnv(env);
  return createEmbedder(config, { obtainModel: (cacheDir, pin) => ensureEmbeddingModel(cacheDir, pin, log) });
}

/** `NEON_INDEX_PREFIX` (default `neon`): the datastores are `<prefix>-chunks` and `<prefix>-interactions`. */
export function indexPrefix(env = process.env): string {
  const prefix = env.NEON_INDEX_PREFIX ?? 'neon';
  if (!/^[a-z0-9][a-z0-9_-]{0,60}$/.test(prefix)) {
    throw new ConfigError([`NEON_INDEX_PREFIX: lower-case letters, digits, - and _ only (got "${prefix}")`]);
  }
  return prefix;
}

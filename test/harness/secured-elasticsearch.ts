import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  elasticsearchPaths,
  elasticsearchUrl,
  startElasticsearch,
  stopElasticsearch,
} from '../../infra/elasticsearch/elasticsearch-launcher.js';
import { isInfraError } from '../../infra/errors.js';
import { findElasticsearchJava } from '../../infra/java.js';
import { findFreePorts } from '../../infra/ports.js';
import { explainFromLog } from '../../infra/process-control.js';
import { Secret } from '../../schemas/connection-config.js';
import { loadLocalInfraConfig, type LocalInfraConfig } from '../../schemas/local-infra-config.js';

/**
 * An Elasticsearch node of its own for one test file, with security on: the same distribution and
 * launcher as `neon infra up` (the cached 8.19.4 integ-test zip, run as the same account), but its
 * own data directory and free ports, so the suite's node is never disturbed. One administrator
 * (`superuser`, in the file realm) can do everything; what others may do is up to the test.
 * `stop` stops it by its recorded pid and deletes its directory.
 */
export interface SecuredElasticsearch {
  readonly url: string;
  readonly adminUser: string;
  readonly adminPassword: string;
  /** Where the node logs, for a failure message. */
  readonly logFile: string;
  stop(): Promise<void>;
}

const ADMIN = 'neon-admin';

export async function startSecuredElasticsearch(
  log: (line: string) => void = () => undefined,
): Promise<SecuredElasticsearch> {
  const root = await mkdtemp(join(tmpdir(), 'neon-secured-es-'));
  // The node may run as another account (neon-es, when we are root): it must be able to enter.
  await chmod(root, 0o755);
  let config: LocalInfraConfig | undefined;
  const stop = async (): Promise<void> => {
    if (config) log(await stopElasticsearch(config, 15_000));
    await rm(root, { recursive: true, force: true });
  };
  try {
    const [httpPort, transportPort] = await findFreePorts(2);
    config = loadLocalInfraConfig(process.env, {
      dataDir: root,
      elasticsearchPort: httpPort,
      elasticsearchTransportPort: transportPort,
      elasticsearchHeap: '512m',
      readyTimeoutMs: 90_000,
    });
    const adminPassword = randomBytes(18).toString('base64url');
    await startElasticsearch(config, await findElasticsearchJava(), log, {
      security: { adminUser: ADMIN, adminPassword: new Secret(adminPassword) },
    });
    return {
      url: elasticsearchUrl(config),
      adminUser: ADMIN,
      adminPassword,
      logFile: join(elasticsearchPaths(config).logs, 'neon-local.log'),
      stop,
    };
  } catch (error) {
    // Say why before the logs go with the directory.
    const reason = isInfraError(error) ? error.describe() : String(error);
    const logs = config ? await explainFromLog(join(elasticsearchPaths(config).logs, 'neon-local.log')) : '';
    await stop().catch(() => undefined);
    throw new Error(
      `the security-enabled Elasticsearch node did not start: ${reason}${logs ? `\nits log ended with:\n${logs}` : ''}`,
      { cause: error },
    );
  }
}

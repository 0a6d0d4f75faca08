import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * Configuration of the local Kafka and Elasticsearch launchers (`neon infra …` and the test
 * harness). Read once, from the environment plus explicit overrides, validated with every problem
 * listed at once.
 */
const port = z.coerce.number().int().min(1024).max(65535);
const heap = z.string().regex(/^[1-9][0-9]*[mg]$/, 'must look like 512m or 1g');

/** Default local ports (all on 127.0.0.1). */
export const DEFAULT_PORTS = {
  kafka: 9092,
  kafkaController: 9093,
  elasticsearchHttp: 9200,
  elasticsearchTransport: 9300,
} as const;

export const localInfraConfigSchema = z
  .object({
    /** Downloads (jars, the Elasticsearch zip), shared by every instance; safe to keep forever. */
    cacheDir: z.string().min(1),
    /** Instance state: Kafka logs, Elasticsearch data, pid files, process logs. */
    dataDir: z.string().min(1),
    kafkaPort: port,
    kafkaControllerPort: port,
    elasticsearchPort: port,
    elasticsearchTransportPort: port,
    kafkaHeap: heap,
    elasticsearchHeap: heap,
    readyTimeoutMs: z.coerce.number().int().min(1000).max(600_000),
    /** The account Elasticsearch runs as when the launcher is root (Elasticsearch refuses root). */
    elasticsearchUser: z.string().regex(/^[a-z_][a-z0-9_-]{0,31}$/, 'must be a valid user name'),
  })
  .superRefine(
    (config, ctx) => {
      const ports: [string, number][] = [
        ['kafkaPort', config.kafkaPort],
        ['kafkaControllerPort', config.kafkaControllerPort],
        ['elasticsearchPort', config.elasticsearchPort],
        ['elasticsearchTransportPort', config.elasticsearchTransportPort],
      ];
      const seen = new Map<number, string>();
      for (const [name, value] of ports) {
        // A non-numeric port has its own issue; the others are still checked for duplicates.
        if (!Number.isInteger(value)) continue;
        const other = seen.get(value);
        if (other) ctx.addIssue({ code: 'custom', path: [name], message: `port ${value} is also ${other}` });
        seen.set(value, name);
      }
      // Zod skips refinements after an aborting issue (e.g. a port that is not a number); run anyway so
      // that every problem is listed at once.
    },
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  );

export type LocalInfraConfig = z.infer<typeof localInfraConfigSchema>;

type Env = Readonly<Record<string, string | undefined>>;

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/**
 * Root keeps state under /var so that the unprivileged Elasticsearch account can reach it (root's
 * home is private); everyone else follows the XDG base directories.
 */
export function defaultDirectories(env: Env, root = isRoot()): { cacheDir: string; dataDir: string } {
  if (root) return { cacheDir: '/var/cache/neon-stream', dataDir: '/var/lib/neon-stream' };
  const home = env.HOME ?? homedir();
  return {
    cacheDir: join(env.XDG_CACHE_HOME ?? join(home, '.cache'), 'neon-stream'),
    dataDir: join(env.XDG_STATE_HOME ?? join(home, '.local', 'state'), 'neon-stream'),
  };
}

export function localInfraConfigFromEnv(env: Env): Record<string, unknown> {
  const dirs = defaultDirectories(env);
  const timeoutSeconds = env.NEON_INFRA_READY_TIMEOUT_S;
  return {
    cacheDir: env.NEON_CACHE_DIR ?? dirs.cacheDir,
    dataDir: env.NEON_DATA_DIR ?? dirs.dataDir,
    kafkaPort: env.NEON_KAFKA_PORT ?? DEFAULT_PORTS.kafka,
    kafkaControllerPort: env.NEON_KAFKA_CONTROLLER_PORT ?? DEFAULT_PORTS.kafkaController,
    elasticsearchPort: env.NEON_ES_PORT ?? DEFAULT_PORTS.elasticsearchHttp,
    elasticsearchTransportPort: env.NEON_ES_TRANSPORT_PORT ?? DEFAULT_PORTS.elasticsearchTransport,
    kafkaHeap: env.NEON_KAFKA_HEAP ?? '512m',
    elasticsearchHeap: env.NEON_ES_HEAP ?? '1g',
    readyTimeoutMs: timeoutSeconds === undefined ? 120_000 : Number(timeoutSeconds) * 1000,
    elasticsearchUser: env.NEON_ES_USER ?? 'neon-es',
  };
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Environment first, then explicit overrides (CLI flags, tests); undefined overrides are ignored. */
export function loadLocalInfraConfig(
  env: Env,
  overrides: Partial<Record<keyof LocalInfraConfig, unknown>> = {},
): LocalInfraConfig {
  const merged = { ...localInfraConfigFromEnv(env) };
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) merged[key] = value;
  const parsed = localInfraConfigSchema.safeParse(merged);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`));
  }
  return parsed.data;
}

import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../infra/cli-errors.js';
import { redactUrl, redactUrlsIn } from '../../schemas/connection-config.js';
import { loadLocalInfraConfig } from '../../schemas/local-infra-config.js';

/**
 * How CLI commands reach a running neon-stream over its HTTP API: `--api URL`, else NEON_API_URL,
 * else the record `neon start` leaves while it runs (`<data>/run/neon-start.json`, readable by its
 * user only, holding its URL and a per-run intake token). Without any of these, commands that can
 * talk to Kafka and Elasticsearch directly do so.
 */
export interface RunRecord {
  pid: number;
  url: string;
  mode: 'embedded' | 'cluster';
  intake_token: string;
  started_at: string;
}

export interface ServiceTarget {
  url: string;
  /** For query routes when NEON_API_KEYS is set on the service (NEON_API_KEY here). */
  apiKey?: string;
  /** For POST /v1/articles. */
  intakeToken?: string;
  /** Where the target came from, for messages. */
  from: string;
}

export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export function runRecordPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(loadLocalInfraConfig(env).dataDir, 'run', 'neon-start.json');
}

export function writeRunRecord(record: RunRecord, env: NodeJS.ProcessEnv = process.env): string {
  const path = runRecordPath(env);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

export function removeRunRecord(pid: number, env: NodeJS.ProcessEnv = process.env): void {
  const record = readRunRecord(env);
  if (record?.pid === pid) rmSync(runRecordPath(env), { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The record of a `neon start` that is still running, if any. */
export function readRunRecord(env: NodeJS.ProcessEnv = process.env): RunRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(runRecordPath(env), 'utf8')) as RunRecord;
    return typeof record.pid === 'number' && alive(record.pid) ? record : undefined;
  } catch {
    return undefined;
  }
}

/** The service a command should talk to, or undefined to go to Kafka / Elasticsearch directly. */
export function findService(
  apiFlag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ServiceTarget | undefined {
  const apiKey = env.NEON_API_KEY?.trim() || undefined;
  const withKey = (target: ServiceTarget): ServiceTarget => (apiKey ? { ...target, apiKey } : target);
  const explicit = apiFlag ?? (env.NEON_API_URL?.trim() || undefined);
  const intakeToken = env.NEON_INTAKE_TOKEN?.trim() || undefined;
  if (explicit !== undefined) {
    if (!URL.canParse(explicit) || !/^https?:$/.test(new URL(explicit).protocol)) {
      throw new UsageError(`--api / NEON_API_URL must be an http(s) URL, got "${redactUrl(explicit)}"`);
    }
    return withKey({
      url: explicit.replace(/\/+$/, ''),
      from: apiFlag ? '--api' : 'NEON_API_URL',
      ...(intakeToken ? { intakeToken } : {}),
    });
  }
  if (env.KAFKA_BROKERS !== undefined || env.ES_URL !== undefined) return undefined;
  const record = readRunRecord(env);
  if (record === undefined) return undefined;
  return withKey({
    url: record.url,
    from: `the running neon start (pid ${record.pid})`,
    intakeToken: intakeToken ?? record.intake_token,
  });
}

/** One JSON call to the service; HTTP errors become ServiceErrors carrying the API's message. */
export async function callService<T>(
  target: ServiceTarget,
  path: string,
  init: { method?: string; body?: unknown; token?: string; timeoutMs?: number } = {},
): Promise<T> {
  const token = init.token ?? target.apiKey;
  let response: Response;
  try {
    response = await fetch(`${target.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        accept: 'application/json',
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(init.timeoutMs ?? 30_000),
    });
  } catch (error) {
    throw new ServiceError(
      `neon-stream at ${redactUrl(target.url)} (from ${target.from}) did not answer: ${redactUrlsIn(error instanceof Error ? error.message : String(error))}`,
      undefined,
      'unreachable',
    );
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  if (!response.ok && response.status !== 207) {
    const problem = body as { error?: string; message?: string } | undefined;
    throw new ServiceError(
      `${redactUrl(target.url)}${path.split('?')[0] ?? ''} answered ${response.status}: ${problem?.message ?? text.slice(0, 300)}` +
        (response.status === 401 ? ' (set NEON_API_KEY, or NEON_INTAKE_TOKEN for ingest)' : ''),
      response.status,
      problem?.error,
    );
  }
  return body as T;
}

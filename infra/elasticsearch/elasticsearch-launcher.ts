import { spawn } from 'node:child_process';
import { chown, cp, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { closeSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Secret } from '../../schemas/connection-config.js';
import type { LocalInfraConfig } from '../../schemas/local-infra-config.js';
import { InfraError } from '../errors.js';
import { readInstanceRecord, removeInstanceRecord, writeInstanceRecord } from '../instance-record.js';
import type { JavaRuntime } from '../java.js';
import { assertPortsFree, isPortOpen } from '../ports.js';
import { isOurProcess, processAlive, stopProcess, explainFromLog } from '../process-control.js';
import { elasticsearchReady } from '../readiness.js';
import type { ServiceStatus } from '../service-status.js';
import { ELASTICSEARCH_VERSION } from '../versions.js';
import { ensureElasticsearchDistribution } from './download-elasticsearch.js';
import { renderElasticsearchYml, renderHeapOptions } from './elasticsearch-config.js';
import { ensureSecuredDistribution } from './security-analysis-plugin.js';
import { elasticsearchRunAs, type RunAs } from './elasticsearch-user.js';

/** Appears in the server JVM's command line (`-Djdk.module.main=org.elasticsearch.server`). */
const PROCESS_MARKER = 'org.elasticsearch.server';

/**
 * A node with security on and one administrator (role `superuser`) in its file realm — for tests of
 * what credentials and API keys may do. `neon infra up` never asks for it.
 */
export interface ElasticsearchSecurity {
  adminUser: string;
  adminPassword: Secret;
}

export interface ElasticsearchStartOptions {
  security?: ElasticsearchSecurity;
}

/** The Authorization header of the administrator, for the readiness probe of a secured node. */
export function basicAuthorization(security: ElasticsearchSecurity | undefined): Record<string, string> {
  if (!security) return {};
  const token = Buffer.from(`${security.adminUser}:${security.adminPassword.reveal()}`).toString('base64');
  return { authorization: `Basic ${token}` };
}

interface ElasticsearchPaths {
  home: string;
  config: string;
  data: string;
  logs: string;
  tmp: string;
  pidFile: string;
  record: string;
  stdout: string;
}

export function elasticsearchPaths(config: LocalInfraConfig): ElasticsearchPaths {
  const home = join(config.dataDir, 'elasticsearch');
  return {
    home,
    config: join(home, 'config'),
    data: join(home, 'data'),
    logs: join(home, 'logs'),
    tmp: join(home, 'tmp'),
    pidFile: join(home, 'elasticsearch.pid'),
    record: join(home, 'instance.json'),
    stdout: join(home, 'logs', 'stdout.log'),
  };
}

export function elasticsearchUrl(config: LocalInfraConfig): string {
  return `http://127.0.0.1:${config.elasticsearchPort}`;
}

export async function elasticsearchStatus(
  config: LocalInfraConfig,
  headers: Record<string, string> = {},
): Promise<ServiceStatus> {
  const paths = elasticsearchPaths(config);
  const base = {
    service: 'elasticsearch' as const,
    version: ELASTICSEARCH_VERSION,
    endpoint: elasticsearchUrl(config),
    dataDir: paths.home,
  };
  const record = await readInstanceRecord(paths.record);
  if (record && (await isOurProcess(record.pid, PROCESS_MARKER))) {
    const url = `http://127.0.0.1:${record.ports.http ?? config.elasticsearchPort}`;
    const probe = await elasticsearchReady(url, 3000, headers);
    return {
      ...base,
      endpoint: url,
      pid: record.pid,
      state: probe.ready ? 'ready' : 'unresponsive',
      detail: probe.detail,
    };
  }
  if (await isPortOpen(config.elasticsearchPort)) {
    return {
      ...base,
      state: 'foreign',
      detail: `port ${config.elasticsearchPort} answers, but not a node started here`,
    };
  }
  if (record) return { ...base, pid: record.pid, state: 'stale', detail: `process ${record.pid} is gone` };
  return { ...base, state: 'stopped', detail: 'not running' };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * The node runs as another account when we are root, so every directory above its home must be
 * searchable by others; a private parent (mkdtemp, /root) would fail deep inside the JVM instead.
 */
async function assertReachableBy(runAs: RunAs, dir: string): Promise<void> {
  const blocked: string[] = [];
  for (let current = dirname(dir); ; current = dirname(current)) {
    const info = await stat(current).catch(() => undefined);
    if (info && info.uid !== runAs.uid && (info.mode & 0o001) === 0) blocked.push(current);
    if (current === dirname(current)) break;
  }
  if (blocked.length > 0) {
    throw new InfraError(
      'user_setup_failed',
      `Elasticsearch runs as "${runAs.user}", which cannot enter ${blocked.join(', ')} (not searchable by others)`,
      'Use a --data-dir / NEON_DATA_DIR outside private directories, or chmod o+x the directories named.',
    );
  }
}

/** Lays out config, data, logs and tmp for the node, owned by the account it runs as. */
async function prepareInstance(
  config: LocalInfraConfig,
  distribution: string,
  paths: ElasticsearchPaths,
  runAs: RunAs | undefined,
  security: boolean,
): Promise<void> {
  if (runAs) await assertReachableBy(runAs, paths.home);
  for (const dir of [paths.home, paths.data, paths.logs, paths.tmp, join(paths.config, 'jvm.options.d')]) {
    await mkdir(dir, { recursive: true });
  }
  // The distribution's own config (jvm.options, log4j2.properties) is the base; our files override.
  for (const file of ['jvm.options', 'log4j2.properties', 'role_mapping.yml', 'roles.yml', 'users', 'users_roles']) {
    const source = join(distribution, 'config', file);
    if ((await exists(source)) && !(await exists(join(paths.config, file)))) await cp(source, join(paths.config, file));
  }
  await writeFile(
    join(paths.config, 'elasticsearch.yml'),
    renderElasticsearchYml({
      httpPort: config.elasticsearchPort,
      transportPort: config.elasticsearchTransportPort,
      dataPath: paths.data,
      logsPath: paths.logs,
      security,
    }),
  );
  await writeFile(
    join(paths.config, 'jvm.options.d', 'neon-heap.options'),
    renderHeapOptions(config.elasticsearchHeap),
  );
  await rm(paths.pidFile, { force: true });
  if (runAs) {
    // Data files are created by the node itself; only what we wrote needs handing over.
    for (const dir of [
      paths.home,
      paths.data,
      paths.logs,
      paths.tmp,
      paths.config,
      join(paths.config, 'jvm.options.d'),
    ]) {
      await chown(dir, runAs.uid, runAs.gid);
    }
    for (const file of [
      'elasticsearch.yml',
      'jvm.options',
      'log4j2.properties',
      'role_mapping.yml',
      'roles.yml',
      'users',
      'users_roles',
      'elasticsearch.keystore',
    ]) {
      if (await exists(join(paths.config, file))) await chown(join(paths.config, file), runAs.uid, runAs.gid);
    }
    await chown(join(paths.config, 'jvm.options.d', 'neon-heap.options'), runAs.uid, runAs.gid);
  }
}

/** The environment of the distribution's scripts (the server and its command-line tools). */
function distributionEnv(java: JavaRuntime, paths: ElasticsearchPaths): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: paths.home,
    LANG: 'C.UTF-8',
    ES_JAVA_HOME: java.javaHome,
    ES_PATH_CONF: paths.config,
    ES_TMPDIR: paths.tmp,
    ES_JAVA_OPTS: '',
  };
}

/**
 * Makes `security.adminUser` the only user of the node's file realm, with role `superuser`, through
 * the distribution's own `elasticsearch-users` (so the password hash is one Elasticsearch accepts).
 * The password goes through stdin, never the command line. Runs as the node's account, which owns
 * the config directory by now.
 */
async function createFileRealmAdmin(
  distribution: string,
  java: JavaRuntime,
  paths: ElasticsearchPaths,
  runAs: RunAs | undefined,
  security: ElasticsearchSecurity,
): Promise<void> {
  for (const file of ['users', 'users_roles']) {
    await writeFile(join(paths.config, file), '', { mode: 0o640 });
    if (runAs) await chown(join(paths.config, file), runAs.uid, runAs.gid);
  }
  const child = spawn(
    join(distribution, 'bin', 'elasticsearch-users'),
    ['useradd', security.adminUser, '-r', 'superuser'],
    {
      cwd: paths.home,
      env: distributionEnv(java, paths),
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const password = security.adminPassword.reveal();
  child.stdin.end(`${password}\n${password}\n`);
  const code = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (exit) => resolve(exit ?? 1));
  });
  if (code !== 0) {
    throw new InfraError(
      'user_setup_failed',
      `elasticsearch-users could not create the administrator "${security.adminUser}" (exit ${code}): ${output.trim()}`,
    );
  }
}

/**
 * Runs the Elasticsearch launcher in daemon mode: it forks the server, waits until the node has
 * started, writes the server's pid file and exits. Its exit code tells us whether start-up worked.
 */
async function launchDaemon(
  distribution: string,
  java: JavaRuntime,
  paths: ElasticsearchPaths,
  runAs: RunAs | undefined,
  timeoutMs: number,
): Promise<void> {
  const log = openSync(paths.stdout, 'a');
  if (runAs) await chown(paths.stdout, runAs.uid, runAs.gid);
  try {
    const child = spawn(join(distribution, 'bin', 'elasticsearch'), ['-d', '-p', paths.pidFile], {
      cwd: paths.logs, // the stock jvm.options writes gc.log and hs_err files relative to here
      env: distributionEnv(java, paths),
      stdio: ['ignore', log, log],
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    });
    const exit = await new Promise<number | 'timeout'>((resolve, reject) => {
      const timer = setTimeout(() => resolve('timeout'), timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code ?? 1);
      });
    });
    if (exit === 'timeout') {
      child.kill('SIGKILL');
      throw new InfraError(
        'not_ready',
        `Elasticsearch did not start within ${timeoutMs / 1000} s`,
        `See ${paths.stdout} and ${paths.logs}/neon-local.log.`,
      );
    }
    if (exit !== 0) {
      throw new InfraError(
        'start_failed',
        `Elasticsearch failed to start (exit ${exit}). Last lines of its output:\n${await explainFromLog(paths.stdout)}`,
        `Full logs: ${paths.logs}. \`neon infra down --purge\` resets its data if it is corrupt.`,
      );
    }
  } finally {
    closeSync(log);
  }
}

async function readPid(pidFile: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = await readFile(pidFile, 'utf8').catch(() => '');
    const pid = Number(text.trim());
    if (Number.isInteger(pid) && pid > 0) return pid;
    await sleep(100);
  }
  throw new InfraError('start_failed', `Elasticsearch started but wrote no pid file at ${pidFile}`);
}

export async function startElasticsearch(
  config: LocalInfraConfig,
  java: JavaRuntime,
  log: (line: string) => void,
  options: ElasticsearchStartOptions = {},
): Promise<ServiceStatus> {
  const paths = elasticsearchPaths(config);
  const headers = basicAuthorization(options.security);
  const current = await elasticsearchStatus(config, headers);
  if (current.state === 'ready') {
    const record = await readInstanceRecord(paths.record);
    if (record && record.ports.http !== config.elasticsearchPort) {
      throw new InfraError(
        'instance_conflict',
        `Elasticsearch from ${paths.home} is already running on port ${record.ports.http}, not ${config.elasticsearchPort}`,
        'Run `neon infra down` first, or use a different --data-dir for a second instance.',
      );
    }
    log(`elasticsearch: already running (pid ${current.pid}) at ${current.endpoint}`);
    return current;
  }
  if (current.state === 'unresponsive') {
    throw new InfraError(
      'instance_conflict',
      `a previous Elasticsearch (pid ${current.pid}) is still running from ${paths.home} but does not answer (${current.detail})`,
      'Wait if it is still starting, or stop it with `neon infra down`.',
    );
  }
  if (current.state === 'stale') await removeInstanceRecord(paths.record);

  await assertPortsFree([
    { port: config.elasticsearchPort, purpose: 'Elasticsearch HTTP', flag: '--es-port / NEON_ES_PORT' },
    {
      port: config.elasticsearchTransportPort,
      purpose: 'Elasticsearch transport',
      flag: '--es-transport-port / NEON_ES_TRANSPORT_PORT',
    },
  ]);
  const distribution = await ensureElasticsearchDistribution(config.cacheDir, log);
  // A secured node runs from a home with the analysis components its security indices need.
  const home = options.security ? await ensureSecuredDistribution(distribution, java, log) : distribution;
  const runAs = await elasticsearchRunAs(config.elasticsearchUser);
  await prepareInstance(config, distribution, paths, runAs, options.security !== undefined);
  if (options.security) await createFileRealmAdmin(home, java, paths, runAs, options.security);

  const started = Date.now();
  await launchDaemon(home, java, paths, runAs, config.readyTimeoutMs);
  const pid = await readPid(paths.pidFile, 10_000);
  await writeInstanceRecord(paths.record, {
    service: 'elasticsearch',
    version: ELASTICSEARCH_VERSION,
    pid,
    ports: { http: config.elasticsearchPort, transport: config.elasticsearchTransportPort },
    startedAt: new Date().toISOString(),
  });
  const url = elasticsearchUrl(config);
  const deadline = started + config.readyTimeoutMs;
  let last = 'not probed yet';
  while (Date.now() < deadline) {
    if (!processAlive(pid)) break;
    const probe = await elasticsearchReady(url, 2000, headers);
    if (probe.ready) {
      log(
        `elasticsearch: ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${url} (pid ${pid}, Java ${java.majorVersion}${runAs ? `, user ${runAs.user}` : ''}${options.security ? ', security on' : ''})`,
      );
      return {
        service: 'elasticsearch',
        state: 'ready',
        version: ELASTICSEARCH_VERSION,
        endpoint: url,
        pid,
        dataDir: paths.home,
        detail: probe.detail,
      };
    }
    last = probe.detail;
    await sleep(250);
  }
  await stopProcess(pid, 5000);
  await removeInstanceRecord(paths.record);
  throw new InfraError(
    'not_ready',
    `Elasticsearch (pid ${pid}) did not report a usable cluster health (${last})`,
    `See ${paths.logs}/neon-local.log.`,
  );
}

/** Stops the node this data directory started (by its recorded pid), within `graceMs`. */
export async function stopElasticsearch(config: LocalInfraConfig, graceMs = 30_000): Promise<string> {
  const paths = elasticsearchPaths(config);
  const record = await readInstanceRecord(paths.record);
  if (!record) return 'elasticsearch: not running';
  if (!(await isOurProcess(record.pid, PROCESS_MARKER))) {
    await removeInstanceRecord(paths.record);
    return `elasticsearch: was not running (removed stale record of pid ${record.pid})`;
  }
  const outcome = await stopProcess(record.pid, graceMs);
  await removeInstanceRecord(paths.record);
  return outcome === 'killed'
    ? `elasticsearch: did not stop within ${graceMs / 1000} s; killed pid ${record.pid}`
    : `elasticsearch: stopped (pid ${record.pid})`;
}

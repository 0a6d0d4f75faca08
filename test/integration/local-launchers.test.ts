import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InfraError } from '../../infra/errors.js';
import {
  downLocalInfrastructure,
  localEndpoints,
  localInfrastructureStatus,
  upLocalInfrastructure,
} from '../../infra/local-infrastructure.js';
import { findFreePort, findFreePorts } from '../../infra/ports.js';
import { processAlive } from '../../infra/process-control.js';
import { elasticsearchReady } from '../../infra/readiness.js';
import { loadLocalInfraConfig, type LocalInfraConfig } from '../../schemas/local-infra-config.js';

/**
 * The launchers behind `neon infra up | down | status`, on an instance of their own (fresh data
 * directory, free ports) beside whatever the rest of the suite uses. Downloads come from the shared
 * cache, so this costs two server start-ups, not two downloads.
 */

async function freshConfig(dataDir: string): Promise<LocalInfraConfig> {
  const [kafkaPort, kafkaControllerPort, elasticsearchPort, elasticsearchTransportPort] = await findFreePorts(4);
  return loadLocalInfraConfig(process.env, {
    dataDir,
    kafkaPort,
    kafkaControllerPort,
    elasticsearchPort,
    elasticsearchTransportPort,
    kafkaHeap: '256m',
    elasticsearchHeap: '512m',
  });
}

async function expectInfraError(promise: Promise<unknown>, code: string): Promise<InfraError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InfraError);
  expect((error as InfraError).code).toBe(code);
  return error as InfraError;
}

describe('local launchers', () => {
  let root: string;
  let config: LocalInfraConfig;
  const log: string[] = [];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'neon-launcher-'));
    // Elasticsearch may run as another account: it must be able to enter the directory.
    await chmod(root, 0o755);
    config = await freshConfig(join(root, 'instance'));
  });

  afterAll(async () => {
    await downLocalInfrastructure(config, undefined, { purge: true }).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  it('reports a fresh data directory as stopped', async () => {
    const statuses = await localInfrastructureStatus(config);
    expect(statuses.map((s) => [s.service, s.state])).toEqual([
      ['kafka', 'stopped'],
      ['elasticsearch', 'stopped'],
    ]);
  });

  it('starts both services and waits until each answers', async () => {
    const statuses = await upLocalInfrastructure(config, undefined, (line) => log.push(line));
    expect(statuses.map((s) => s.state)).toEqual(['ready', 'ready']);
    const es = await elasticsearchReady(localEndpoints(config).elasticsearchUrl);
    expect(es.ready).toBe(true);
    const after = await localInfrastructureStatus(config);
    expect(after.map((s) => s.state)).toEqual(['ready', 'ready']);
    expect(after.every((s) => s.pid !== undefined && processAlive(s.pid))).toBe(true);
  });

  it('treats a second up as a no-op on the same instance', async () => {
    const before = await localInfrastructureStatus(config);
    const again = await upLocalInfrastructure(config);
    expect(again.map((s) => s.pid)).toEqual(before.map((s) => s.pid));
  });

  it('refuses an up with other ports while the previous instance still runs', async () => {
    const moved = { ...config, kafkaPort: await findFreePort() };
    const error = await expectInfraError(upLocalInfrastructure(moved, ['kafka']), 'instance_conflict');
    expect(error.hint).toContain('neon infra down');
  });

  it('calls a port held by another program foreign, and will not start over it', async () => {
    const otherDir = join(root, 'other');
    const squatter: Server = createServer();
    const port = await findFreePort();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const other = { ...(await freshConfig(otherDir)), kafkaPort: port };
      const [status] = await localInfrastructureStatus(other, ['kafka']);
      expect(status!.state).toBe('foreign');
      const error = await expectInfraError(upLocalInfrastructure(other, ['kafka']), 'port_in_use');
      expect(error.message).toContain(String(port));
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('sees a killed broker as stale and restarts it on its existing data', async () => {
    const brokers = localEndpoints(config).kafkaBrokers;
    const kafka = new Kafka({ clientId: 'launcher-test', brokers, logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'survives-restart', numPartitions: 2 }], waitForLeaders: true });
    await admin.disconnect();

    const [running] = await localInfrastructureStatus(config, ['kafka']);
    execFileSync('kill', ['-9', String(running!.pid)]);
    await expect.poll(() => processAlive(running!.pid!), { timeout: 10_000 }).toBe(false);
    const [stale] = await localInfrastructureStatus(config, ['kafka']);
    expect(stale!.state).toBe('stale');

    const [restarted] = await upLocalInfrastructure(config, ['kafka']);
    expect(restarted!.state).toBe('ready');
    expect(restarted!.pid).not.toBe(running!.pid);
    const again = kafka.admin();
    await again.connect();
    expect(await again.listTopics()).toContain('survives-restart');
    await again.disconnect();
  });

  it('stops both by pid, and purges their data on request', async () => {
    const running = await localInfrastructureStatus(config);
    const lines = await downLocalInfrastructure(config, undefined, { purge: true });
    expect(lines.filter((l) => l.includes('stopped (pid'))).toHaveLength(2);
    for (const s of running) expect(processAlive(s.pid!)).toBe(false);
    expect((await localInfrastructureStatus(config)).map((s) => s.state)).toEqual(['stopped', 'stopped']);
    await expect(stat(join(config.dataDir, 'kafka'))).rejects.toThrow();
    expect(await downLocalInfrastructure(config)).toEqual(['kafka: not running', 'elasticsearch: not running']);
  });
});

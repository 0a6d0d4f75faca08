import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { InfraError } from '../../infra/errors.js';
import { assertPortsFree, canBind, findFreePort, findFreePorts, isPortOpen } from '../../infra/ports.js';

function listen(port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1' }, () => resolve(server));
  });
}

function portOf(server: Server): number {
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('server has no TCP address');
  return address.port;
}

function close(server: Server): Promise<void> {
  return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}

const open: Server[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => (s.listening ? close(s) : Promise.resolve())));
});

describe('canBind and isPortOpen', () => {
  it('see a listening server, and its absence once it closes', async () => {
    const server = await listen();
    open.push(server);
    const port = portOf(server);

    expect(await canBind(port)).toBe(false);
    expect(await isPortOpen(port)).toBe(true);

    await close(server);

    expect(await canBind(port)).toBe(true);
    expect(await isPortOpen(port)).toBe(false);
  });
});

describe('assertPortsFree', () => {
  it('resolves when every port is free', async () => {
    const port = await findFreePort();
    await expect(assertPortsFree([{ port, purpose: 'Kafka', flag: '--kafka-port' }])).resolves.toBeUndefined();
  });

  it('rejects with port_in_use naming the port, its purpose and the flag', async () => {
    const server = await listen();
    open.push(server);
    const port = portOf(server);
    const free = await findFreePort();

    const error: unknown = await assertPortsFree([
      { port: free, purpose: 'Kafka controller', flag: '--kafka-controller-port' },
      { port, purpose: 'Elasticsearch HTTP', flag: '--es-port' },
    ]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InfraError);
    const infraError = error as InfraError;
    expect(infraError.code).toBe('port_in_use');
    expect(infraError.message).toBe(
      `port already in use by another program: ${port} (Elasticsearch HTTP; change it with --es-port)`,
    );
    expect(infraError.message).not.toContain('--kafka-controller-port');
  });

  it('lists every taken port', async () => {
    const a = await listen();
    const b = await listen();
    open.push(a, b);
    const error: unknown = await assertPortsFree([
      { port: portOf(a), purpose: 'Kafka', flag: '--kafka-port' },
      { port: portOf(b), purpose: 'Elasticsearch HTTP', flag: '--es-port' },
    ]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as InfraError).code).toBe('port_in_use');
    expect((error as InfraError).message).toBe(
      `ports already in use by another program: ${portOf(a)} (Kafka; change it with --kafka-port), ` +
        `${portOf(b)} (Elasticsearch HTTP; change it with --es-port)`,
    );
  });
});

describe('findFreePort', () => {
  it('returns a port in range that can be bound', async () => {
    const port = await findFreePort();
    expect(Number.isInteger(port)).toBe(true);
    expect(port).toBeGreaterThan(0);
    expect(port).toBeLessThanOrEqual(65535);
    expect(await canBind(port)).toBe(true);
    const server = await listen(port);
    open.push(server);
    expect(portOf(server)).toBe(port);
  });
});

describe('findFreePorts', () => {
  it('returns distinct bindable ports, however many are asked for', async () => {
    const ports = await findFreePorts(16);
    expect(ports).toHaveLength(16);
    expect(new Set(ports).size).toBe(16);
    for (const port of ports) expect(await canBind(port)).toBe(true);
  });
});

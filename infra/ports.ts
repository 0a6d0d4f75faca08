import { createServer, Socket, type Server } from 'node:net';
import { InfraError } from './errors.js';

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function isPortOpen(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (open: boolean): void => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.connect(port, host);
  });
}

/** True when this process could bind 127.0.0.1:port right now. */
export function canBind(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export async function assertPortsFree(ports: { port: number; purpose: string; flag: string }[]): Promise<void> {
  const taken: string[] = [];
  for (const { port, purpose, flag } of ports) {
    if (!(await canBind(port))) taken.push(`${port} (${purpose}; change it with ${flag})`);
  }
  if (taken.length > 0) {
    throw new InfraError(
      'port_in_use',
      `port${taken.length > 1 ? 's' : ''} already in use by another program: ${taken.join(', ')}`,
      'Stop that program, or pick other ports.',
    );
  }
}

/** A free ephemeral port on 127.0.0.1 (for tests and containers). */
export async function findFreePort(): Promise<number> {
  const [port] = await findFreePorts(1);
  return port!;
}

/**
 * `count` distinct free ephemeral ports on 127.0.0.1. All are held open until every one is chosen:
 * asking one at a time lets the system hand the same port out twice.
 */
export async function findFreePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i += 1) {
      servers.push(
        await new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen({ port: 0, host: '127.0.0.1' }, () => resolve(server));
        }),
      );
    }
    return servers.map((server) => {
      const address = server.address();
      return typeof address === 'object' && address ? address.port : 0;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

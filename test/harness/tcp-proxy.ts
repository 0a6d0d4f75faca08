import { createServer, Socket, type Server } from 'node:net';

/**
 * A TCP proxy in front of a real server, which a test can cut (every connection dropped and new
 * ones refused) and restore — an outage without stopping the shared server.
 */
export interface TcpProxy {
  readonly port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = async (): Promise<void> => {
    const next = createServer((client) => {
      const upstream = new Socket();
      sockets.add(client).add(upstream);
      const drop = (): void => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      upstream.connect(target.port, target.host, () => {
        client.pipe(upstream);
        upstream.pipe(client);
      });
    });
    await new Promise<void>((resolve) => next.listen(port, '127.0.0.1', resolve));
    const address = next.address();
    port = typeof address === 'object' && address ? address.port : port;
    server = next;
  };
  const stopListening = async (): Promise<void> => {
    const current = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (current) await new Promise((resolve) => current.close(resolve));
  };
  await listen();
  return {
    get port() {
      return port;
    },
    cut: stopListening,
    restore: listen,
    close: stopListening,
  };
}

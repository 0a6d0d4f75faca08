import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServerOptions {
  registry: Registry;
  /** 0 picks a free port; the chosen one is in the returned url. */
  port: number;
  /** Loopback unless asked: metrics reveal topic names and volumes. */
  host?: string;
  /** What `/livez` and `/readyz` report; without it both answer ok while the process serves. */
  health?: () => Promise<HealthReport>;
}

/**
 * Liveness: the process can still make progress (restart it otherwise). Readiness: it can do its
 * work now — its broker and datastore answer (hold rollouts and traffic otherwise).
 */
export interface HealthReport {
  live: boolean;
  ready: boolean;
  /** Why not, for the probe's log and a person reading it; empty when all is well. */
  problems: string[];
}

export interface MetricsServer {
  /** Base url, e.g. http://127.0.0.1:9464 (no trailing slash). */
  readonly url: string;
  close(): Promise<void>;
}

const ROUTES = new Set(['/metrics', '/healthz', '/livez', '/readyz']);

const ALWAYS_HEALTHY = (): Promise<HealthReport> => Promise.resolve({ live: true, ready: true, problems: [] });

async function answerHealth(
  health: () => Promise<HealthReport>,
  which: 'live' | 'ready',
  res: ServerResponse,
): Promise<void> {
  let report: HealthReport;
  try {
    report = await health();
  } catch (error) {
    report = { live: true, ready: false, problems: [`health check failed: ${String(error)}`] };
  }
  const ok = which === 'live' ? report.live : report.live && report.ready;
  res
    .writeHead(ok ? 200 : 503, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
    .end(`${JSON.stringify({ status: ok ? 'ok' : 'unavailable', problems: report.problems })}\n`);
}

async function handle(
  registry: Registry,
  health: () => Promise<HealthReport>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  // The base is only there to parse a path; the Host header is never trusted for anything.
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (!ROUTES.has(path)) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
    return;
  }
  // HEAD is answered like GET (Node drops the body), as HTTP requires of any server that serves GET.
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
    return;
  }
  if (path === '/healthz' || path === '/livez') {
    await answerHealth(health, 'live', res);
    return;
  }
  if (path === '/readyz') {
    await answerHealth(health, 'ready', res);
    return;
  }
  let body: string;
  try {
    body = await registry.metrics();
  } catch {
    // A failing collector must not take the endpoint down, and its message is not for scrapers.
    res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics collection failed\n');
    return;
  }
  res.writeHead(200, { 'content-type': registry.contentType }).end(body);
}

/**
 * Serves `GET /metrics` (Prometheus text format), `/livez` (`/healthz`) and `/readyz` over plain
 * node:http: the port Kubernetes probes and Prometheus scrapes.
 */
export async function startMetricsServer({
  registry,
  port,
  host = '127.0.0.1',
  health = ALWAYS_HEALTHY,
}: MetricsServerOptions): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    handle(registry, health, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // A scraper's keep-alive socket would otherwise hold close() open until it times out.
        server.closeAllConnections();
      }),
  };
}

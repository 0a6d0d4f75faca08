import { createServer } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer, type HealthReport, type MetricsServer } from '../../streams/telemetry/metrics-server.js';
import { createMetricsRegistry, stageMetrics } from '../../streams/telemetry/metrics.js';

describe('startMetricsServer', () => {
  let server: MetricsServer;

  beforeAll(async () => {
    const registry = createMetricsRegistry();
    stageMetrics(registry, 'chunk').received.inc(3);
    server = await startMetricsServer({ registry, port: 0 });
  });

  afterAll(async () => {
    await server.close();
  });

  it('reports the real port when asked for port 0', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toMatch(/:0$/);
  });

  it('serves the registry in Prometheus text format', async () => {
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(new Registry().contentType);
    const text = await res.text();
    expect(text).toContain('neon_stage_records_received_total{stage="chunk"} 3');
    expect(text).toContain('neon_process_cpu_user_seconds_total');
  });

  it('ignores a query string', async () => {
    expect((await fetch(`${server.url}/metrics?name[]=x`)).status).toBe(200);
  });

  it.each(['/healthz', '/livez', '/readyz'])('answers %s with ok when no health check is given', async (path) => {
    const res = await fetch(`${server.url}${path}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', problems: [] });
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await fetch(`${server.url}/healthz`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it.each(['/', '/metric', '/metrics/x', '/favicon.ico'])('answers 404 for %s', async (path) => {
    const res = await fetch(`${server.url}${path}`);
    expect(res.status).toBe(404);
    await res.body?.cancel();
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('answers 405 to %s with the allowed methods', async (method) => {
    const res = await fetch(`${server.url}/metrics`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    await res.body?.cancel();
  });

  it('answers 500 without the collector’s message when collection fails', async () => {
    const registry = new Registry();
    registry.metrics = () => Promise.reject(new Error('secret detail'));
    const failing = await startMetricsServer({ registry, port: 0 });
    try {
      const res = await fetch(`${failing.url}/metrics`);
      expect(res.status).toBe(500);
      expect(await res.text()).not.toContain('secret');
      expect((await fetch(`${failing.url}/healthz`)).status).toBe(200);
    } finally {
      await failing.close();
    }
  });
});

describe('startMetricsServer health', () => {
  async function probe(report: () => Promise<HealthReport>, path: string): Promise<{ status: number; body: unknown }> {
    const server = await startMetricsServer({ registry: new Registry(), port: 0, health: report });
    try {
      const res = await fetch(`${server.url}${path}`);
      return { status: res.status, body: await res.json() };
    } finally {
      await server.close();
    }
  }

  it('is live but not ready while a dependency is down, and says why', async () => {
    const down = () => Promise.resolve({ live: true, ready: false, problems: ['Elasticsearch: connection refused'] });
    expect((await probe(down, '/livez')).status).toBe(200);
    const ready = await probe(down, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'unavailable', problems: ['Elasticsearch: connection refused'] });
  });

  it('is neither live nor ready once a stage died', async () => {
    const dead = () => Promise.resolve({ live: false, ready: true, problems: ['stage chunk stopped'] });
    expect((await probe(dead, '/livez')).status).toBe(503);
    expect((await probe(dead, '/healthz')).status).toBe(503);
    expect((await probe(dead, '/readyz')).status).toBe(503);
  });

  it('a throwing check makes the process unready, not dead', async () => {
    const broken = () => Promise.reject(new Error('boom'));
    expect((await probe(broken, '/livez')).status).toBe(200);
    expect((await probe(broken, '/readyz')).status).toBe(503);
  });
});

describe('startMetricsServer lifecycle', () => {
  it('rejects when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      await expect(startMetricsServer({ registry: new Registry(), port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('closes promptly even with a keep-alive connection open, and frees the port', async () => {
    const first = await startMetricsServer({ registry: new Registry(), port: 0 });
    const res = await fetch(`${first.url}/healthz`, { headers: { connection: 'keep-alive' } });
    await res.text();
    const started = Date.now();
    await first.close();
    expect(Date.now() - started).toBeLessThan(1000);
    const port = Number(new URL(first.url).port);
    const second = await startMetricsServer({ registry: new Registry(), port });
    await second.close();
  });
});

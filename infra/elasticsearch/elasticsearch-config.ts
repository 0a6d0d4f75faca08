export interface ElasticsearchNodeSettings {
  httpPort: number;
  transportPort: number;
  dataPath: string;
  logsPath: string;
  /**
   * Security on: authentication (the file realm, API keys) and authorisation, over plain HTTP and
   * transport. Elasticsearch's demand for TLS on the transport when security is on is a bootstrap
   * check, enforced only on a node that binds beyond loopback and is not single-node; this one is
   * neither, so it only logs a warning. Off by default (`neon infra up`); the tests of the API keys
   * start a second node with it on.
   */
  security?: boolean;
}

/**
 * A single local node on loopback. Security is off for this local instance only (the Kubernetes
 * manifests keep it on) unless `security` asks for it; disk watermarks are off so a nearly full
 * developer disk does not turn indices read-only in the middle of a test run.
 */
export function renderElasticsearchYml(settings: ElasticsearchNodeSettings): string {
  const lines: Record<string, string | number | boolean> = {
    'cluster.name': 'neon-local',
    'node.name': 'neon-local-1',
    'path.data': settings.dataPath,
    'path.logs': settings.logsPath,
    'network.host': '127.0.0.1',
    'http.port': settings.httpPort,
    'transport.port': settings.transportPort,
    'discovery.type': 'single-node',
    'xpack.security.enabled': settings.security === true,
    ...(settings.security === true
      ? { 'xpack.security.http.ssl.enabled': false, 'xpack.security.transport.ssl.enabled': false }
      : {}),
    'cluster.routing.allocation.disk.threshold_enabled': false,
    'action.destructive_requires_name': true,
  };
  return `${Object.entries(lines)
    .map(
      ([key, value]) => `${key}: ${typeof value === 'string' && value.includes('/') ? JSON.stringify(value) : value}`,
    )
    .join('\n')}\n`;
}

/** Heap as a jvm.options.d file: bounded, and with Xms == Xmx as Elasticsearch recommends. */
export function renderHeapOptions(heap: string): string {
  return `-Xms${heap}\n-Xmx${heap}\n`;
}

import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderElasticsearchYml, renderHeapOptions } from '../../infra/elasticsearch/elasticsearch-config.js';

describe('renderElasticsearchYml', () => {
  const text = renderElasticsearchYml({
    httpPort: 19200,
    transportPort: 19300,
    dataPath: '/var/lib/neon stream/es/data',
    logsPath: '/var/lib/neon-stream/es/logs',
  });
  const parsed = parse(text) as Record<string, unknown>;

  it('parses as flat YAML with the expected keys', () => {
    expect(Object.keys(parsed).sort()).toEqual(
      [
        'action.destructive_requires_name',
        'cluster.name',
        'cluster.routing.allocation.disk.threshold_enabled',
        'discovery.type',
        'http.port',
        'network.host',
        'node.name',
        'path.data',
        'path.logs',
        'transport.port',
        'xpack.security.enabled',
      ].sort(),
    );
  });

  it('is a single node on loopback with the given ports as numbers', () => {
    expect(parsed['discovery.type']).toBe('single-node');
    expect(parsed['network.host']).toBe('127.0.0.1');
    expect(parsed['http.port']).toBe(19200);
    expect(parsed['transport.port']).toBe(19300);
  });

  it('turns security and the disk threshold off, as booleans', () => {
    expect(parsed['xpack.security.enabled']).toBe(false);
    expect(parsed['cluster.routing.allocation.disk.threshold_enabled']).toBe(false);
    expect(parsed['action.destructive_requires_name']).toBe(true);
  });

  it('quotes the paths and keeps them intact', () => {
    expect(text).toContain('path.data: "/var/lib/neon stream/es/data"');
    expect(text).toContain('path.logs: "/var/lib/neon-stream/es/logs"');
    expect(parsed['path.data']).toBe('/var/lib/neon stream/es/data');
    expect(parsed['path.logs']).toBe('/var/lib/neon-stream/es/logs');
  });

  it('keeps a path with YAML-special characters a string', () => {
    const yml = renderElasticsearchYml({
      httpPort: 9200,
      transportPort: 9300,
      dataPath: '/tmp/a: b #c',
      logsPath: '/tmp/"quoted"',
    });
    const doc = parse(yml) as Record<string, unknown>;
    expect(doc['path.data']).toBe('/tmp/a: b #c');
    expect(doc['path.logs']).toBe('/tmp/"quoted"');
  });
});

describe('renderElasticsearchYml with security', () => {
  const settings = { httpPort: 19201, transportPort: 19301, dataPath: '/d', logsPath: '/l' };

  it('turns security on over plain HTTP and transport for a secured node', () => {
    const parsed = parse(renderElasticsearchYml({ ...settings, security: true })) as Record<string, unknown>;
    expect(parsed['xpack.security.enabled']).toBe(true);
    expect(parsed['xpack.security.http.ssl.enabled']).toBe(false);
    expect(parsed['xpack.security.transport.ssl.enabled']).toBe(false);
    expect(parsed['discovery.type']).toBe('single-node');
  });

  it('renders exactly the same file as before when security is not asked for', () => {
    expect(renderElasticsearchYml({ ...settings, security: false })).toBe(renderElasticsearchYml(settings));
    expect(renderElasticsearchYml(settings)).not.toContain('ssl');
  });
});

describe('renderHeapOptions', () => {
  it('sets Xms equal to Xmx, one option per line', () => {
    expect(renderHeapOptions('1g')).toBe('-Xms1g\n-Xmx1g\n');
    expect(renderHeapOptions('512m')).toBe('-Xms512m\n-Xmx512m\n');
  });
});

import { describe, expect, it } from 'vitest';
import { formatStatusTable } from '../../infra/infra-command.js';
import type { ServiceStatus } from '../../infra/service-status.js';

const kafka: ServiceStatus = {
  service: 'kafka',
  state: 'ready',
  version: '3.9.1',
  endpoint: '127.0.0.1:9092',
  pid: 12345,
  dataDir: '/var/lib/neon-stream/kafka',
  detail: 'answered in 12 ms',
};

const elasticsearch: ServiceStatus = {
  service: 'elasticsearch',
  state: 'stopped',
  version: '8.19.4',
  endpoint: 'http://127.0.0.1:9200',
  dataDir: '/var/lib/neon-stream/elasticsearch',
  detail: 'not running',
};

describe('formatStatusTable', () => {
  const table = formatStatusTable([kafka, elasticsearch]);
  const lines = table.split('\n');

  it('prints a header and one row per service', () => {
    expect(lines).toEqual([
      'service        state    version  endpoint               pid    detail',
      'kafka          ready    3.9.1    127.0.0.1:9092         12345  answered in 12 ms',
      'elasticsearch  stopped  8.19.4   http://127.0.0.1:9200  -      not running',
    ]);
  });

  it('starts every column at the same offset on every line', () => {
    const header = lines[0] ?? '';
    for (const name of ['state', 'version', 'endpoint', 'pid', 'detail']) {
      const column = header.indexOf(name);
      expect(column).toBeGreaterThan(0);
      for (const line of lines.slice(1)) {
        expect(line[column - 1]).toBe(' ');
        expect(line[column]).not.toBe(' ');
      }
    }
  });

  it("shows '-' for a missing pid", () => {
    const row = formatStatusTable([elasticsearch]).split('\n')[1] ?? '';
    expect(row.split(/\s{2,}/)).toEqual([
      'elasticsearch',
      'stopped',
      '8.19.4',
      'http://127.0.0.1:9200',
      '-',
      'not running',
    ]);
  });

  it('prints only the header for no services', () => {
    expect(formatStatusTable([])).toBe('service  state  version  endpoint  pid  detail');
  });
});

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type InstanceRecord,
  readInstanceRecord,
  removeInstanceRecord,
  writeInstanceRecord,
} from '../../infra/instance-record.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'neon-record-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const record: InstanceRecord = {
  service: 'kafka',
  version: '3.9.1',
  pid: 4242,
  ports: { broker: 9092, controller: 9093 },
  startedAt: '2025-01-01T00:00:00.000Z',
};

describe('instance records', () => {
  it('round-trips through a file as pretty JSON', async () => {
    const path = join(dir, 'kafka.json');
    await writeInstanceRecord(path, record);
    expect(await readInstanceRecord(path)).toEqual(record);
    const text = await readFile(path, 'utf8');
    expect(text).toBe(`${JSON.stringify(record, null, 2)}\n`);
  });

  it('reads a missing file as undefined', async () => {
    expect(await readInstanceRecord(join(dir, 'absent.json'))).toBeUndefined();
  });

  it('reads corrupt JSON (a half-written record) as undefined', async () => {
    const path = join(dir, 'kafka.json');
    await writeFile(path, '{"service": "kafka", "pid": 42');
    expect(await readInstanceRecord(path)).toBeUndefined();
  });

  it.each([
    ['no pid', '{"service":"kafka"}'],
    ['a string pid', '{"service":"kafka","pid":"42"}'],
    ['pid 0', '{"service":"kafka","pid":0}'],
    ['a negative pid', '{"service":"kafka","pid":-1}'],
    ['JSON null', 'null'],
  ])('reads a record with %s as undefined', async (_label, text) => {
    const path = join(dir, 'kafka.json');
    await writeFile(path, text);
    expect(await readInstanceRecord(path)).toBeUndefined();
  });

  it('removes a record, and removing it again is fine', async () => {
    const path = join(dir, 'kafka.json');
    await writeInstanceRecord(path, record);
    await removeInstanceRecord(path);
    expect(await readInstanceRecord(path)).toBeUndefined();
    await expect(removeInstanceRecord(path)).resolves.toBeUndefined();
  });
});

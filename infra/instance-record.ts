import { readFile, rm, writeFile } from 'node:fs/promises';

/**
 * What a launcher remembers about the server it started, next to the server's data: enough for
 * `status` and `down` to find it again from another process, and to notice a conflicting `up`.
 */
export interface InstanceRecord {
  service: 'kafka' | 'elasticsearch';
  version: string;
  pid: number;
  ports: Record<string, number>;
  startedAt: string;
}

export async function readInstanceRecord(path: string): Promise<InstanceRecord | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as InstanceRecord;
    return typeof parsed.pid === 'number' && parsed.pid > 0 ? parsed : undefined;
  } catch {
    return undefined; // a half-written record from a crashed launcher counts as none
  }
}

export async function writeInstanceRecord(path: string, record: InstanceRecord): Promise<void> {
  await writeFile(path, `${JSON.stringify(record, null, 2)}\n`);
}

export async function removeInstanceRecord(path: string): Promise<void> {
  await rm(path, { force: true });
}

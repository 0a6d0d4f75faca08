/** Where benchmarks leave their figures: `bench/results/<name>.json`, with the machine and the commit. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

export interface MachineFacts {
  cpu: string;
  cores: number;
  memory_gib: number;
  node: string;
  platform: string;
}

export function machineFacts(): MachineFacts {
  const cpu = cpus();
  return {
    cpu: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

export function currentCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** Writes the figures with their context and returns the file's path. */
export function writeBenchResults(name: string, figures: Record<string, unknown>): string {
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const path = `${dir}${name}.json`;
  const document = {
    benchmark: name,
    measured_at: new Date().toISOString(),
    commit: currentCommit(),
    machine: machineFacts(),
    ...figures,
  };
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);
  return path;
}

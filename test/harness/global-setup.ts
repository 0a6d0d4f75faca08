import type { TestProject } from 'vitest/node';
import { acquireTestInfrastructure } from '../../devkit/acquire-infrastructure.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string[];
    elasticsearchUrl: string;
    elasticsearchHeaders: Record<string, string>;
    infrastructureSource: string;
  }
}

/** Runs once for the integration tier: finds or starts the infrastructure, hands it to the tests. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (line: string): void => void process.stderr.write(`[infra] ${line}\n`);
  const started = Date.now();
  const infra = await acquireTestInfrastructure(process.env, log);
  log(
    `using ${infra.description}: kafka ${infra.kafkaBrokers.join(',')}, elasticsearch ${infra.elasticsearchUrl} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
  project.provide('kafkaBrokers', infra.kafkaBrokers);
  project.provide('elasticsearchUrl', infra.elasticsearchUrl);
  project.provide('elasticsearchHeaders', infra.elasticsearchHeaders);
  project.provide('infrastructureSource', infra.source);
  return () => infra.release();
}

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { kafkaTopics, kafkaUsers, type Manifest } from './kafka-resources.js';
import { grafanaDashboard, metricsService, prometheusRule, serviceMonitor } from './observability.js';
import { processManifests } from './process-deployments.js';

/**
 * The parts of k8s/base that follow from the code — topics from streams/pipeline/topics.ts, users and ACLs
 * and Deployments from streams/pipeline/stage-catalog.ts, alerts and the dashboard from the metric names —
 * are rendered here, so they cannot drift from it: `npm run k8s:generate` writes them, and a test
 * fails when the committed files differ from what this renders.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const GENERATED_DIR = join(ROOT, 'k8s', 'base', 'generated');

const HEADER = (source: string): string =>
  `# Rendered by \`npm run k8s:generate\` from ${source}.\n# Edit the source, not this file: a test fails when they differ.\n`;

function yamlDocuments(manifests: Manifest[], source: string): string {
  return HEADER(source) + manifests.map((m) => `---\n${stringify(m, { lineWidth: 0 })}`).join('');
}

export function renderedFiles(): Map<string, string> {
  return new Map([
    [
      'kafka-topics.yaml',
      yamlDocuments(kafkaTopics(), 'streams/pipeline/topics.ts (infra/kubernetes/kafka-resources.ts)'),
    ],
    [
      'kafka-users.yaml',
      yamlDocuments(kafkaUsers(), 'streams/pipeline/stage-catalog.ts (infra/kubernetes/kafka-resources.ts)'),
    ],
    [
      'processes.yaml',
      yamlDocuments(processManifests(), 'streams/pipeline/stage-catalog.ts (infra/kubernetes/process-deployments.ts)'),
    ],
    [
      'monitoring.yaml',
      yamlDocuments([metricsService(), serviceMonitor(), prometheusRule()], 'infra/kubernetes/observability.ts'),
    ],
    ['neon-stream-dashboard.json', `${JSON.stringify(grafanaDashboard(), null, 2)}\n`],
  ]);
}

/** Files whose committed text differs from the rendering (missing ones included). */
export function staleFiles(): string[] {
  return [...renderedFiles()].flatMap(([name, text]) => {
    let current: string | undefined;
    try {
      current = readFileSync(join(GENERATED_DIR, name), 'utf8');
    } catch {
      current = undefined;
    }
    return current === text ? [] : [name];
  });
}

function main(argv: readonly string[]): void {
  if (argv.includes('--check')) {
    const stale = staleFiles();
    if (stale.length > 0) {
      process.stderr.write(`out of date in k8s/base/generated: ${stale.join(', ')} — run npm run k8s:generate\n`);
      process.exitCode = 1;
    }
    return;
  }
  mkdirSync(GENERATED_DIR, { recursive: true });
  for (const [name, text] of renderedFiles()) {
    writeFileSync(join(GENERATED_DIR, name), text);
    process.stdout.write(`wrote ${relative(ROOT, join(GENERATED_DIR, name))}\n`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));

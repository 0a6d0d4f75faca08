import { stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isInfraError } from '../errors.js';
import { isKustomization, listOverlays, validateKustomization } from './overlays.js';
import { ensureK8sValidationTools } from './tools.js';
import { validateManifests, type ValidationReport } from './validate.js';

/**
 * `npm run k8s:validate [-- PATH…]`: renders every overlay under k8s/overlays (or each kustomization
 * directory given) with kustomize and validates it, strictly and offline, against the pinned
 * Kubernetes and CRD schemas; plain YAML files given are validated as they are. Exit 1 on any problem,
 * 2 when the tools could not be set up.
 */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

async function targets(args: string[]): Promise<string[]> {
  if (args.length > 0) return args.map((arg) => resolve(arg));
  return listOverlays(join(repoRoot, 'k8s', 'overlays'));
}

async function check(
  path: string,
  tools: Awaited<ReturnType<typeof ensureK8sValidationTools>>,
): Promise<ValidationReport> {
  const label = relative(process.cwd(), path) || '.';
  if ((await stat(path)).isDirectory()) {
    if (!(await isKustomization(path))) throw new Error(`${label} is a directory without a kustomization`);
    return validateKustomization(path, tools, label);
  }
  return validateManifests({ files: [path] }, tools);
}

async function main(): Promise<number> {
  const paths = await targets(process.argv.slice(2));
  if (paths.length === 0) {
    console.error('no overlays found under k8s/overlays (each needs a kustomization.yaml)');
    return 1;
  }
  const tools = await ensureK8sValidationTools();
  let failed = 0;
  for (const path of paths) {
    const label = relative(process.cwd(), path) || '.';
    try {
      const report = await check(path, tools);
      if (report.ok) {
        console.log(`ok    ${label}: ${report.resources} resources valid`);
        continue;
      }
      failed++;
      console.log(`FAIL  ${label}: ${report.problems.length} of ${report.resources} resources have problems`);
      for (const p of report.problems)
        console.log(`      ${p.kind || '?'} ${p.name || '?'} (${p.apiVersion || '?'}): ${p.message}`);
    } catch (error) {
      failed++;
      console.log(`FAIL  ${label}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(isInfraError(error) ? error.describe() : error);
    process.exitCode = 2;
  },
);

import { ensureK8sValidationTools, type K8sValidationTools } from './tools.js';
import { outputTail, runCommand } from './run-command.js';

export interface ManifestProblem {
  /** The file, or the label given to a YAML text (e.g. the overlay it was rendered from). */
  source: string;
  kind: string;
  name: string;
  apiVersion: string;
  message: string;
}

export interface ValidationReport {
  ok: boolean;
  /** Resources kubeconform looked at (documents with a kind). */
  resources: number;
  problems: ManifestProblem[];
}

export type ManifestInput = { text: string; source?: string } | { files: readonly string[] };

interface KubeconformResource {
  filename?: string;
  kind?: string;
  name?: string;
  version?: string;
  status?: string;
  msg?: string;
  validationErrors?: { path?: string; msg?: string }[];
}

interface KubeconformOutput {
  resources?: KubeconformResource[];
  summary?: { valid?: number; invalid?: number; errors?: number; skipped?: number };
}

let sharedTools: Promise<K8sValidationTools> | undefined;

/** One set-up per process, however many callers ask. */
function defaultTools(): Promise<K8sValidationTools> {
  sharedTools ??= ensureK8sValidationTools().catch((error: unknown) => {
    sharedTools = undefined;
    throw error;
  });
  return sharedTools;
}

/**
 * kubeconform's message as "at '<path>': <what>" lines joined by "; ", without the preamble that names
 * its schema file and without the "validation failed" wrappers around the real causes.
 */
export function tidyMessage(message: string): string {
  const [, ...causes] = message.split(/\s+- (?=at ')/);
  if (causes.length === 0) return message.trim();
  const specific = causes.map((cause) => cause.trim()).filter((cause) => !/: (validation|allOf) failed$/.test(cause));
  return (specific.length > 0 ? specific : causes.map((cause) => cause.trim())).join('; ');
}

/** Reads kubeconform's `-output json -summary` report. Exported for tests. */
export function parseKubeconformReport(stdout: string, stdinLabel: string): ValidationReport {
  const report = JSON.parse(stdout) as KubeconformOutput;
  const problems = (report.resources ?? [])
    // -summary without -verbose lists only what is not valid; empty documents are not resources.
    .filter((r) => r.status !== 'statusValid' && r.status !== 'statusEmpty')
    .map((r) => ({
      source: !r.filename || r.filename === 'stdin' ? stdinLabel : r.filename,
      kind: r.kind ?? '',
      name: r.name ?? '',
      apiVersion: r.version ?? '',
      message: tidyMessage(r.msg ?? r.status ?? 'invalid'),
    }))
    // kubeconform checks resources in parallel; a stable order makes reports comparable.
    .sort((a, b) => `${a.source}\0${a.kind}\0${a.name}`.localeCompare(`${b.source}\0${b.kind}\0${b.name}`));
  const summary = report.summary ?? {};
  const resources = (summary.valid ?? 0) + (summary.invalid ?? 0) + (summary.errors ?? 0) + (summary.skipped ?? 0);
  return { ok: problems.length === 0, resources, problems };
}

/**
 * Validates manifests against the pinned Kubernetes and CRD schemas with kubeconform, strictly: an
 * unknown field, a wrong type, or a kind without a schema is a problem (no -ignore-missing-schemas).
 */
export async function validateManifests(input: ManifestInput, tools?: K8sValidationTools): Promise<ValidationReport> {
  const { kubeconform, schemaLocations } = tools ?? (await defaultTools());
  const args = ['-strict', '-summary', '-output', 'json'];
  for (const location of schemaLocations) args.push('-schema-location', location);
  const fromText = 'text' in input;
  if (!fromText) {
    if (input.files.length === 0) throw new Error('validateManifests: no files given');
    args.push(...input.files);
  }
  const result = await runCommand(kubeconform, args, fromText ? { input: input.text } : {});
  let report: ValidationReport;
  try {
    report = parseKubeconformReport(result.stdout, fromText ? (input.source ?? 'stdin') : 'stdin');
  } catch {
    throw new Error(`kubeconform failed (exit ${result.code}) without a report:\n    ${outputTail(result)}`);
  }
  if (result.code !== 0 && report.ok) {
    throw new Error(`kubeconform failed (exit ${result.code}) with no problem listed:\n    ${outputTail(result)}`);
  }
  return report;
}

/** Renders a kustomization directory with `kustomize build` (a remote base would need the network). */
export async function renderKustomization(directory: string, tools?: K8sValidationTools): Promise<string> {
  const { kustomize } = tools ?? (await defaultTools());
  const result = await runCommand(kustomize, ['build', directory]);
  if (result.code !== 0) {
    throw new Error(`kustomize build ${directory} failed (exit ${result.code}):\n    ${outputTail(result, 30)}`);
  }
  return result.stdout;
}

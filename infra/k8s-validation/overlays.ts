import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathExists } from './cache-layout.js';
import type { K8sValidationTools } from './tools.js';
import { renderKustomization, validateManifests, type ValidationReport } from './validate.js';

const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

export async function isKustomization(directory: string): Promise<boolean> {
  for (const name of KUSTOMIZATION_FILES) if (await pathExists(join(directory, name))) return true;
  return false;
}

/** Every directory directly under `overlaysDir` that is a kustomization, sorted; none if it is missing. */
export async function listOverlays(overlaysDir: string): Promise<string[]> {
  if (!(await pathExists(overlaysDir))) return [];
  const entries = await readdir(overlaysDir, { withFileTypes: true });
  const overlays: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory() && (await isKustomization(join(overlaysDir, entry.name)))) {
      overlays.push(join(overlaysDir, entry.name));
    }
  }
  return overlays;
}

/** Renders one kustomization and validates what it renders; `label` names it in the problems. */
export async function validateKustomization(
  directory: string,
  tools: K8sValidationTools,
  label = directory,
): Promise<ValidationReport> {
  const rendered = await renderKustomization(directory, tools);
  return validateManifests({ text: rendered, source: label }, tools);
}

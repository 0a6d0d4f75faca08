import { createHash } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { processAlive } from '../process-control.js';
import { defaultDirectories } from '../../schemas/local-infra-config.js';
import { CRD_MODULES, KUBECONFORM, KUBERNETES_SCHEMAS, KUSTOMIZE, STRIMZI, type GoToolPin } from './pins.js';

/**
 * Bumped whenever the code that turns downloads into schema files changes, so that a cache written by
 * older code is rebuilt rather than trusted.
 */
export const SCHEMA_LAYOUT_REVISION = 1;

type Env = Readonly<Record<string, string | undefined>>;

/** The project's download cache (NEON_CACHE_DIR, else the same default as the local infrastructure). */
export function k8sValidationCacheRoot(env: Env = process.env): string {
  return join(env.NEON_CACHE_DIR ?? defaultDirectories(env).cacheDir, 'k8s-validation');
}

/** A short digest of the inputs of one cache entry: its name changes with any pin it depends on. */
function digestOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 12);
}

export interface K8sValidationPaths {
  root: string;
  kubeconform: string;
  kustomize: string;
  /** Kubernetes' own kinds: `<kind><-group>-<version>.json` plus `_definitions.json`. */
  kubernetesSchemaDir: string;
  /** Custom resources: `<group>/<kind>_<version>.json`. */
  crdSchemaDir: string;
}

export function toolBinaryPath(root: string, pin: GoToolPin): string {
  return join(root, 'bin', `${pin.name}-${pin.version}`);
}

export function k8sValidationPaths(root: string): K8sValidationPaths {
  return {
    root,
    kubeconform: toolBinaryPath(root, KUBECONFORM),
    kustomize: toolBinaryPath(root, KUSTOMIZE),
    kubernetesSchemaDir: join(
      root,
      'schemas',
      `kubernetes-v${KUBERNETES_SCHEMAS.kubernetesVersion}-${digestOf([KUBERNETES_SCHEMAS, SCHEMA_LAYOUT_REVISION])}`,
    ),
    crdSchemaDir: join(
      root,
      'schemas',
      `crds-${digestOf([CRD_MODULES, STRIMZI, KUBERNETES_SCHEMAS, SCHEMA_LAYOUT_REVISION])}`,
    ),
  };
}

export async function pathExists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Scratch directories of earlier runs that were killed mid-way (their process is gone). */
async function removeAbandonedScratch(finalPath: string): Promise<void> {
  const prefix = `${basename(finalPath)}.partial-`;
  for (const name of await readdir(dirname(finalPath))) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && !processAlive(pid)) {
      await rm(join(dirname(finalPath), name), { recursive: true, force: true });
    }
  }
}

/**
 * Builds a cache entry in a scratch directory next to its final place and renames it there only when
 * `fill` succeeded, so an interrupted or failed download never looks complete. Another process that
 * finished the same entry first wins; its copy passed the same checks.
 */
export async function publishAtomically(finalPath: string, fill: (scratch: string) => Promise<string>): Promise<void> {
  await mkdir(dirname(finalPath), { recursive: true });
  await removeAbandonedScratch(finalPath);
  const scratch = `${finalPath}.partial-${process.pid}-${Date.now()}`;
  await mkdir(scratch, { recursive: true });
  try {
    const built = await fill(scratch);
    try {
      await rename(built, finalPath);
    } catch (error) {
      if (!(await pathExists(finalPath))) throw error;
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

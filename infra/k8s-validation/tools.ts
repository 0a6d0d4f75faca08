import { buildGoTool } from './go-modules.js';
import { ensureCrdSchemas } from './crd-schemas.js';
import { k8sValidationCacheRoot, k8sValidationPaths, pathExists, type K8sValidationPaths } from './cache-layout.js';
import { ensureKubernetesSchemas } from './kubernetes-schemas.js';
import { KUBECONFORM, KUSTOMIZE } from './pins.js';

export interface K8sValidationTools extends K8sValidationPaths {
  /** kubeconform's `-schema-location` templates: Kubernetes' kinds first, then custom resources. */
  schemaLocations: [string, string];
}

export interface EnsureOptions {
  /** Defaults to `<NEON_CACHE_DIR or the default cache>/k8s-validation`. */
  cacheRoot?: string;
  log?: (line: string) => void;
}

/**
 * Returns kubeconform, kustomize and the schema directories, building and downloading whatever the
 * cache lacks (about a minute on 2 cores, once; pins.ts says what and from where). Later calls need no
 * network.
 */
export async function ensureK8sValidationTools(options: EnsureOptions = {}): Promise<K8sValidationTools> {
  const log = options.log ?? ((line: string) => void process.stderr.write(`[k8s-validation] ${line}\n`));
  const paths = k8sValidationPaths(options.cacheRoot ?? k8sValidationCacheRoot());
  if (!(await pathExists(paths.kubeconform))) await buildGoTool(KUBECONFORM, paths.kubeconform, log);
  if (!(await pathExists(paths.kustomize))) await buildGoTool(KUSTOMIZE, paths.kustomize, log);
  if (!(await pathExists(paths.kubernetesSchemaDir))) await ensureKubernetesSchemas(paths.kubernetesSchemaDir, log);
  if (!(await pathExists(paths.crdSchemaDir))) {
    await ensureCrdSchemas(paths.crdSchemaDir, paths.kubernetesSchemaDir, log);
  }
  return {
    ...paths,
    schemaLocations: [
      `${paths.kubernetesSchemaDir}/{{.ResourceKind}}{{.KindSuffix}}.json`,
      `${paths.crdSchemaDir}/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json`,
    ],
  };
}

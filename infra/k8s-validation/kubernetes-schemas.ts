import extractZip from 'extract-zip';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InfraError } from '../errors.js';
import { publishAtomically } from './cache-layout.js';
import { requirePinnedSha256 } from './pinned-hash.js';
import { KUBERNETES_SCHEMAS } from './pins.js';
import { CommandNotFoundError, outputTail, runCommand } from './run-command.js';

const DEFINITIONS = '_definitions.json';
/** How kubernetes-validate's files refer to the shared definitions: absolute, against their `$id`. */
const ABSOLUTE_DEFINITIONS_REF = `/api/${DEFINITIONS}#`;

/** Core kinds whose schema files must be present, as a check that the wheel's layout is the expected one. */
export const EXPECTED_KUBERNETES_SCHEMA_FILES = [
  'deployment-apps-v1.json',
  'service-v1.json',
  'configmap-v1.json',
  'secret-v1.json',
  'namespace-v1.json',
  'serviceaccount-v1.json',
  'poddisruptionbudget-policy-v1.json',
  'networkpolicy-networking-v1.json',
  'ingress-networking-v1.json',
  DEFINITIONS,
];

async function downloadWheel(directory: string): Promise<string> {
  const { pypiPackage, packageVersion, wheelFile, wheelSha256 } = KUBERNETES_SCHEMAS;
  const python = process.env.NEON_PYTHON ?? 'python3';
  // pip, not a hand-made request: the user's index, mirror and certificate settings apply.
  const args = ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check'];
  args.push('--dest', directory, `${pypiPackage}==${packageVersion}`);
  const result = await runCommand(python, args, { timeoutMs: 10 * 60_000 }).catch((error: unknown) => {
    if (!(error instanceof CommandNotFoundError)) throw error;
    throw new InfraError(
      'download_failed',
      `Python (\`${python}\`) with pip is needed once to download ${pypiPackage} from PyPI, and it was not found`,
      'Install Python 3 with pip (or set NEON_PYTHON), then run again.',
      { cause: error },
    );
  });
  if (result.code !== 0) {
    throw new InfraError(
      'download_failed',
      `pip could not download ${pypiPackage}==${packageVersion} (exit ${result.code}):\n    ${outputTail(result)}`,
      'Check that PyPI (or your pip index) is reachable, then run again.',
    );
  }
  const wheel = join(directory, wheelFile);
  await requirePinnedSha256(wheel, wheelSha256, 'PyPI');
  return wheel;
}

/**
 * kubernetes-validate's schemas carry an `$id` on kubernetes.io and refer to the shared definitions by
 * absolute path, which a validator resolves to https://kubernetes.io/… — a network fetch. Without the
 * `$id`, a relative reference resolves to the file next door instead.
 */
export function localizeSchema(schema: Record<string, unknown>, isDefinitions: boolean): Record<string, unknown> {
  const target = isDefinitions ? '#' : `${DEFINITIONS}#`;
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        if (value.startsWith(ABSOLUTE_DEFINITIONS_REF))
          out[key] = target + value.slice(ABSOLUTE_DEFINITIONS_REF.length);
        else if (value.startsWith('#')) out[key] = value;
        else throw new Error(`unexpected $ref ${value}: only references to ${DEFINITIONS} can be resolved offline`);
      } else {
        out[key] = visit(value);
      }
    }
    return out;
  };
  const withoutId = { ...schema };
  delete withoutId.$id;
  return visit(withoutId) as Record<string, unknown>;
}

/**
 * Lays out the strict JSON schemas of the pinned Kubernetes release in `finalDir` (once), named the
 * way kubeconform's `{{.ResourceKind}}{{.KindSuffix}}.json` template expects.
 */
export async function ensureKubernetesSchemas(finalDir: string, log: (line: string) => void): Promise<void> {
  const { pypiPackage, packageVersion, kubernetesVersion } = KUBERNETES_SCHEMAS;
  await publishAtomically(finalDir, async (scratch) => {
    log(`downloading Kubernetes ${kubernetesVersion} schemas (PyPI ${pypiPackage} ${packageVersion}, ~22 MB) (once)…`);
    const wheel = await downloadWheel(join(scratch, 'download'));
    const unpacked = join(scratch, 'unpacked');
    await extractZip(wheel, { dir: unpacked });
    const source = join(
      unpacked,
      'kubernetes_validate',
      'kubernetes-json-schema',
      `v${kubernetesVersion}-local-strict`,
    );
    const out = join(scratch, 'schemas');
    await mkdir(out);
    for (const name of await readdir(source)) {
      if (!name.endsWith('.json')) continue;
      const schema = JSON.parse(await readFile(join(source, name), 'utf8')) as Record<string, unknown>;
      await writeFile(join(out, name), JSON.stringify(localizeSchema(schema, name === DEFINITIONS)));
    }
    const present = new Set(await readdir(out));
    const missing = EXPECTED_KUBERNETES_SCHEMA_FILES.filter((name) => !present.has(name));
    if (missing.length > 0) {
      throw new InfraError('download_failed', `${pypiPackage} ${packageVersion} lacks ${missing.join(', ')}`);
    }
    return out;
  });
}

import { copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { InfraError } from '../errors.js';
import { publishAtomically } from './cache-layout.js';
import { crdSchemaFiles } from './crd-to-json-schema.js';
import { downloadGoModule } from './go-modules.js';
import { CRD_MODULES, STRIMZI } from './pins.js';
import { generateStrimziCrds } from './strimzi-crds.js';

/** Kinds the project's manifests use; their absence means a source changed shape, not a bad manifest. */
export const EXPECTED_CRD_SCHEMAS = [
  'kafka.strimzi.io/kafka_v1beta2.json',
  'kafka.strimzi.io/kafkanodepool_v1beta2.json',
  'kafka.strimzi.io/kafkatopic_v1beta2.json',
  'kafka.strimzi.io/kafkauser_v1beta2.json',
  'elasticsearch.k8s.elastic.co/elasticsearch_v1.json',
  'keda.sh/scaledobject_v1alpha1.json',
  'keda.sh/triggerauthentication_v1alpha1.json',
  'monitoring.coreos.com/servicemonitor_v1.json',
  'monitoring.coreos.com/prometheusrule_v1.json',
];

const DEFINITIONS = '_definitions.json';
/** From `<dir>/<group>/<file>.json` to the copy of Kubernetes' definitions at `<dir>/_definitions.json`. */
const OBJECT_META_REF = `../${DEFINITIONS}#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`;

async function yamlFilesAt(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path];
  const names = (await readdir(path)).filter((name) => /\.ya?ml$/.test(name)).sort();
  return names.map((name) => join(path, name));
}

/**
 * Lays out JSON schemas of the operators' custom resources in `finalDir` (once): ECK, KEDA and
 * prometheus-operator from their Go modules, Strimzi generated from its api jar.
 */
export async function ensureCrdSchemas(
  finalDir: string,
  kubernetesSchemaDir: string,
  log: (line: string) => void,
): Promise<void> {
  await publishAtomically(finalDir, async (scratch) => {
    const sources: { label: string; file: string }[] = [];
    for (const pin of CRD_MODULES) {
      log(`downloading the ${pin.operator} CRDs (Go module ${pin.module}@${pin.version}) (once)…`);
      const moduleDir = await downloadGoModule(pin, scratch);
      for (const path of pin.crdPaths) {
        for (const file of await yamlFilesAt(join(moduleDir, path))) {
          sources.push({ label: `${pin.module}@${pin.version}/${file.slice(moduleDir.length + 1)}`, file });
        }
      }
    }
    for (const file of await generateStrimziCrds(join(scratch, 'strimzi'), log)) {
      sources.push({ label: `strimzi ${STRIMZI.apiVersion} (generated)/${file.split('/').pop()!}`, file });
    }

    const out = join(scratch, 'schemas');
    await mkdir(out);
    await copyFile(join(kubernetesSchemaDir, DEFINITIONS), join(out, DEFINITIONS));
    const origin = new Map<string, string>();
    for (const source of sources) {
      const text = await readFile(source.file, 'utf8');
      for (const file of crdSchemaFiles(text, source.label, { objectMetaRef: OBJECT_META_REF })) {
        const earlier = origin.get(file.relativePath);
        if (earlier) throw new Error(`${file.relativePath} comes from both ${earlier} and ${source.label}`);
        origin.set(file.relativePath, source.label);
        await mkdir(dirname(join(out, file.relativePath)), { recursive: true });
        await writeFile(join(out, file.relativePath), JSON.stringify(file.schema));
      }
    }
    const missing = EXPECTED_CRD_SCHEMAS.filter((path) => !origin.has(path));
    if (missing.length > 0) throw new InfraError('download_failed', `no CRD provides ${missing.join(', ')}`);
    // Which file came from where, for whoever wonders why a kind validates the way it does.
    await writeFile(join(out, 'sources.json'), `${JSON.stringify(Object.fromEntries(origin), null, 2)}\n`);
    log(`wrote ${origin.size} custom resource schemas`);
    return out;
  });
}

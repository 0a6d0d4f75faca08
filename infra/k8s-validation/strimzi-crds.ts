import { mkdir, stat } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { InfraError } from '../errors.js';
import { findJava } from '../java.js';
import { downloadFromMavenCentral } from '../maven-central-download.js';
import { requirePinnedSha256 } from './pinned-hash.js';
import { STRIMZI } from './pins.js';
import { outputTail, runCommand } from './run-command.js';

async function downloadGeneratorClasspath(directory: string): Promise<string[]> {
  const jars: string[] = [];
  for (const { coordinates, sha256 } of STRIMZI.jars) {
    const jar = await downloadFromMavenCentral(coordinates, directory, coordinates);
    await requirePinnedSha256(jar, sha256, 'Maven Central');
    jars.push(jar);
  }
  return jars;
}

/**
 * Generates Strimzi's CustomResourceDefinitions into `directory` the way Strimzi's own build does
 * (its crd-generator, with the arguments of its api/pom.xml), from pinned jars off Maven Central.
 * Returns the YAML files.
 */
export async function generateStrimziCrds(directory: string, log: (line: string) => void): Promise<string[]> {
  log(`generating the Strimzi ${STRIMZI.apiVersion} CRDs from its api jar (Maven Central, ~12 MB) (once)…`);
  const jars = await downloadGeneratorClasspath(join(directory, 'jars'));
  const java = await findJava();
  const out = join(directory, 'crds');
  await mkdir(out, { recursive: true });
  const files: string[] = [];
  for (const run of STRIMZI.runs) {
    const targets = run.classes.map((name) => {
      const file = join(out, `${name.split('.').pop()!.toLowerCase()}.yaml`);
      files.push(file);
      return `io.strimzi.api.kafka.model.${name}=${file}`;
    });
    const args = ['-cp', jars.join(delimiter), STRIMZI.generatorMainClass];
    args.push('--label', 'app:strimzi', '--label', 'strimzi.io/crd-install:true', '--target-kube', '1.16+');
    args.push('--crd-api-version', 'v1', '--api-versions', run.apiVersions, '--storage-version', 'v1beta2');
    args.push('--yaml', ...targets);
    const result = await runCommand(java.javaBin, args, { cwd: directory, timeoutMs: 5 * 60_000 });
    const written = await Promise.all(
      targets.map((t) =>
        stat(t.slice(t.indexOf('=') + 1)).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (result.code !== 0 || written.includes(false)) {
      throw new InfraError(
        'download_failed',
        `Strimzi's CRD generator failed (exit ${result.code}):\n    ${outputTail(result)}`,
        'The pinned jars are verified, so this is the generator itself; check the Java version (17+).',
      );
    }
  }
  return files;
}

import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyJarsAgainstPins } from '../checksums.js';
import { copyRuntimeDependencies } from '../maven.js';
import { KAFKA_SCALA_VERSION, KAFKA_VERSION, SLF4J_RELOAD4J_VERSION } from '../versions.js';
import { renderKafkaRuntimePom } from './kafka-config.js';
import { KAFKA_JAR_SHA256 } from './kafka-jars.lock.js';

export const KAFKA_DIST_NAME = `kafka_${KAFKA_SCALA_VERSION}-${KAFKA_VERSION}`;
const VERIFIED_MARKER = '.verified';

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Resolves the broker's runtime jars with Maven into `libsDir` (no verification). */
export async function resolveKafkaJars(workDir: string, libsDir: string): Promise<void> {
  await mkdir(workDir, { recursive: true });
  await writeFile(
    join(workDir, 'pom.xml'),
    renderKafkaRuntimePom(KAFKA_VERSION, KAFKA_SCALA_VERSION, SLF4J_RELOAD4J_VERSION),
  );
  await copyRuntimeDependencies(workDir, libsDir, `Apache Kafka ${KAFKA_VERSION}`);
}

/**
 * Returns the directory of Kafka's jars, downloading and verifying them on first use. The cache is
 * filled in a scratch directory and renamed into place only after every pinned hash matched, so an
 * interrupted or corrupt download never looks complete and the next run needs no network.
 */
export async function ensureKafkaJars(cacheDir: string, log: (line: string) => void): Promise<string> {
  const home = join(cacheDir, KAFKA_DIST_NAME);
  const libs = join(home, 'libs');
  if (await exists(join(home, VERIFIED_MARKER))) return libs;

  log(`downloading Apache Kafka ${KAFKA_VERSION} jars from Maven Central into ${home} (once)…`);
  const scratch = join(cacheDir, `${KAFKA_DIST_NAME}.partial-${process.pid}`);
  await rm(scratch, { recursive: true, force: true });
  try {
    await resolveKafkaJars(join(scratch, 'maven'), join(scratch, 'libs'));
    await verifyJarsAgainstPins(join(scratch, 'libs'), KAFKA_JAR_SHA256);
    await rm(join(scratch, 'maven'), { recursive: true, force: true });
    const count = (await readdir(join(scratch, 'libs'))).length;
    await writeFile(join(scratch, VERIFIED_MARKER), `${count} jars verified ${new Date().toISOString()}\n`);
    await rm(home, { recursive: true, force: true });
    await rename(scratch, home);
    log(`verified ${count} jars against infra/kafka/kafka-jars.lock.ts`);
    return libs;
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  }
}

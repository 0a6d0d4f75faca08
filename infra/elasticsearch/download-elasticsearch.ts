import extractZip from 'extract-zip';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyFileHash } from '../checksums.js';
import { copyArtifact } from '../maven.js';
import { ELASTICSEARCH_VERSION, ELASTICSEARCH_ZIP_SHA512 } from '../versions.js';

export const ELASTICSEARCH_COORDINATES = `org.elasticsearch.distribution.integ-test-zip:elasticsearch:${ELASTICSEARCH_VERSION}:zip`;
const DIST_NAME = `elasticsearch-${ELASTICSEARCH_VERSION}`;
const VERIFIED_MARKER = '.verified';

/**
 * Returns the unpacked Elasticsearch home, downloading the pinned zip from Maven Central, checking
 * its SHA-512 and unpacking it on first use. Like the Kafka jars, the result appears under its final
 * name only once complete, so the next start needs no network.
 */
export async function ensureElasticsearchDistribution(cacheDir: string, log: (line: string) => void): Promise<string> {
  const home = join(cacheDir, DIST_NAME);
  const done = await stat(join(home, VERIFIED_MARKER)).then(
    () => true,
    () => false,
  );
  if (done) return home;

  log(
    `downloading Elasticsearch ${ELASTICSEARCH_VERSION} (integ-test-zip, ~95 MB) from Maven Central into ${home} (once)…`,
  );
  const scratch = join(cacheDir, `${DIST_NAME}.partial-${process.pid}`);
  await rm(scratch, { recursive: true, force: true });
  await mkdir(scratch, { recursive: true });
  try {
    await copyArtifact(ELASTICSEARCH_COORDINATES, scratch, `Elasticsearch ${ELASTICSEARCH_VERSION}`);
    const zip = join(scratch, `${DIST_NAME}.zip`);
    await verifyFileHash(zip, 'sha512', ELASTICSEARCH_ZIP_SHA512);
    await extractZip(zip, { dir: scratch });
    await rm(zip);
    const unpacked = join(scratch, DIST_NAME);
    await writeFile(join(unpacked, VERIFIED_MARKER), `sha512 ${ELASTICSEARCH_ZIP_SHA512}\n`);
    await rm(home, { recursive: true, force: true });
    await rename(unpacked, home);
    log('verified the SHA-512 of the Elasticsearch zip');
    return home;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

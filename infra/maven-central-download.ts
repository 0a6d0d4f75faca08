import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InfraError } from './errors.js';

/** Maven Central, or a mirror of it (`NEON_MAVEN_REPOSITORY`). */
export const DEFAULT_MAVEN_REPOSITORY = 'https://repo1.maven.org/maven2';

/** `group:artifact:version[:type[:classifier]]` → the path of the file in a Maven repository. */
export function artifactPath(coordinates: string): { path: string; fileName: string } {
  const parts = coordinates.split(':');
  if (parts.length < 3 || parts.length > 5 || parts.some((p) => p === '')) {
    throw new Error(`not Maven coordinates (group:artifact:version[:type[:classifier]]): ${coordinates}`);
  }
  const [group, artifact, version, type = 'jar', classifier] = parts as [string, string, string, string?, string?];
  const fileName = `${artifact}-${version}${classifier ? `-${classifier}` : ''}.${type}`;
  return { path: `${group.replace(/\./g, '/')}/${artifact}/${version}/${fileName}`, fileName };
}

export interface MavenDownloadOptions {
  repository?: string;
  /** Bytes received so far, and the total when the server says it. */
  onProgress?: (received: number, total: number | undefined) => void;
  timeoutMs?: number;
}

/**
 * Downloads one artefact straight from Maven Central over HTTPS, for machines without Maven (and
 * without Java: the embedded mode needs neither). The repository's published SHA-1 is checked here;
 * callers check their own pinned SHA-256 on top, so a mirror cannot substitute a file.
 */
export async function downloadFromMavenCentral(
  coordinates: string,
  outputDirectory: string,
  what: string,
  options: MavenDownloadOptions = {},
): Promise<string> {
  const repository = (options.repository ?? process.env.NEON_MAVEN_REPOSITORY ?? DEFAULT_MAVEN_REPOSITORY).replace(
    /\/$/,
    '',
  );
  const { path, fileName } = artifactPath(coordinates);
  const url = `${repository}/${path}`;
  const target = join(outputDirectory, fileName);
  const signal = AbortSignal.timeout(options.timeoutMs ?? 30 * 60_000);
  const failed = (detail: string, cause?: unknown): InfraError =>
    new InfraError(
      'download_failed',
      `downloading ${what} from ${url} failed: ${detail}`,
      'Check that Maven Central (or NEON_MAVEN_REPOSITORY) is reachable, then run the command again.',
      cause === undefined ? undefined : { cause },
    );
  await mkdir(outputDirectory, { recursive: true });
  try {
    const expectedSha1 = await fetch(`${url}.sha1`, { signal })
      .then(async (response) =>
        response.ok ? (await response.text()).trim().split(/\s+/)[0]?.toLowerCase() : undefined,
      )
      .catch(() => undefined);
    const response = await fetch(url, { signal });
    if (!response.ok || response.body === null) throw failed(`HTTP ${response.status}`);
    const total = Number(response.headers.get('content-length')) || undefined;
    const hash = createHash('sha1');
    let received = 0;
    const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
    body.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      received += chunk.length;
      options.onProgress?.(received, total);
    });
    await pipeline(body, createWriteStream(target));
    if (total !== undefined && received !== total) throw failed(`got ${received} of ${total} bytes`);
    const sha1 = hash.digest('hex');
    if (expectedSha1 !== undefined && /^[0-9a-f]{40}$/.test(expectedSha1) && sha1 !== expectedSha1) {
      throw failed(`SHA-1 ${sha1} does not match the repository's ${expectedSha1}`);
    }
    return target;
  } catch (error) {
    await rm(target, { force: true });
    if (error instanceof InfraError) throw error;
    throw failed(error instanceof Error ? error.message : String(error), error);
  }
}

import { spawn } from 'node:child_process';
import { InfraError } from './errors.js';
import { MAVEN_DEPENDENCY_PLUGIN } from './versions.js';

/**
 * Artefacts come from Maven Central through the user's own `mvn`, so corporate mirrors and proxies
 * in ~/.m2/settings.xml apply. `-C` makes Maven fail on a repository checksum mismatch; the
 * launchers then verify the pinned hashes on top.
 */
let mavenQueue: Promise<unknown> = Promise.resolve();

/** One Maven at a time per process: its local repository is not safe for concurrent writers. */
function runMaven(args: string[], what: string, cwd?: string): Promise<void> {
  const next = mavenQueue.then(() => runMavenNow(args, what, cwd));
  mavenQueue = next.catch(() => undefined);
  return next;
}

async function runMavenNow(args: string[], what: string, cwd?: string): Promise<void> {
  const mvn = process.env.NEON_MVN ?? 'mvn';
  const fullArgs = ['-B', '-q', '-C', '-ntp', ...args];
  const output: string[] = [];
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(mvn, fullArgs, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer): void => {
      output.push(chunk.toString('utf8'));
      if (output.length > 400) output.splice(0, output.length - 400);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (exit) => resolve(exit ?? 1));
  }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new InfraError(
        'maven_missing',
        `Maven (\`${mvn}\`) is needed once to download ${what} from Maven Central, and it was not found`,
        'Install Maven (Debian: apt-get install maven), or point KAFKA_BROKERS / ES_URL at running servers.',
        { cause: error },
      );
    }
    throw error;
  });
  if (code !== 0) {
    const tail = output
      .join('')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(-12)
      .join('\n    ');
    throw new InfraError(
      'download_failed',
      `downloading ${what} with Maven failed (exit ${code}):\n    ${tail}`,
      'Check that Maven Central (or your mirror in ~/.m2/settings.xml) is reachable, then run the command again.',
    );
  }
}

/** Copies one artefact (e.g. `group:artifact:version:zip`) into `outputDirectory`. */
export async function copyArtifact(coordinates: string, outputDirectory: string, what: string): Promise<void> {
  await runMaven(
    [`${MAVEN_DEPENDENCY_PLUGIN}:copy`, `-Dartifact=${coordinates}`, `-DoutputDirectory=${outputDirectory}`],
    what,
  );
}

/** Resolves the runtime dependency closure of the POM in `projectDirectory` into `outputDirectory`. */
export async function copyRuntimeDependencies(
  projectDirectory: string,
  outputDirectory: string,
  what: string,
): Promise<void> {
  await runMaven(
    [`${MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies`, '-DincludeScope=runtime', `-DoutputDirectory=${outputDirectory}`],
    what,
    projectDirectory,
  );
}

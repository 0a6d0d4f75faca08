import { execFile } from 'node:child_process';
import { readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { InfraError } from './errors.js';

const run = promisify(execFile);

export interface JavaRuntime {
  javaBin: string;
  javaHome: string;
  majorVersion: number;
}

export const MINIMUM_JAVA_MAJOR = 17;

/** Parses `java -XshowSettings:properties -version` output (it goes to stderr). */
export function parseJavaSettings(output: string): { javaHome: string; majorVersion: number } | undefined {
  const home = /^\s*java\.home = (.+)$/m.exec(output)?.[1]?.trim();
  const spec = /^\s*java\.specification\.version = (.+)$/m.exec(output)?.[1]?.trim();
  if (!home || !spec) return undefined;
  // Java 8 and older report "1.8"; everything since reports the major number itself.
  const major = spec.startsWith('1.') ? Number(spec.slice(2)) : Number(spec);
  return Number.isFinite(major) ? { javaHome: home, majorVersion: major } : undefined;
}

/** Finds Java from JAVA_HOME, else from PATH, and insists on 17 or newer. */
export async function findJava(env: NodeJS.ProcessEnv = process.env): Promise<JavaRuntime> {
  const javaBin = env.JAVA_HOME ? join(env.JAVA_HOME, 'bin', 'java') : 'java';
  let output: string;
  try {
    const result = await run(javaBin, ['-XshowSettings:properties', '-version'], { timeout: 30_000 });
    output = `${result.stdout}\n${result.stderr}`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InfraError(
      'java_missing',
      code === 'ENOENT'
        ? `Java was not found (${env.JAVA_HOME ? `JAVA_HOME=${env.JAVA_HOME}` : 'no `java` on PATH'})`
        : `Java could not be run: ${(error as Error).message.split('\n')[0]}`,
      'Install a Java 17+ runtime (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME.',
      { cause: error },
    );
  }
  const settings = parseJavaSettings(output);
  if (!settings) {
    throw new InfraError(
      'java_missing',
      `could not read the Java version from ${javaBin}`,
      'Set JAVA_HOME to a Java 17+ installation.',
    );
  }
  if (settings.majorVersion < MINIMUM_JAVA_MAJOR) {
    throw new InfraError(
      'java_too_old',
      `Java ${settings.majorVersion} found at ${settings.javaHome}; Kafka 3.9 and Elasticsearch 8 need ${MINIMUM_JAVA_MAJOR}+`,
      'Install OpenJDK 17 and point JAVA_HOME at it.',
    );
  }
  return { javaBin: join(settings.javaHome, 'bin', 'java'), ...settings };
}

/**
 * The Java versions Elasticsearch is started on when one is installed: from 21 its own native vector
 * code and Lucene's Panama vector code score the int8 HNSW graphs with SIMD (on 17 both run scalar);
 * 25 is the newest Elasticsearch 8.19 has been run on here.
 */
export const VECTOR_JAVA_MAJORS = { from: 21, to: 25 } as const;

/** Where Debian, Ubuntu and the Temurin packages install JDKs side by side. */
export const JVM_DIRECTORIES: readonly string[] = ['/usr/lib/jvm'];

function givesVectorCode(java: JavaRuntime): boolean {
  return java.majorVersion >= VECTOR_JAVA_MAJORS.from && java.majorVersion <= VECTOR_JAVA_MAJORS.to;
}

/** The JDKs installed under `directories`, each once (Debian links one JDK under several names). */
async function installedJavas(directories: readonly string[]): Promise<JavaRuntime[]> {
  const homes = new Set<string>();
  for (const directory of directories) {
    const entries = await readdir(directory).catch(() => [] as string[]);
    for (const entry of entries) {
      const home = await realpath(join(directory, entry)).catch(() => undefined);
      if (home !== undefined) homes.add(home);
    }
  }
  const found = await Promise.all([...homes].map((home) => findJava({ JAVA_HOME: home }).catch(() => undefined)));
  const byHome = new Map<string, JavaRuntime>();
  for (const java of found) if (java) byHome.set(java.javaHome, java);
  return [...byHome.values()];
}

/**
 * The Java to start Elasticsearch on. `ES_JAVA_HOME`, Elasticsearch's own setting, wins. Otherwise
 * the Java of `findJava` (JAVA_HOME, else PATH) when it is one of `VECTOR_JAVA_MAJORS`, else the newest
 * such JDK installed beside it, else the Java of `findJava` after all: a node on Java 17 works, its
 * kNN searches are just slower (at 1M chunks the raw kNN took 85.8 ms at p95 on 17; bench/README.md).
 * Kafka keeps the Java of `findJava`.
 */
export async function findElasticsearchJava(
  env: NodeJS.ProcessEnv = process.env,
  options: {
    /** Where to look for other JDKs. */
    directories?: readonly string[];
    /** `findJava(env)`'s answer when the caller has it already (Kafka's Java): not asked again. */
    usual?: JavaRuntime;
  } = {},
): Promise<JavaRuntime> {
  if (env.ES_JAVA_HOME) return findJava({ ...env, JAVA_HOME: env.ES_JAVA_HOME });
  const usual = options.usual ?? (await findJava(env));
  if (givesVectorCode(usual)) return usual;
  const newest = (await installedJavas(options.directories ?? JVM_DIRECTORIES))
    .filter(givesVectorCode)
    .sort((a, b) => b.majorVersion - a.majorVersion || a.javaHome.localeCompare(b.javaHome))[0];
  return newest ?? usual;
}

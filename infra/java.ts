import { execFile } from 'node:child_process';
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

import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InfraError } from '../../infra/errors.js';
import { describeElasticsearchJava } from '../../infra/local-infrastructure.js';
import {
  findElasticsearchJava,
  findJava,
  MINIMUM_JAVA_MAJOR,
  parseJavaSettings,
  VECTOR_JAVA_MAJORS,
} from '../../infra/java.js';

const JAVA_17_OUTPUT = `Property settings:
    file.encoding = UTF-8
    file.separator = /
    java.class.path = 
    java.class.version = 61.0
    java.home = /usr/lib/jvm/java-17-openjdk-amd64
    java.io.tmpdir = /tmp
    java.library.path = /usr/java/packages/lib
        /usr/lib/x86_64-linux-gnu/jni
        /lib/x86_64-linux-gnu
    java.runtime.name = OpenJDK Runtime Environment
    java.runtime.version = 17.0.15+6-Debian-1deb12u1
    java.specification.maintenance.version = 1
    java.specification.name = Java Platform API Specification
    java.specification.vendor = Oracle Corporation
    java.specification.version = 17
    java.vendor = Debian
    java.version = 17.0.15
    java.vm.name = OpenJDK 64-Bit Server VM
    java.vm.specification.version = 17
    line.separator = \\n 
    os.name = Linux
    user.home = /root

openjdk version "17.0.15" 2025-04-15
OpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)
OpenJDK 64-Bit Server VM (build 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)
`;

const JAVA_8_OUTPUT = `Property settings:
    awt.toolkit = sun.awt.X11.XToolkit
    file.encoding = UTF-8
    java.class.version = 52.0
    java.home = /usr/lib/jvm/java-8-openjdk-amd64/jre
    java.runtime.version = 1.8.0_392-8u392-ga-1~20.04-b08
    java.specification.name = Java Platform API Specification
    java.specification.vendor = Oracle Corporation
    java.specification.version = 1.8
    java.version = 1.8.0_392
    java.vm.specification.version = 1.8
    sun.java.launcher = SUN_STANDARD

openjdk version "1.8.0_392"
OpenJDK Runtime Environment (build 1.8.0_392-8u392-ga-1~20.04-b08)
OpenJDK 64-Bit Server VM (build 25.392-b08, mixed mode)
`;

describe('parseJavaSettings', () => {
  it('reads Java 17', () => {
    expect(parseJavaSettings(JAVA_17_OUTPUT)).toEqual({
      javaHome: '/usr/lib/jvm/java-17-openjdk-amd64',
      majorVersion: 17,
    });
  });

  it('reads Java 8 from its "1.8" specification version', () => {
    expect(parseJavaSettings(JAVA_8_OUTPUT)).toEqual({
      javaHome: '/usr/lib/jvm/java-8-openjdk-amd64/jre',
      majorVersion: 8,
    });
  });

  it('tolerates CRLF line endings', () => {
    expect(parseJavaSettings(JAVA_17_OUTPUT.replaceAll('\n', '\r\n'))).toEqual({
      javaHome: '/usr/lib/jvm/java-17-openjdk-amd64',
      majorVersion: 17,
    });
  });

  it('does not take java.vm.specification.version for java.specification.version', () => {
    const output = '    java.vm.specification.version = 21\n    java.home = /opt/jdk\n';
    expect(parseJavaSettings(output)).toBeUndefined();
  });

  it.each([
    ['garbage', 'this is not java output at all'],
    ['empty output', ''],
    ['a version without a home', 'java.specification.version = 17\n'],
    ['a home without a version', 'java.home = /opt/jdk\n'],
    ['a non-numeric version', '    java.home = /opt/jdk\n    java.specification.version = seventeen\n'],
  ])('returns undefined for %s', (_label, output) => {
    expect(parseJavaSettings(output)).toBeUndefined();
  });
});

/** Directories the tests make, removed after each test. */
const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Makes `home` a JAVA_HOME whose bin/java prints `output` to stderr, as a real JVM does. */
async function writeFakeJava(home: string, output: string): Promise<string> {
  await mkdir(join(home, 'bin'), { recursive: true });
  await writeFile(join(home, 'output.txt'), output);
  const script = join(home, 'bin', 'java');
  await writeFile(script, `#!/bin/sh\ncat "${join(home, 'output.txt')}" >&2\n`);
  await chmod(script, 0o755);
  return home;
}

describe('findJava', () => {
  const fakeJavaHome = async (output: string): Promise<string> => writeFakeJava(await tempDir('neon-java-'), output);

  async function rejectionOf(promise: Promise<unknown>): Promise<InfraError> {
    const error: unknown = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InfraError);
    return error as InfraError;
  }

  it('rejects with java_missing when JAVA_HOME does not exist', async () => {
    const error = await rejectionOf(findJava({ JAVA_HOME: '/nonexistent' }));
    expect(error.code).toBe('java_missing');
    expect(error.message).toBe('Java was not found (JAVA_HOME=/nonexistent)');
    expect(error.hint).toContain('JAVA_HOME');
  });

  it('rejects with java_too_old for a Java 8 JAVA_HOME', async () => {
    const home = await fakeJavaHome(JAVA_8_OUTPUT);
    const error = await rejectionOf(findJava({ JAVA_HOME: home }));
    expect(error.code).toBe('java_too_old');
    expect(error.message).toContain('Java 8 found at /usr/lib/jvm/java-8-openjdk-amd64/jre');
    expect(error.message).toContain(`${MINIMUM_JAVA_MAJOR}+`);
  });

  it('rejects with java_missing when the version cannot be read', async () => {
    const home = await fakeJavaHome('nothing useful here\n');
    const error = await rejectionOf(findJava({ JAVA_HOME: home }));
    expect(error.code).toBe('java_missing');
    expect(error.message).toBe(`could not read the Java version from ${join(home, 'bin', 'java')}`);
  });

  it('accepts a Java 17 JAVA_HOME and points javaBin at the reported home', async () => {
    const home = await fakeJavaHome(JAVA_17_OUTPUT);
    await expect(findJava({ JAVA_HOME: home })).resolves.toEqual({
      javaBin: '/usr/lib/jvm/java-17-openjdk-amd64/bin/java',
      javaHome: '/usr/lib/jvm/java-17-openjdk-amd64',
      majorVersion: 17,
    });
  });

  it('finds the Java 17+ installed on this machine', async () => {
    const java = await findJava({ ...process.env });
    expect(java.majorVersion).toBeGreaterThanOrEqual(17);
    expect(java.javaBin).toBe(join(java.javaHome, 'bin', 'java'));
  });
});

describe('findElasticsearchJava', () => {
  /** A JDK at `home` whose bin/java reports itself as Java `major` living at `home`. */
  const fakeJdk = (home: string, major: number): Promise<string> =>
    writeFakeJava(home, `Property settings:\n    java.home = ${home}\n    java.specification.version = ${major}\n`);

  it('starts Elasticsearch on the newest installed JDK that gives it SIMD vector code, not the 17 of JAVA_HOME', async () => {
    const jvms = await tempDir('neon-jvms-');
    const java17 = await fakeJdk(join(jvms, 'java-17'), 17);
    await fakeJdk(join(jvms, 'jdk-21'), 21);
    const jdk25 = await fakeJdk(join(jvms, 'temurin-25'), 25);
    await fakeJdk(join(jvms, 'jdk-26'), 26); // newer than Elasticsearch 8.19 has been run on here
    await mkdir(join(jvms, 'not-a-jdk'));
    const java = await findElasticsearchJava(
      { JAVA_HOME: java17, PATH: '/usr/bin:/bin' },
      { directories: [jvms, '/nonexistent'] },
    );
    expect(java).toEqual({ javaBin: join(jdk25, 'bin', 'java'), javaHome: jdk25, majorVersion: 25 });
  });

  it('keeps the JAVA_HOME JDK when it already gives the vector code', async () => {
    const jvms = await tempDir('neon-jvms-');
    const jdk21 = await fakeJdk(join(jvms, 'jdk-21'), 21);
    await fakeJdk(join(jvms, 'temurin-25'), 25);
    const java = await findElasticsearchJava({ JAVA_HOME: jdk21 }, { directories: [jvms] });
    expect(java.javaHome).toBe(jdk21);
  });

  it("lets ES_JAVA_HOME, Elasticsearch's own setting, choose even a Java 17", async () => {
    const jvms = await tempDir('neon-jvms-');
    const java17 = await fakeJdk(join(jvms, 'java-17'), 17);
    await fakeJdk(join(jvms, 'temurin-25'), 25);
    const java = await findElasticsearchJava(
      { JAVA_HOME: join(jvms, 'temurin-25'), ES_JAVA_HOME: java17 },
      { directories: [jvms] },
    );
    expect(java.majorVersion).toBe(17);
    expect(java.javaHome).toBe(java17);
  });

  it('falls back to the JAVA_HOME JDK when no JDK in range is installed', async () => {
    const jvms = await tempDir('neon-jvms-');
    const java17 = await fakeJdk(join(jvms, 'java-17'), 17);
    await fakeJdk(join(jvms, 'jdk-26'), 26);
    const java = await findElasticsearchJava({ JAVA_HOME: java17 }, { directories: [jvms] });
    expect(java.javaHome).toBe(java17);
    expect(VECTOR_JAVA_MAJORS.from).toBeGreaterThan(17);
  });
});

describe('describeElasticsearchJava', () => {
  it('says whether the node gets SIMD vector scoring, and how to get it when not', () => {
    expect(describeElasticsearchJava({ javaBin: '/j/25/bin/java', javaHome: '/j/25', majorVersion: 25 })).toBe(
      'Java 25 at /j/25 (SIMD vector scoring)',
    );
    const on17 = describeElasticsearchJava({ javaBin: '/j/17/bin/java', javaHome: '/j/17', majorVersion: 17 });
    expect(on17).toContain('scalar vector scoring');
    expect(on17).toContain('ES_JAVA_HOME');
  });
});

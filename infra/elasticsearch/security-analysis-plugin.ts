import { spawn } from 'node:child_process';
import { mkdir, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InfraError } from '../errors.js';
import type { JavaRuntime } from '../java.js';
import { ELASTICSEARCH_VERSION } from '../versions.js';

/**
 * Security on the integ-test distribution needs three analysis components it does not have.
 *
 * The security system indices (`.security-7`, where API keys, native users and roles live) declare an
 * `email` analyzer made of the `uax_url_email` tokenizer and the `pattern_capture` and `unique` token
 * filters, which belong to the analysis-common module — left out of the integ-test zip and not
 * published on its own. Without them the first API key fails with "Unknown filter type
 * [pattern_capture]". This module makes them available to security-enabled test nodes only:
 *
 * - a stable-API analysis plugin (`neon-security-analysis`) whose three named components wrap the
 *   Lucene classes the distribution already ships, compiled once with the JDK's `javac` against the
 *   distribution's own jars;
 * - an Elasticsearch home beside the cached distribution, `elasticsearch-<version>-secured`, whose
 *   `bin`, `lib` and `modules` link to the distribution and whose `plugins` holds that plugin.
 *
 * The node of `neon infra up` keeps running from the untouched distribution, without the plugin.
 * This `unique` drops a token equal to another at the same position (Lucene's
 * RemoveDuplicatesTokenFilter) where analysis-common's drops repeats anywhere in the field: it only
 * changes how user-profile searches score, which nothing here uses.
 */
const PLUGIN_NAME = 'neon-security-analysis';
const PACKAGE = 'neon.esanalysis';
const READY_MARKER = '.ready';

const JAVA_SOURCES: Record<string, string> = {
  'PatternCaptureTokenFilterFactory.java': `package ${PACKAGE};

import java.util.List;
import java.util.regex.Pattern;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.pattern.PatternCaptureGroupTokenFilter;
import org.elasticsearch.plugin.Inject;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.TokenFilterFactory;
import org.elasticsearch.plugin.settings.AnalysisSettings;
import org.elasticsearch.plugin.settings.BooleanSetting;
import org.elasticsearch.plugin.settings.ListSetting;

/** "pattern_capture": every capture group of every pattern becomes a token. */
@NamedComponent("pattern_capture")
public class PatternCaptureTokenFilterFactory implements TokenFilterFactory {
    @AnalysisSettings
    public interface Settings {
        @ListSetting(path = "patterns")
        List<String> patterns();

        @BooleanSetting(path = "preserve_original", defaultValue = true)
        boolean preserveOriginal();
    }

    private final Pattern[] patterns;
    private final boolean preserveOriginal;

    @Inject
    public PatternCaptureTokenFilterFactory(Settings settings) {
        this.patterns = settings.patterns().stream().map(Pattern::compile).toArray(Pattern[]::new);
        this.preserveOriginal = settings.preserveOriginal();
    }

    @Override
    public TokenStream create(TokenStream input) {
        return new PatternCaptureGroupTokenFilter(input, preserveOriginal, patterns);
    }
}
`,
  'UniqueTokenFilterFactory.java': `package ${PACKAGE};

import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.miscellaneous.RemoveDuplicatesTokenFilter;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.TokenFilterFactory;

/** "unique": drops a token equal to one already at its position. */
@NamedComponent("unique")
public class UniqueTokenFilterFactory implements TokenFilterFactory {
    @Override
    public TokenStream create(TokenStream input) {
        return new RemoveDuplicatesTokenFilter(input);
    }
}
`,
  'UaxUrlEmailTokenizerFactory.java': `package ${PACKAGE};

import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.email.UAX29URLEmailTokenizer;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.TokenizerFactory;

/** "uax_url_email": the standard tokenizer that keeps URLs and e-mail addresses whole. */
@NamedComponent("uax_url_email")
public class UaxUrlEmailTokenizerFactory implements TokenizerFactory {
    @Override
    public Tokenizer create() {
        return new UAX29URLEmailTokenizer();
    }
}
`,
};

/** Which class provides each named component, by the extensible interface it implements. */
const NAMED_COMPONENTS = {
  'org.elasticsearch.plugin.analysis.TokenFilterFactory': {
    pattern_capture: `${PACKAGE}.PatternCaptureTokenFilterFactory`,
    unique: `${PACKAGE}.UniqueTokenFilterFactory`,
  },
  'org.elasticsearch.plugin.analysis.TokenizerFactory': {
    uax_url_email: `${PACKAGE}.UaxUrlEmailTokenizerFactory`,
  },
};

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function runJdkTool(tool: string, args: string[], cwd: string): Promise<void> {
  let output = '';
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(tool, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (exit) => resolve(exit ?? 1));
  });
  if (code !== 0) {
    throw new InfraError(
      'start_failed',
      `${tool} failed (exit ${code}) building the ${PLUGIN_NAME} plugin:\n${output}`,
    );
  }
}

/**
 * The home secured nodes run from (see above), built on first use next to `distribution` and reused
 * afterwards. Needs a JDK (javac and jar), not only a JRE.
 */
export async function ensureSecuredDistribution(
  distribution: string,
  java: JavaRuntime,
  log: (line: string) => void,
): Promise<string> {
  const home = `${distribution}-secured`;
  if (await exists(join(home, READY_MARKER))) return home;

  const javac = join(java.javaHome, 'bin', 'javac');
  const jar = join(java.javaHome, 'bin', 'jar');
  if (!(await exists(javac)) || !(await exists(jar))) {
    throw new InfraError(
      'java_missing',
      `a security-enabled Elasticsearch needs a small analysis plugin compiled with a JDK, and ${java.javaHome} has no javac`,
      'Install a JDK 17+ (Debian: apt-get install openjdk-17-jdk-headless), or point JAVA_HOME at one.',
    );
  }
  log(`building the ${PLUGIN_NAME} plugin for security-enabled Elasticsearch into ${home} (once)…`);
  const scratch = `${home}.partial-${process.pid}`;
  await rm(scratch, { recursive: true, force: true });
  try {
    const sources = join(scratch, 'build', 'src');
    const classes = join(scratch, 'build', 'classes');
    const plugin = join(scratch, 'plugins', PLUGIN_NAME);
    for (const dir of [sources, classes, plugin]) await mkdir(dir, { recursive: true });
    for (const [file, text] of Object.entries(JAVA_SOURCES)) await writeFile(join(sources, file), text);
    await runJdkTool(
      javac,
      [
        '--release',
        '17',
        '-nowarn',
        '-cp',
        join(distribution, 'lib', '*'),
        '-d',
        classes,
        ...Object.keys(JAVA_SOURCES).map((file) => join(sources, file)),
      ],
      scratch,
    );
    await runJdkTool(jar, ['--create', '--file', join(plugin, `${PLUGIN_NAME}.jar`), '-C', classes, '.'], scratch);
    await writeFile(
      join(plugin, 'stable-plugin-descriptor.properties'),
      [
        `name=${PLUGIN_NAME}`,
        'description=uax_url_email, pattern_capture and unique, which the security system indices need',
        'version=1.0.0',
        `elasticsearch.version=${ELASTICSEARCH_VERSION}`,
        'java.version=17',
        '',
      ].join('\n'),
    );
    await writeFile(join(plugin, 'named_components.json'), `${JSON.stringify(NAMED_COMPONENTS, null, 2)}\n`);
    await rm(join(scratch, 'build'), { recursive: true });
    // The scripts find their home from their own path without resolving directory links, so the
    // node's home is this directory and its plugins are the ones above.
    for (const dir of ['bin', 'lib', 'modules']) await symlink(join(distribution, dir), join(scratch, dir));
    await writeFile(join(scratch, READY_MARKER), `${PLUGIN_NAME} over ${distribution}\n`);
    await rm(home, { recursive: true, force: true });
    await rename(scratch, home);
    return home;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

import { join } from 'node:path';
import { InfraError } from '../errors.js';
import { publishAtomically } from './cache-layout.js';
import { requirePinnedSha256 } from './pinned-hash.js';
import type { CrdModulePin, GoToolPin } from './pins.js';
import { CommandNotFoundError, outputTail, runCommand, type CommandResult } from './run-command.js';

/**
 * The Go command's own downloads: the Go module proxy (GOPROXY, so a mirror applies) and Go's checksum
 * database (GOSUMDB, reached through the proxy) vouch for every module, and the pins here are checked
 * on top. GOTOOLCHAIN=local: a too-old Go must fail here, not fetch another toolchain. GOFLAGS is
 * replaced so that a user's `-mod=vendor` and the like cannot change what is built, and the module
 * cache stays deletable.
 */
function goEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-modcacherw', ...extra };
}

async function runGo(args: string[], what: string, cwd: string, env = goEnv()): Promise<CommandResult> {
  try {
    const result = await runCommand(process.env.NEON_GO ?? 'go', args, { cwd, env, timeoutMs: 15 * 60_000 });
    if (result.code !== 0) {
      throw new InfraError(
        'download_failed',
        `\`go ${args.join(' ')}\` (${what}) failed with exit ${result.code}:\n    ${outputTail(result)}`,
        'Check that the Go module proxy (GOPROXY) is reachable and Go is 1.24 or newer, then run again.',
      );
    }
    return result;
  } catch (error) {
    if (error instanceof CommandNotFoundError) {
      throw new InfraError(
        'download_failed',
        `Go is needed once to build ${what}, and \`${error.command}\` was not found`,
        'Install Go 1.24 or newer (or set NEON_GO to the go binary), then run again.',
        { cause: error },
      );
    }
    throw error;
  }
}

function mismatch(what: string, kind: string, actual: string, expected: string): InfraError {
  return new InfraError(
    'checksum_mismatch',
    `${what} failed verification: ${kind} is ${actual}, expected ${expected}`,
    'The module is not the pinned release (or the proxy served something else); nothing was cached. Check GOPROXY, or update infra/k8s-validation/pins.ts deliberately.',
  );
}

/** Reads which module version (and its `h1:` hash) a Go binary was built from. */
async function builtModule(binary: string, cwd: string): Promise<{ version: string; sum: string } | undefined> {
  const result = await runGo(['version', '-m', binary], `reading the build information of ${binary}`, cwd);
  const line = result.stdout.split('\n').find((l) => l.trim().startsWith('mod\t'));
  const [, , version, sum] = line?.trim().split('\t') ?? [];
  return version && sum ? { version, sum } : undefined;
}

/**
 * Builds a pinned Go program into `binaryPath` (once). The binary's embedded build information must
 * name the pinned module version and hash, which the Go command checked against the checksum database.
 */
export async function buildGoTool(pin: GoToolPin, binaryPath: string, log: (line: string) => void): Promise<void> {
  await publishAtomically(binaryPath, async (scratch) => {
    const started = Date.now();
    log(`building ${pin.name} ${pin.version} from the Go module proxy (once)…`);
    const gobin = join(scratch, 'bin');
    await runGo(
      ['install', `${pin.packagePath}@${pin.version}`],
      `${pin.name} ${pin.version}`,
      scratch,
      goEnv({ GOBIN: gobin }),
    );
    const built = join(gobin, pin.name);
    const info = await builtModule(built, scratch);
    const what = `${pin.name} ${pin.version}`;
    if (info?.version !== pin.version) {
      throw mismatch(what, 'the module version', info?.version ?? 'unknown', pin.version);
    }
    if (info.sum !== pin.moduleSum) throw mismatch(what, 'the module hash', info.sum, pin.moduleSum);
    log(`built ${pin.name} ${pin.version} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    return built;
  });
}

/** What `go mod download -json` says about one module. */
export interface GoModDownload {
  Path?: string;
  Version?: string;
  Error?: string;
  Dir?: string;
  Zip?: string;
  Sum?: string;
}

/** Checks a downloaded module against its pin (Go's `h1:` hash and the zip's SHA-256); returns its tree. */
export async function verifyGoModuleDownload(answer: GoModDownload, pin: CrdModulePin): Promise<string> {
  const what = `${pin.module}@${pin.version}`;
  if (answer.Error) throw new InfraError('download_failed', `downloading ${what} failed: ${answer.Error}`);
  if (!answer.Dir || !answer.Zip || !answer.Sum) {
    throw new InfraError('download_failed', `\`go mod download\` did not say where ${what} is`);
  }
  if (answer.Sum !== pin.moduleSum) throw mismatch(what, 'the module hash', answer.Sum, pin.moduleSum);
  await requirePinnedSha256(answer.Zip, pin.zipSha256, 'the Go module proxy');
  return answer.Dir;
}

/** Downloads a pinned module into Go's module cache and returns its verified, unpacked source tree. */
export async function downloadGoModule(pin: CrdModulePin, cwd: string): Promise<string> {
  const what = `${pin.module}@${pin.version}`;
  // A module it cannot fetch makes `go mod download` exit 1 with the reason in its JSON, which the
  // error then quotes.
  const result = await runGo(['mod', 'download', '-json', what], what, cwd);
  return verifyGoModuleDownload(JSON.parse(result.stdout) as GoModDownload, pin);
}

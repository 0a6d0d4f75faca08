import type { HealthReport } from './metrics-server.js';

export interface DependencyCheck {
  /** Named in the probe's answer, e.g. "Kafka" or "Elasticsearch". */
  name: string;
  /** Resolves when the dependency answers; any rejection means it does not. */
  run(): Promise<unknown>;
}

export interface HealthCheckOptions {
  /** A dependency slower than this counts as down (probes themselves time out at a few seconds). */
  timeoutMs?: number;
  /** Answers are reused this long, so frequent probes do not load the broker or the cluster. */
  cacheMs?: number;
  now?: () => number;
}

/**
 * Readiness from dependency round trips (one cheap request each, cached briefly) and liveness from
 * the caller's own state: a process whose stage died is not live, one whose broker is unreachable
 * is only not ready — restarting it would not bring the broker back.
 */
export function healthFrom(
  liveness: () => string[],
  checks: readonly DependencyCheck[],
  options: HealthCheckOptions = {},
): () => Promise<HealthReport> {
  const timeoutMs = options.timeoutMs ?? 2000;
  const cacheMs = options.cacheMs ?? 5000;
  const now = options.now ?? Date.now;
  let cached: { at: number; problems: Promise<string[]> } | undefined;

  const probe = async (check: DependencyCheck): Promise<string | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([check.run(), timeout]);
      return undefined;
    } catch (error) {
      return `${check.name}: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      clearTimeout(timer);
    }
  };

  const dependencyProblems = (): Promise<string[]> => {
    if (cached === undefined || now() - cached.at >= cacheMs) {
      const problems = Promise.all(checks.map(probe)).then((found) => found.filter((p) => p !== undefined));
      cached = { at: now(), problems };
    }
    return cached.problems;
  };

  return async () => {
    const dead = liveness();
    const down = await dependencyProblems();
    return { live: dead.length === 0, ready: down.length === 0, problems: [...dead, ...down] };
  };
}

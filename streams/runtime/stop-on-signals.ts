/** A stop that failed or ran out of its budget: anything uncommitted is redelivered on the next run. */
export class StopIncomplete extends Error {
  override readonly name = 'StopIncomplete';
  constructor(what: string) {
    super(`${what} did not stop cleanly; work it had not committed will be processed again on the next run`);
  }
}

/** How long a stopping process may drain before it exits anyway; pods get more than this to stop. */
export const SHUTDOWN_BUDGET_MS = 30_000;

/**
 * Graceful shutdown for a process running stages: on SIGTERM or SIGINT stop fetching, drain,
 * commit and close — and if that has not finished within the budget (Kubernetes kills at 30 s),
 * exit anyway: anything uncommitted is redelivered to the next run, so a forced exit loses nothing.
 */
export function stopOnSignals(
  stop: () => Promise<void>,
  options: {
    budgetMs?: number;
    exit?: (code: number) => void;
    log?: (line: string) => void;
    /** What stopping means for this process, said when the signal arrives. */
    stopping?: string;
  } = {},
): () => void {
  const budgetMs = options.budgetMs ?? SHUTDOWN_BUDGET_MS;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log(`${signal} again: still stopping (at most ${budgetMs / 1000} s in all)`);
      return;
    }
    stopping = true;
    log(`${signal}: stopping — ${options.stopping ?? 'no new records, draining in-flight work, committing'}`);
    const timer = setTimeout(() => {
      log(`shutdown did not finish within ${budgetMs / 1000} s; exiting (uncommitted work will be redelivered)`);
      exit(1);
    }, budgetMs);
    stop().then(
      () => {
        clearTimeout(timer);
        exit(0);
      },
      (error: unknown) => {
        clearTimeout(timer);
        log(`stopped after a failure: ${error instanceof Error ? error.message : String(error)}`);
        exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}

/**
 * For a command that runs until told to stop: resolves once SIGTERM / SIGINT led to a clean
 * `stop`, rejects if the stop failed or if `died` (the work's own end) rejects first.
 */
export function untilSignalled(
  stop: () => Promise<void>,
  options: { what: string; died?: Promise<unknown>; budgetMs?: number; stopping?: string },
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    stopOnSignals(stop, {
      ...(options.budgetMs === undefined ? {} : { budgetMs: options.budgetMs }),
      ...(options.stopping === undefined ? {} : { stopping: options.stopping }),
      exit: (code) => (code === 0 ? resolve() : reject(new StopIncomplete(options.what))),
    });
    options.died?.catch(reject);
  });
}

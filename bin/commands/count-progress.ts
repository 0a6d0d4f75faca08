import cliProgress from 'cli-progress';

export interface CountProgress {
  update(done: number, total: number | undefined, note?: string): void;
  stop(): void;
}

/**
 * Progress of long work for people: a bar on a terminal, a line a second on stderr otherwise, and
 * nothing with `silent` (JSON output, where only the final document is printed).
 */
export function countProgress(label: string, options: { silent?: boolean } = {}): CountProgress {
  if (options.silent) return { update: () => undefined, stop: () => undefined };
  const stream = process.stderr;
  if (stream.isTTY) {
    let bar: cliProgress.SingleBar | undefined;
    return {
      update: (done, total, note = '') => {
        if (!bar) {
          bar = new cliProgress.SingleBar(
            { format: `${label} {bar} {percentage}% | {value}/{total} {note}`, stream, hideCursor: true },
            cliProgress.Presets.shades_classic,
          );
          bar.start(total ?? done, done, { note });
        }
        bar.setTotal(Math.max(total ?? done, done));
        bar.update(done, { note });
      },
      stop: () => bar?.stop(),
    };
  }
  let last = 0;
  return {
    update: (done, total, note = '') => {
      if (Date.now() - last < 1000) return;
      last = Date.now();
      stream.write(`${label}: ${done}${total === undefined ? '' : `/${total}`} ${note}\n`);
    },
    stop: () => undefined,
  };
}

import cliProgress from 'cli-progress';
import type { Story } from '../../processors/spikes/alert-desk.js';
import type { SpikeAlert } from '../../schemas/records.generated.js';
import type { StatusDocument } from '../../service/status-routes.js';
import { printable } from './terminal-text.js';

/**
 * What a running neon-stream says in the terminal: a progress bar while a feed is replayed (a line
 * every few seconds when the output is not a terminal), spike alerts as they start and end, and a
 * summary line. Alerts are printed above the bar so neither garbles the other.
 */
export interface TerminalReporter {
  progress(status: StatusDocument): void;
  /**
   * An alert state, with the alert desk's verdict when there is one: then only stories delivered
   * within the budget are printed (when delivered, and when their lead's episode ends).
   */
  alert(alert: SpikeAlert, desk?: { story?: Story; delivered?: boolean }): void;
  line(text: string): void;
  stop(): void;
}

const day = (t: number): string => new Date(t).toISOString().slice(0, 10);

export function alertLine(alert: SpikeAlert): string {
  const when =
    alert.granularity === 'DAY' ? day(alert.window_end - 1) : new Date(alert.window_end).toISOString().slice(0, 16);
  if (alert.state === 'ENDED')
    return `spike ended    ${alert.entity_name} (${alert.granularity.toLowerCase()}, ${when})`;
  if (alert.method === 'surprise') {
    return (
      `spike ${alert.state === 'STARTED' ? 'STARTED' : 'ongoing'}  ${alert.entity_name} (${alert.entity_type}): ` +
      `${alert.observed} articles to ${when}, expected ${alert.baseline_mean.toFixed(1)} ` +
      `(significance ${alert.significance.toFixed(1)})`
    );
  }
  return (
    `spike ${alert.state === 'STARTED' ? 'STARTED' : 'ongoing'}  ${alert.entity_name} (${alert.entity_type}): ` +
    `${alert.observed} chunks in ${alert.granularity === 'DAY' ? 'the 3 days to' : 'the hours to'} ${when}, ` +
    `baseline ${alert.baseline_mean.toFixed(1)} ± ${alert.baseline_std.toFixed(1)} (score ${alert.score.toFixed(1)})`
  );
}

function summary(status: StatusDocument): string {
  const lag = status.stages.reduce((n, s) => n + (s.running && s.lag !== null ? s.lag : 0), 0);
  return (
    `chunks ${status.datastores.chunks ?? '?'} · interactions ${status.datastores.interactions ?? '?'} · ` +
    `entities ${status.entities} · spikes ${status.spikes.open} open / ${status.spikes.total} · backlog ${lag}`
  );
}

export function createTerminalReporter(options: { out?: NodeJS.WriteStream; quiet?: boolean } = {}): TerminalReporter {
  const out = options.out ?? process.stdout;
  const tty = out.isTTY;
  let bar: cliProgress.SingleBar | undefined;
  let lastLine = 0;
  let lastText = '';
  const write = (text: string): void => {
    if (bar) {
      // Clear the bar's line, print, and let the next update redraw it below.
      out.write(`\r\x1b[2K${printable(text)}\n`);
      return;
    }
    out.write(`${printable(text)}\n`);
  };
  return {
    progress: (status) => {
      if (options.quiet) return;
      const feed = status.feed;
      const total = feed.articles_total ?? 0;
      if (tty && feed.kind === 'sample' && total > 0 && !feed.done) {
        if (!bar) {
          bar = new cliProgress.SingleBar(
            {
              format: 'replay {bar} {percentage}% | {value}/{total} articles | {position} | {summary}',
              hideCursor: true,
              clearOnComplete: true,
              stream: out,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(total, feed.articles_replayed, { position: '…', summary: '' });
        }
        bar.setTotal(total);
        bar.update(feed.articles_replayed, {
          position: feed.position?.slice(0, 10) ?? '…',
          summary: summary(status),
        });
        return;
      }
      if (bar) {
        bar.stop();
        bar = undefined;
      }
      if (Date.now() - lastLine < 10_000) return;
      const source =
        feed.kind === 'sample'
          ? `replayed ${feed.articles_replayed}${total ? `/${total}` : ''} (${feed.position?.slice(0, 10) ?? '…'})`
          : feed.kind === 'feeds'
            ? `${feed.articles_replayed} articles from feeds`
            : 'no feed';
      const text = `${source} · ${summary(status)}`;
      // Only news is printed: an idle pipeline does not repeat itself every ten seconds.
      if (text === lastText) return;
      lastLine = Date.now();
      lastText = text;
      write(text);
    },
    alert: (alert, desk) => {
      const story = desk?.story;
      if (story === undefined) {
        if (alert.state !== 'ONGOING') write(alertLine(alert));
        return;
      }
      // A story is pushed by whichever state first takes it past the bar: a growth update too.
      if (desk?.delivered) {
        const others = story.members.filter((m) => m.entity_id !== alert.entity_id).map((m) => m.entity_name);
        write(`${alertLine(alert)}${others.length > 0 ? ` + ${others.join(', ')}` : ''}`);
      } else if (alert.state === 'ENDED' && story.delivered && alert.entity_id === story.lead.entity_id) {
        write(alertLine(alert));
      }
    },
    line: write,
    stop: () => {
      bar?.stop();
      bar = undefined;
    },
  };
}

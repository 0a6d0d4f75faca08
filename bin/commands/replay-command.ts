import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { readJsonlArticles } from '../../streams/archives/read-jsonl-articles.js';
import { loadRealtimeQaDocs } from '../../streams/archives/load-realtimeqa.js';
import { loadWikinews } from '../../streams/archives/load-wikinews.js';
import { loadWikipediaCurrentEventsReplay } from '../../streams/archives/load-wikipedia-current-events.js';
import { replayArticles, type ReplayItem } from '../../processors/intake/replay-articles.js';
import type { NormalizeOptions } from '../../processors/intake/normalize-article.js';
import { EARLIEST_REPLAY_PUBLISH_TIME } from '../../processors/intake/publish-time.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { UsageError } from '../../infra/cli-errors.js';
import { redactUrl } from '../../schemas/connection-config.js';
import { clusterTransport } from './cluster-transport.js';
import { countProgress } from './count-progress.js';
import { ServiceArticlePublisher } from './service-article-publisher.js';
import { findService } from './service-client.js';
import type { ArticlePublisher } from '../../processors/intake/article-input.js';
import type { Transport } from '../../streams/runtime/transport.js';

const FORMATS = ['auto', 'jsonl', 'realtimeqa', 'wikinews', 'wikipedia'] as const;
type Format = (typeof FORMATS)[number];

/** Picks the reader for a path: a RealTime QA folder, a Wikinews folder, or a JSONL file. */
export function detectFormat(path: string): Exclude<Format, 'auto'> {
  if (!existsSync(path)) throw new UsageError(`${path}: no such file or folder`);
  if (!statSync(path).isDirectory()) return 'jsonl';
  if (existsSync(join(path, 'docs'))) return 'realtimeqa';
  if (existsSync(join(path, 'wikinews_2019.csv')) || existsSync(join(path, 'wikinews_2020.csv'))) return 'wikinews';
  if (existsSync(join(path, 'daily_markdown'))) return 'wikipedia';
  throw new UsageError(
    `${path}: a folder, but not a RealTime QA, Wikinews or Wikipedia Current Events one; give --format`,
  );
}

/** The items of a path in a format, with the intake options its reader declares for them. */
export function itemsOf(
  format: Exclude<Format, 'auto'>,
  path: string,
): { items: AsyncIterable<ReplayItem>; normalize?: Partial<NormalizeOptions> } {
  if (format === 'jsonl') return { items: readJsonlArticles(path) };
  const load =
    format === 'realtimeqa'
      ? loadRealtimeQaDocs(path)
      : format === 'wikinews'
        ? loadWikinews(path)
        : loadWikipediaCurrentEventsReplay(path);
  if (!load.ok) throw new UsageError(load.error);
  return { items: load.items, ...(load.normalize === undefined ? {} : { normalize: load.normalize }) };
}

function positive(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number, got "${value}"`);
  return n;
}

/**
 * `neon replay FILE` — publishes a JSONL file or a dataset folder to news.articles in publication
 * order, optionally time-compressed (`--speed 3600`: an hour of news per second).
 */
export function registerReplayCommand(program: Command): void {
  program
    .command('replay')
    .description('publish a JSONL file or dataset folder to news.articles in publication-time order')
    .argument('<path>', 'JSONL file (.jsonl or .jsonl.gz, "-" for stdin) or a RealTime QA / Wikinews folder')
    .option('--format <format>', `one of ${FORMATS.join(', ')}`, 'auto')
    .option('--speed <factor>', 'time compression: 3600 = one hour of publication time per second (default: no pauses)')
    .option('--limit <n>', 'read at most n items')
    .option('--api <url>', 'send to a running neon-stream (default: NEON_API_URL, or the running neon start)')
    .option('--earliest <date>', 'earliest publication date accepted (YYYY-MM-DD; default 1900-01-01)')
    .option('--json', 'print the final report as JSON')
    .action(
      async (
        path: string,
        flags: { format: string; speed?: string; limit?: string; api?: string; earliest?: string; json?: boolean },
      ) => {
        if (!(FORMATS as readonly string[]).includes(flags.format)) {
          throw new UsageError(`--format must be one of ${FORMATS.join(', ')}`);
        }
        const format =
          flags.format === 'auto'
            ? path === '-'
              ? 'jsonl'
              : detectFormat(path)
            : (flags.format as Exclude<Format, 'auto'>);
        const speed = positive(flags.speed, 'speed');
        const limit = positive(flags.limit, 'limit');
        const earliest = flags.earliest === undefined ? undefined : Date.parse(`${flags.earliest}T00:00:00Z`);
        if (earliest !== undefined && (!/^\d{4}-\d{2}-\d{2}$/.test(flags.earliest!) || Number.isNaN(earliest))) {
          throw new UsageError(`--earliest takes a date as YYYY-MM-DD, got "${flags.earliest}"`);
        }
        const source: ReturnType<typeof itemsOf> =
          path === '-' ? { items: readJsonlArticles(process.stdin) } : itemsOf(format, path);
        // Archives are news too: old publication times are accepted, here and by a service sent to.
        const normalize: Partial<NormalizeOptions> = {
          ...source.normalize,
          earliestPublishTime: earliest ?? EARLIEST_REPLAY_PUBLISH_TIME,
        };
        const service = findService(flags.api);
        let transport: Transport | undefined;
        let publisher: ArticlePublisher;
        let destination: string;
        if (service) {
          publisher = new ServiceArticlePublisher(service, undefined, normalize);
          destination = `${redactUrl(service.url)} (from ${service.from})`;
        } else {
          const cluster = await clusterTransport('neon-replay');
          transport = cluster.transport;
          publisher = new TransportArticlePublisher(transport.producer(), { processor: 'replay' });
          destination = `news.articles on ${cluster.brokers.join(',')}`;
        }
        const progress = countProgress('replay', { silent: flags.json === true });
        const abort = new AbortController();
        const onSignal = (): void => abort.abort();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        try {
          if (!flags.json) process.stderr.write(`replaying ${path} (${format}) to ${destination}\n`);
          const report = await replayArticles(source.items, {
            publisher,
            origin: path,
            signal: abort.signal,
            ...(speed === undefined ? {} : { speed }),
            ...(limit === undefined ? {} : { limit }),
            normalize,
            onProgress: (p) =>
              progress.update(p.published, p.total, new Date(p.publishedAt).toISOString().slice(0, 16)),
          });
          progress.stop();
          if (publisher instanceof ServiceArticlePublisher) await publisher.flush();
          if (flags.json) {
            process.stdout.write(`${JSON.stringify({ path, format, ...report })}\n`);
          } else {
            const reasons = Object.entries(report.rejected).map(([reason, n]) => `${reason} ${n}`);
            process.stdout.write(
              `published ${report.published} of ${report.read} in ${(report.durationMs / 1000).toFixed(1)} s; ` +
                `rejected ${reasons.length ? reasons.join(', ') : 'none'} (dead letters on neon.dlq)` +
                `${report.aborted ? '; stopped early' : ''}\n`,
            );
          }
          if (report.aborted) process.exitCode = 130;
        } finally {
          progress.stop();
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          await transport?.close();
        }
      },
    );
}

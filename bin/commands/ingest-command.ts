import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { UsageError } from '../../infra/cli-errors.js';
import { IntakeRejection, type ArticleInput, type ArticlePublisher } from '../../processors/intake/article-input.js';
import { parseFeed } from '../../processors/intake/parse-feed.js';
import { readJsonlArticles } from '../../streams/archives/read-jsonl-articles.js';
import { replayArticles, type ReplayItem } from '../../processors/intake/replay-articles.js';
import { redactUrl } from '../../schemas/connection-config.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { pollFeedOnce } from '../../streams/stages/intake-stage.js';
import { guardedFetchFromEnv } from '../../streams/http/guarded-fetch.js';
import type { Transport } from '../../streams/runtime/transport.js';
import { clusterTransport } from './cluster-transport.js';
import { countProgress } from './count-progress.js';
import { ServiceArticlePublisher } from './service-article-publisher.js';
import { findService } from './service-client.js';

type SourceKind = 'feed-url' | 'feed-file' | 'jsonl' | 'stdin';

function kindOf(source: string): SourceKind {
  if (source === '-') return 'stdin';
  if (/^https?:\/\//i.test(source)) return 'feed-url';
  if (!existsSync(source)) throw new UsageError(`${source}: no such file (give a feed URL, a file, or - for stdin)`);
  const head = readFileSync(source, 'utf8').slice(0, 400);
  const looksLikeFeed =
    /\.(xml|rss|atom|rdf)$/i.test(source) ||
    /^\s*</.test(head) ||
    /"version"\s*:\s*"https:\/\/jsonfeed\.org/.test(head);
  return looksLikeFeed ? 'feed-file' : 'jsonl';
}

/** A feed file's entries as replay items (each with its own JSON as the original bytes). */
function feedFileItems(path: string): ReplayItem[] {
  let parsed;
  try {
    parsed = parseFeed(readFileSync(path, 'utf8'), `file://${path}`);
  } catch (error) {
    if (error instanceof IntakeRejection) throw new UsageError(`${path}: ${error.reason}: ${error.message}`);
    throw error;
  }
  return parsed.entries.map((entry, i) => {
    const input: ArticleInput = entry;
    return { raw: Buffer.from(JSON.stringify(input)), input, origin: `${path}#${i}` };
  });
}

interface IngestReport {
  source: string;
  kind: SourceKind;
  to: string;
  published: number;
  refused: Record<string, number>;
  /** Refused inputs now on the dead-letter topic with their reason. */
  dead_lettered: number;
  durationMs: number;
}

/**
 * `neon ingest <feed URL | file | ->` — one-off intake: a feed polled once (new entries, full pages
 * fetched where an entry is short), a feed file, or JSONL from a file or stdin. Articles go to the
 * running neon-stream (POST /v1/articles) when one is found, otherwise to news.articles on Kafka;
 * what intake refuses is dead-lettered with its reason and counted in the report.
 */
export function registerIngestCommand(program: Command): void {
  program
    .command('ingest')
    .description('ingest news once: a feed URL, a feed or JSONL file, or JSONL on stdin ("-")')
    .argument('<source>', 'https://…/rss.xml | feed.xml | articles.jsonl[.gz] | -')
    .option('--api <url>', 'send to a running neon-stream (default: NEON_API_URL, or the running neon start)')
    .option('--limit <n>', 'at most n articles (of a feed: its n newest new entries)')
    .option('--json', 'print the report as JSON')
    .action(async (source: string, flags: { api?: string; limit?: string; json?: boolean }) => {
      const limit = flags.limit === undefined ? undefined : Number(flags.limit);
      if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
        throw new UsageError('--limit must be a positive integer');
      }
      const kind = kindOf(source);
      // A feed URL may carry a token (…/rss?key=…): the report and messages show it redacted.
      const shown = kind === 'feed-url' ? redactUrl(source) : source;
      const started = Date.now();
      const service = findService(flags.api);
      let transport: Transport | undefined;
      let publisher: ArticlePublisher;
      let to: string;
      let published: () => number;
      if (service) {
        const toService = new ServiceArticlePublisher(service);
        publisher = toService;
        to = `${redactUrl(service.url)} (from ${service.from})`;
        published = () => toService.counters.published;
      } else {
        const cluster = await clusterTransport('neon-ingest');
        transport = cluster.transport;
        const toKafka = new TransportArticlePublisher(transport.producer(), { processor: 'ingest' });
        publisher = toKafka;
        to = `news.articles on ${cluster.brokers.join(',')}`;
        published = () => toKafka.counters.published;
      }
      const progress = countProgress('ingest', { silent: flags.json === true });
      const refused: Record<string, number> = {};
      try {
        if (kind === 'feed-url') {
          const report = await pollFeedOnce({
            url: source,
            publisher,
            fetch: guardedFetchFromEnv(process.env),
            ...(limit === undefined ? {} : { maxEntries: limit }),
          });
          if (report?.outcome === 'failed') {
            const why = report.message ?? report.error ?? 'the feed could not be read';
            throw new UsageError(`${shown}: ${report.error === 'address_refused' ? `address_refused: ${why}` : why}`);
          }
          if (report && report.rejected > 0) refused.refused = report.rejected;
        } else {
          const items =
            kind === 'stdin'
              ? readJsonlArticles(process.stdin)
              : kind === 'jsonl'
                ? readJsonlArticles(source)
                : feedFileItems(source);
          const report = await replayArticles(items, {
            publisher,
            origin: source,
            ...(limit === undefined ? {} : { limit }),
            onProgress: (p) => progress.update(p.published, p.total, `refused ${p.rejected}`),
          });
          for (const [reason, n] of Object.entries(report.rejected)) refused[reason] = n;
        }
        if (publisher instanceof ServiceArticlePublisher) {
          await publisher.flush();
          if (publisher.counters.refusedByService > 0) {
            refused.refused_by_service = publisher.counters.refusedByService;
          }
        }
      } finally {
        progress.stop();
        await transport?.close();
      }
      const deadLettered =
        publisher instanceof ServiceArticlePublisher
          ? publisher.counters.deadLettered
          : Object.values(refused).reduce((n, c) => n + c, 0);
      const report: IngestReport = {
        source: shown,
        kind,
        to,
        published: published(),
        refused,
        dead_lettered: deadLettered,
        durationMs: Date.now() - started,
      };
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        return;
      }
      const reasons = Object.entries(refused).map(([reason, n]) => `${reason} ${n}`);
      process.stdout.write(
        `ingested ${report.published} articles from ${shown} into ${to} in ${(report.durationMs / 1000).toFixed(1)} s; ` +
          `refused: ${reasons.length > 0 ? `${reasons.join(', ')} (${report.dead_lettered} dead-lettered with the reason)` : 'none'}\n`,
      );
    });
}

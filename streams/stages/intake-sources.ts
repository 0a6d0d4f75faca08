/**
 * The news sources `neon start` publishes from: the bundled sample replayed in publication order, or
 * live feeds polled on their schedules (intake's binding for a whole product in one process).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ArticlePublisher } from '../../processors/intake/article-input.js';
import { createFeedPoller, type FeedPoller, type FeedSubscription } from '../feeds/feed-poller.js';
import { JsonFileFeedStateStore } from '../feeds/feed-state-store.js';
import { readJsonlArticles } from '../archives/read-jsonl-articles.js';
import { replayArticles, type ReplayReport } from '../../processors/intake/replay-articles.js';
import { SUMMARY_MIN_TEXT_CHARS } from '../../processors/intake/normalize-article.js';

/** Where a source is, for `GET /v1/status` and the dashboard's status strip. */
export interface FeedStatus {
  kind: 'sample' | 'feeds' | 'none';
  name: string;
  articles_total: number | null;
  articles_replayed: number;
  articles_rejected: number;
  /** Publication time of the latest article sent, ISO 8601. */
  position: string | null;
  done: boolean;
}

/**
 * `samples/` of the checkout or image: two levels up from the sources (`streams/stages/`), three from
 * the compiled code (`dist/streams/stages/`). The first when neither exists, so the error names it.
 */
function samplesDir(): string {
  const candidates = ['../../samples', '../../../samples'].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url)),
  );
  return candidates.find((dir) => existsSync(join(dir, 'live-feeds.yaml'))) ?? candidates[0]!;
}

const SAMPLES = samplesDir();

/** The bundled offline feed: Wikipedia's Current Events, 2025 Q1 (CC BY-SA 4.0, see its README). */
export const BUNDLED_SAMPLE = {
  name: 'Wikipedia Current Events 2025 Q1 (bundled sample, CC BY-SA 4.0)',
  file: join(SAMPLES, 'wikipedia-current-events-2025q1', 'articles.jsonl'),
};

/** Well-known public news feeds `npm start` polls when it can reach them. */
export const DEFAULT_FEEDS_FILE = join(SAMPLES, 'live-feeds.yaml');

export interface SourceReport {
  published: number;
  refused: number;
  durationMs: number;
}

export interface NewsSource {
  readonly status: () => FeedStatus;
  /** Resolves when the source has nothing more to give: a replay ended, or a single poll (`once`). */
  readonly finished: Promise<SourceReport>;
  stop(): Promise<void>;
}

function reportOf(report: ReplayReport): SourceReport {
  return {
    published: report.published,
    refused: Object.values(report.rejected).reduce((n, c) => n + c, 0),
    durationMs: report.durationMs,
  };
}

export interface SampleReplayOptions {
  publisher: ArticlePublisher;
  file?: string;
  name?: string;
  /** Times faster than real time; default: two days of news per second of wall time. */
  speed?: number;
  limit?: number;
  onProgress?: (status: FeedStatus) => void;
}

/** Replays a JSONL file of articles in publication order, time-compressed (the offline feed). */
export function replaySample(options: SampleReplayOptions): NewsSource {
  const stopping = new AbortController();
  const status: FeedStatus = {
    kind: 'sample',
    name: options.name ?? BUNDLED_SAMPLE.name,
    articles_total: null,
    articles_replayed: 0,
    articles_rejected: 0,
    position: null,
    done: false,
  };
  const file = options.file ?? BUNDLED_SAMPLE.file;
  const finished = replayArticles(readJsonlArticles(file), {
    publisher: options.publisher,
    speed: options.speed ?? 172_800,
    origin: file,
    signal: stopping.signal,
    // The bundled sample is one-sentence summaries: intake's 80-character floor for articles would
    // refuse 46 real ones ("Four people are killed after two cars collide on PJ Patterson Highway…").
    ...(options.file === undefined ? { normalize: { minTextChars: SUMMARY_MIN_TEXT_CHARS } } : {}),
    ...(options.limit === undefined ? {} : { limit: options.limit }),
    onProgress: (progress) => {
      status.articles_total = progress.total;
      status.articles_replayed = progress.published;
      status.articles_rejected = progress.rejected;
      status.position = new Date(progress.publishedAt).toISOString();
      options.onProgress?.({ ...status });
    },
  }).then((report) => {
    status.done = !report.aborted;
    status.articles_replayed = report.published;
    status.articles_rejected = Object.values(report.rejected).reduce((n, c) => n + c, 0);
    options.onProgress?.({ ...status });
    return reportOf(report);
  });
  return {
    status: () => ({ ...status }),
    finished,
    stop: async () => {
      stopping.abort();
      await finished.catch(() => undefined);
    },
  };
}

export interface LiveFeedsOptions {
  publisher: ArticlePublisher;
  feeds: FeedSubscription[];
  dataDir: string;
  name: string;
  /** Poll each feed once and finish, instead of following them. */
  once?: boolean;
  /** What the publisher has sent so far, for the status. */
  counters: () => { published: number; rejected: number };
  /** The guarded fetch (streams/http/guarded-fetch): feeds name the pages fetched. */
  fetch: typeof globalThis.fetch;
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

/**
 * Polls live feeds once; if at least one answered, keeps polling them on their schedules and returns
 * the running source, otherwise stops and returns undefined (offline: the caller replays the sample).
 */
export async function followLiveFeeds(options: LiveFeedsOptions): Promise<NewsSource | undefined> {
  const poller: FeedPoller = createFeedPoller({
    feeds: options.feeds,
    publisher: options.publisher,
    stateStore: new JsonFileFeedStateStore(join(options.dataDir, 'intake', 'feeds')),
    timeoutMs: 8_000,
    fetch: options.fetch,
    log: options.log ?? (() => undefined),
  });
  const started = Date.now();
  const first = await poller.pollOnce();
  const reachable = first.filter((r) => r.outcome !== 'failed');
  if (reachable.length === 0) {
    await poller.stop();
    return undefined;
  }
  const status: FeedStatus = {
    kind: 'feeds',
    name: `${reachable.length} of ${options.feeds.length} live feeds (${options.name})`,
    articles_total: null,
    articles_replayed: 0,
    articles_rejected: 0,
    position: null,
    done: false,
  };
  if (!options.once) poller.start();
  const finished: Promise<SourceReport> = options.once
    ? Promise.resolve({
        published: first.reduce((n, r) => n + r.published, 0),
        refused: first.reduce((n, r) => n + r.rejected, 0),
        durationMs: Date.now() - started,
      })
    : new Promise(() => undefined);
  return {
    status: () => {
      const { published, rejected } = options.counters();
      return { ...status, articles_replayed: published, articles_rejected: rejected };
    },
    finished,
    stop: () => poller.stop(),
  };
}

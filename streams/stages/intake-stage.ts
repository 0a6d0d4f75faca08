/**
 * Intake's binding for `neon intake` and `neon ingest`: the feed poller of `processors/intake/`
 * connected to a publisher (news.articles and neon.dlq on a transport, or a running service), with
 * its state kept where a restart finds it. The bundled sample and the live feeds of `neon start`
 * are in `intake-sources.ts`, the publisher onto the topics in `intake-publisher.ts`.
 */
import { join } from 'node:path';
import type { ArticlePublisher } from '../../processors/intake/article-input.js';
import { createFeedPoller, type FeedSubscription, type IntakeLogger, type PollReport } from '../feeds/feed-poller.js';
import { JsonFileFeedStateStore, MemoryFeedStateStore } from '../feeds/feed-state-store.js';
import { TOPICS } from '../pipeline/topics.js';
import type { Transport } from '../runtime/transport.js';
import { healthFrom } from '../telemetry/health-checks.js';

/** Ready while the broker answers for the topic intake writes; nothing in intake can die alone. */
export function intakeHealth(transport: Transport): ReturnType<typeof healthFrom> {
  return healthFrom(() => [], [{ name: 'Kafka', run: () => transport.endOffsets(TOPICS.articles) }]);
}

export interface FeedIntakeOptions {
  feeds: FeedSubscription[];
  publisher: ArticlePublisher;
  /** The product's data directory: feed state (ETags, seen items) is kept under `intake/feeds`. */
  dataDir: string;
  /** The guarded fetch (streams/http/guarded-fetch): feeds name the pages fetched. */
  fetch: typeof globalThis.fetch;
  log?: IntakeLogger;
}

export interface FeedIntake {
  /** Where the feeds' state is kept, so a restart fetches only what is new. */
  readonly stateDir: string;
  /** Polls every feed on its own schedule until stopped. */
  start(): void;
  stop(): Promise<void>;
}

/** `neon intake`'s feeds: polled on their schedules, publishing each new item once across restarts. */
export function feedIntake(options: FeedIntakeOptions): FeedIntake {
  const stateDir = join(options.dataDir, 'intake', 'feeds');
  const poller = createFeedPoller({
    feeds: options.feeds,
    publisher: options.publisher,
    stateStore: new JsonFileFeedStateStore(stateDir),
    fetch: options.fetch,
    ...(options.log === undefined ? {} : { log: options.log }),
  });
  return { stateDir, start: () => poller.start(), stop: () => poller.stop() };
}

export interface FeedOnceOptions {
  url: string;
  publisher: ArticlePublisher;
  fetch: typeof globalThis.fetch;
  /** At most this many of the feed's newest new entries. */
  maxEntries?: number;
}

/**
 * `neon ingest <feed URL>`: the feed polled once with no remembered state (every entry is new, full
 * pages fetched where an entry is short). The poll's report, or undefined if there was none.
 */
export async function pollFeedOnce(options: FeedOnceOptions): Promise<PollReport | undefined> {
  const poller = createFeedPoller({
    feeds: [{ url: options.url, intervalSeconds: 3600 }],
    publisher: options.publisher,
    stateStore: new MemoryFeedStateStore(),
    fetch: options.fetch,
    log: () => undefined,
    ...(options.maxEntries === undefined ? {} : { maxEntriesPerPoll: options.maxEntries }),
  });
  const [report] = await poller.pollOnce();
  await poller.stop();
  return report;
}

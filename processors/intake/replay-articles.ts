/**
 * Replays a finite collection of articles (a JSONL file, a dataset) in publication-time order,
 * optionally time-compressed, so downstream stages see the stream a live intake would have seen.
 *
 * Delivery: at-least-once — `publish` is awaited for each article in turn and a failing publisher
 * ends the replay with its error; a re-run republishes under the same deterministic ids, which
 * overwrite downstream. Inputs that normalisation refuses are dead-lettered through
 * `publisher.reject` with their original bytes and never hold up the others. Rejection reasons:
 * whatever the item already carries (`invalid_json`, `invalid_input`, `invalid_utf8`, `oversized`)
 * or normalisation gives (`invalid_url`, `no_text`, `missing_date`, `impossible_date`, …).
 *
 * Ordering needs every normalised article in memory before the first is published: fine for files
 * and datasets (the 11.8k RealTime QA documents peak at about 250 MB of heap), not for unbounded
 * streams. `maxItems` turns a runaway input into an error before anything is published.
 */
import {
  IntakeRejection,
  type ArticleInput,
  type ArticlePublisher,
  type IntakeRejectionReason,
} from './article-input.js';
import { normalizeArticle, type NormalizeOptions } from './normalize-article.js';
import { EARLIEST_REPLAY_PUBLISH_TIME } from './publish-time.js';
import type { Article } from '../../schemas/records.generated.js';

/**
 * One input of a replay: an ArticleInput or the rejection a reader already found, with the bytes it
 * came from. Readers' items (`readJsonlArticles`, the dataset loaders) have this shape.
 */
export interface ReplayItem {
  raw: Buffer;
  input?: ArticleInput | undefined;
  error?: IntakeRejection | undefined;
  /** Where the item came from, for dead letters (e.g. `file.jsonl.gz:17`). */
  origin?: string;
  /** Line number within `ReplayOptions.origin`, used when `origin` is absent. */
  line?: number;
}

export interface ReplayProgress {
  published: number;
  rejected: number;
  /** Articles to publish in total (known once every item is read). */
  total: number;
  /** Publication time of the article just published. */
  publishedAt: number;
}

export interface ReplayOptions {
  publisher: ArticlePublisher;
  /**
   * How many times faster than real time: 3600 replays one hour of publication time per wall-clock
   * second. Undefined: as fast as the publisher accepts.
   */
  speed?: number;
  /** Clock for `fetched_at` and pacing. Default `Date.now`. */
  now?: () => number;
  /** Default: a timer, cut short by `signal`. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Read at most this many items (the rest of the input is left unread). */
  limit?: number;
  /** More items than this is an error, raised before anything is published. Default 1,000,000. */
  maxItems?: number;
  /** Dead-letter origin for items that carry none. Default `replay`. */
  origin?: string;
  /** Normalisation; a replay accepts archives back to EARLIEST_REPLAY_PUBLISH_TIME (1900) unless told otherwise. */
  normalize?: Partial<NormalizeOptions>;
  onProgress?: (progress: ReplayProgress) => void;
  /** Stops between two emissions; the report says how far it got. */
  signal?: AbortSignal;
}

export interface ReplayReport {
  read: number;
  published: number;
  rejected: Partial<Record<IntakeRejectionReason, number>>;
  /** Wall-clock time of the emission phase (after reading and sorting). */
  durationMs: number;
  /** Publication time of the first and last article published. */
  firstPublishedAt?: number;
  lastPublishedAt?: number;
  /** True when `signal` stopped the replay before every article was published. */
  aborted: boolean;
}

export const DEFAULT_REPLAY_MAX_ITEMS = 1_000_000;

export class ReplayTooLargeError extends Error {
  override readonly name = 'ReplayTooLargeError';
  constructor(readonly maxItems: number) {
    super(`replay input has more than ${maxItems} items; raise maxItems or split the input`);
  }
}

interface Rejected {
  raw: Buffer;
  rejection: IntakeRejection;
  origin: string;
}

export async function replayArticles(
  items: AsyncIterable<ReplayItem> | Iterable<ReplayItem>,
  options: ReplayOptions,
): Promise<ReplayReport> {
  // Archives are news too: a replay accepts old publication times (the epoch's day stays refused).
  const normalize: Partial<NormalizeOptions> = {
    earliestPublishTime: EARLIEST_REPLAY_PUBLISH_TIME,
    ...options.normalize,
  };
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const maxItems = options.maxItems ?? DEFAULT_REPLAY_MAX_ITEMS;
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const speed = options.speed;
  if (speed !== undefined && !(speed > 0 && Number.isFinite(speed))) {
    throw new RangeError(`speed must be a positive finite number, got ${speed}`);
  }

  const articles: Article[] = [];
  const rejected: Rejected[] = [];
  let read = 0;
  for await (const item of items) {
    if (read >= limit) break;
    read += 1;
    if (read > maxItems) throw new ReplayTooLargeError(maxItems);
    const origin = itemOrigin(item, options.origin ?? 'replay');
    if (item.error !== undefined) {
      rejected.push({ raw: item.raw, rejection: item.error, origin });
      continue;
    }
    if (item.input === undefined) {
      rejected.push({ raw: item.raw, rejection: new IntakeRejection('invalid_input', 'no input'), origin });
      continue;
    }
    try {
      // Normalised before sorting so the order uses the very time the Article will carry.
      articles.push(normalizeArticle(item.input, now(), normalize));
    } catch (err) {
      if (!(err instanceof IntakeRejection)) throw err;
      rejected.push({ raw: item.raw, rejection: err, origin });
    }
  }

  const report: ReplayReport = { read, published: 0, rejected: {}, durationMs: 0, aborted: false };
  for (const r of rejected) {
    await options.publisher.reject(r.raw, r.rejection, r.origin);
    report.rejected[r.rejection.reason] = (report.rejected[r.rejection.reason] ?? 0) + 1;
  }
  const rejectedCount = rejected.length;
  rejected.length = 0;

  // Array.prototype.sort is stable: articles published at the same instant keep their input order.
  articles.sort((a, b) => a.published_at - b.published_at);
  const start = now();
  const first = articles[0]?.published_at;
  for (const article of articles) {
    if (isAborted(options.signal)) {
      report.aborted = true;
      break;
    }
    if (speed !== undefined && first !== undefined) {
      // Due times are measured from the start, not from the previous emission, so waits do not drift.
      const wait = start + (article.published_at - first) / speed - now();
      if (wait > 0) {
        try {
          await sleep(wait, options.signal);
        } catch (err) {
          if (!isAborted(options.signal)) throw err;
        }
        if (isAborted(options.signal)) {
          report.aborted = true;
          break;
        }
      }
    }
    await options.publisher.publish(article);
    report.published += 1;
    report.firstPublishedAt ??= article.published_at;
    report.lastPublishedAt = article.published_at;
    options.onProgress?.({
      published: report.published,
      rejected: rejectedCount,
      total: articles.length,
      publishedAt: article.published_at,
    });
  }
  report.durationMs = now() - start;
  return report;
}

// A function, not an inline check: the signal changes while awaiting, which control-flow narrowing cannot see.
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function itemOrigin(item: ReplayItem, base: string): string {
  if (item.origin !== undefined) return item.origin;
  return item.line === undefined ? base : `${base}:${item.line}`;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * What a dataset loader returns: the items to replay, and counters it fills in while they are read
 * (final once the iteration ended), with the intake options its kind of item calls for (a source of
 * one-sentence summaries lowers the text floor) — or, when the data is not there, a message for the
 * caller to print.
 */
export type DatasetLoad<Stats> =
  | { ok: true; items: AsyncIterable<ReplayItem>; stats: Stats; normalize?: Partial<NormalizeOptions> }
  | { ok: false; error: string };

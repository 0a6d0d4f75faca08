/**
 * Polls RSS, Atom, RDF and JSON feeds, each on its own jittered schedule, and hands every new entry
 * to normalisation and then to the publisher.
 *
 * Delivery: at-least-once. A guid is remembered as seen only after its publish or dead letter
 * resolved, and a feed's ETag / Last-Modified are stored only once every new entry of that response
 * was delivered — otherwise the next conditional GET could answer 304 and lose the rest. A crash
 * re-delivers the entries of the poll it interrupted; article ids are deterministic, so downstream
 * overwrites. An entry seen before whose title or text changed is published again as the article's next
 * version (at most 5), dated when the change was seen, so it supersedes the old text from then on.
 *
 * Dead letters (origin: the feed URL, credentials redacted): per entry, whatever normalisation refuses (`invalid_url`,
 * `no_text`, `missing_date`, `impossible_date`, `oversized`, `boilerplate`, …); per poll, at most one
 * for the whole body (`unparseable_feed`, `invalid_utf8`). Transport failures (timeouts, refused
 * connections, HTTP errors, bodies over `maxBytes`) carry no input to dead-letter: they show in the
 * PollReport and grow the feed's backoff. A feed or page on an address the outbound policy refuses
 * (loopback, private, link-local, metadata…: see schemas/outbound-address-policy) is never fetched:
 * the feed's poll fails with `address_refused`, an entry whose page it is is dead-lettered with
 * `address_refused`; the check itself is the injected fetch's (streams/http/guarded-fetch). An entry too short to stand alone whose article page fails
 * transiently is left for the next poll instead of being dead-lettered as `no_text`; if it leaves
 * the feed before its page ever loads, it is gone (the poll reports every deferral).
 *
 * Isolation: each feed has at most one poll in flight and its own timer, every request has a
 * timeout and a size limit, so a hanging or failing feed delays only itself. Concurrency is bounded
 * by the number of configured feeds; article pages of one feed are fetched one at a time.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { IntakeRejection, type ArticleInput, type ArticlePublisher } from '../../processors/intake/article-input.js';
import { charsetOf, decodeBody } from '../../processors/intake/decode-body.js';
import {
  emptyFeedState,
  rememberGuids,
  DEFAULT_MAX_SEEN_GUIDS,
  type EntryRevision,
  type FeedState,
  type FeedStateStore,
} from './feed-state-store.js';
import { normalizeArticle, type NormalizeOptions } from '../../processors/intake/normalize-article.js';
import { parseFeed, type FeedEntry, type ParsedFeed } from '../../processors/intake/parse-feed.js';
import { redactUrl, redactUrlsIn } from '../../schemas/connection-config.js';
import { addressRefusalIn } from '../../schemas/outbound-address-policy.js';
import type { Article } from '../../schemas/records.generated.js';
import { backoffCeiling, parseRetryAfter, relativeJitter } from '../../processors/retry/backoff.js';

/** Callers and tests of the poller read Retry-After through it. */
export { parseRetryAfter };

export interface FeedSubscription {
  url: string;
  /** Time between two polls of this feed when it is healthy. */
  intervalSeconds: number;
  /** Publisher name given to its articles; default: what the entry or normalisation says. */
  source?: string;
}

/** Why a poll failed. Closed set: a metric label and log field, never raw error text. */
export const FEED_POLL_ERRORS = [
  'timeout',
  'network',
  'http_status',
  'too_large',
  'address_refused',
  'invalid_utf8',
  'unparseable_feed',
  'publish_failed',
  'state_store',
  'stopped',
  'internal',
] as const;
export type FeedPollError = (typeof FEED_POLL_ERRORS)[number];

export interface PollReport {
  feedUrl: string;
  outcome: 'delivered' | 'not_modified' | 'failed';
  error?: FeedPollError;
  /** Human-readable detail for logs (no bodies). */
  message?: string;
  httpStatus?: number;
  /** Entries in the response, and those not seen before. */
  entries: number;
  newEntries: number;
  /** Entries seen before whose text changed: published again as the article's next version. */
  revisedEntries: number;
  published: number;
  rejected: number;
  /** New entries left for the next poll because their page could not be fetched this time. */
  deferred: number;
  pageFetches: number;
  pageFetchFailures: number;
  /** Consecutive failed polls of this feed after this one. */
  failures: number;
  /** Delay before this feed's next scheduled poll. */
  nextPollMs: number;
  durationMs: number;
}

export type IntakeLogger = (
  level: 'info' | 'warn' | 'error',
  message: string,
  fields?: Record<string, unknown>,
) => void;

export interface FeedPollerOptions {
  feeds: readonly FeedSubscription[];
  publisher: ArticlePublisher;
  stateStore: FeedStateStore;
  now?: () => number;
  /**
   * Feeds and the pages their entries link to are named by outside content: give the guarded fetch
   * (streams/http/guarded-fetch), which refuses internal addresses after resolution and at every
   * redirect. A plain fetch only where every URL is trusted.
   */
  fetch: typeof globalThis.fetch;
  userAgent?: string;
  /** Per request (feed or article page), body included. Default 20 s. */
  timeoutMs?: number;
  /** Per response body. Default 5 MiB. */
  maxBytes?: number;
  /** Fetch the article page when an entry carries less than `minEntryChars` of html/text. Default true. */
  fetchArticlePages?: boolean;
  /** Default 500. */
  minEntryChars?: number;
  /** Upper bound of a failing feed's backoff (never below its interval). Default 6 hours. */
  maxBackoffSeconds?: number;
  /** First polls after `start()` are spread over [0, min(interval, this)). Default 10 s. */
  startSpreadSeconds?: number;
  /** Relative jitter of every delay: ±10 % by default. */
  jitter?: number;
  /** Guids remembered per feed. Default 5,000. */
  maxSeenGuids?: number;
  /**
   * At most this many new entries are taken per poll of a feed: the newest ones (`neon ingest
   * --limit`). The others stay unseen, so the next poll offers them. Default: all.
   */
  maxEntriesPerPoll?: number;
  /**
   * A dead-lettered feed body is cut to this many bytes, so that it fits a broker message (Kafka's
   * default limit is 1 MiB). Default 900 KiB.
   */
  maxDeadLetterBytes?: number;
  normalize?: Partial<NormalizeOptions>;
  random?: () => number;
  /** Failed polls (warn) and a throwing onPoll (error). Default: not logged. */
  log?: IntakeLogger;
  onPoll?: (report: PollReport) => void;
}

export interface FeedPoller {
  /** Starts every feed's schedule. */
  start(): void;
  /** Cancels timers and in-flight requests, waits for running polls to save their state. Final. */
  stop(): Promise<void>;
  /** Polls all feeds (or one) now, joining a poll already in flight. */
  pollOnce(feedUrl?: string): Promise<PollReport[]>;
}

const subscriptionSchema = z.object({
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  intervalSeconds: z.number().positive('must be positive'),
  source: z.string().min(1).optional(),
});

export class FeedPollerConfigError extends Error {
  override readonly name = 'FeedPollerConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid feed configuration: ${problems.join('; ')}`);
  }
}

/** Every problem of a feed list at once; throws FeedPollerConfigError. */
export function validateFeedSubscriptions(feeds: readonly unknown[]): FeedSubscription[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const valid: FeedSubscription[] = [];
  feeds.forEach((feed, i) => {
    const parsed = subscriptionSchema.safeParse(feed);
    if (!parsed.success) {
      problems.push(
        ...parsed.error.issues.map((issue) => `feeds[${i}].${issue.path.map(String).join('.')}: ${issue.message}`),
      );
      return;
    }
    if (seen.has(parsed.data.url)) problems.push(`feeds[${i}].url: ${redactUrl(parsed.data.url)} is listed twice`);
    seen.add(parsed.data.url);
    const subscription: FeedSubscription = { url: parsed.data.url, intervalSeconds: parsed.data.intervalSeconds };
    if (parsed.data.source !== undefined) subscription.source = parsed.data.source;
    valid.push(subscription);
  });
  if (problems.length > 0) throw new FeedPollerConfigError(problems);
  return valid;
}

export const DEFAULT_FEED_TIMEOUT_MS = 20_000;
export const DEFAULT_FEED_MAX_BYTES = 5 * 1024 * 1024;

const FEED_ACCEPT =
  'application/rss+xml, application/atom+xml, application/rdf+xml, application/feed+json, application/xml;q=0.9, text/xml;q=0.9, application/json;q=0.8, */*;q=0.5';
const PAGE_ACCEPT = 'text/html, application/xhtml+xml;q=0.9, */*;q=0.5';

export function createFeedPoller(options: FeedPollerOptions): FeedPoller {
  const feeds = validateFeedSubscriptions(options.feeds);
  const { publisher, stateStore } = options;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const log = options.log ?? noLogger;
  const stopping = new AbortController();
  const request: RequestSettings = {
    fetch: options.fetch,
    userAgent: options.userAgent ?? defaultUserAgent(),
    timeoutMs: options.timeoutMs ?? DEFAULT_FEED_TIMEOUT_MS,
    maxBytes: options.maxBytes ?? DEFAULT_FEED_MAX_BYTES,
    signal: stopping.signal,
  };
  const fetchArticlePages = options.fetchArticlePages ?? true;
  const minEntryChars = options.minEntryChars ?? 500;
  const maxBackoffMs = (options.maxBackoffSeconds ?? 6 * 3600) * 1000;
  const jitter = options.jitter ?? 0.1;
  const maxSeenGuids = options.maxSeenGuids ?? DEFAULT_MAX_SEEN_GUIDS;
  const maxEntriesPerPoll = options.maxEntriesPerPoll ?? Number.POSITIVE_INFINITY;
  if (!(maxEntriesPerPoll > 0 && (Number.isInteger(maxEntriesPerPoll) || maxEntriesPerPoll === Infinity))) {
    throw new FeedPollerConfigError([`maxEntriesPerPoll: must be a positive integer (got ${maxEntriesPerPoll})`]);
  }
  const maxDeadLetterBytes = options.maxDeadLetterBytes ?? 900 * 1024;

  const running = new Map<string, Promise<PollReport>>();
  const timers = new Map<string, NodeJS.Timeout>();
  let started = false;

  const jittered = (ms: number): number => Math.round(relativeJitter(ms, jitter, random));

  const nextDelay = (feed: FeedSubscription, failures: number, retryAfterMs?: number): number => {
    const interval = feed.intervalSeconds * 1000;
    if (failures === 0) return jittered(interval);
    const cap = Math.max(interval, maxBackoffMs);
    // interval · 2^failures: the first failure already waits twice the interval.
    const backoff = backoffCeiling(failures + 1, { baseMs: interval, capMs: cap });
    return Math.max(jittered(backoff), Math.min(retryAfterMs ?? 0, cap));
  };

  async function poll(feed: FeedSubscription): Promise<PollReport> {
    const began = now();
    const report = emptyReport(feed.url);
    const finish = (s: FeedState, error?: FeedPollError, message?: string, retryAfterMs?: number): PollReport => {
      report.failures = s.failures;
      if (error !== undefined) {
        report.outcome = 'failed';
        report.error = error;
        if (message !== undefined) report.message = message;
      }
      report.nextPollMs = nextDelay(feed, report.failures, retryAfterMs);
      report.durationMs = now() - began;
      return report;
    };

    let state: FeedState;
    try {
      state = await stateStore.get(feed.url);
    } catch (err) {
      return finish({ ...emptyFeedState(), failures: 1 }, 'state_store', errorMessage(err));
    }
    const loaded = state;
    /** Saves a changed state; a store that cannot save turns any outcome into a state_store failure. */
    const settle = async (error?: FeedPollError, message?: string, retryAfterMs?: number): Promise<PollReport> => {
      // Stopping is not the feed's fault: it keeps its failure count.
      if (error !== undefined && error !== 'stopped') state = { ...state, failures: state.failures + 1 };
      if (error === undefined && state.failures !== 0) state = { ...state, failures: 0 };
      try {
        // A quiet feed (304 after 304) costs no write.
        if (state !== loaded) await stateStore.put(feed.url, state);
      } catch (err) {
        return finish(
          { ...state, failures: state.failures + (error === undefined ? 1 : 0) },
          'state_store',
          errorMessage(err),
        );
      }
      return finish(state, error, message, retryAfterMs);
    };

    const conditional: Record<string, string> = {};
    if (state.etag !== null) conditional['if-none-match'] = state.etag;
    if (state.lastModified !== null) conditional['if-modified-since'] = state.lastModified;
    const response = await fetchLimited(feed.url, { ...request, accept: FEED_ACCEPT, headers: conditional });
    if (!response.ok) {
      if (response.status !== undefined) report.httpStatus = response.status;
      return settle(response.error, response.message, response.retryAfterMs);
    }
    report.httpStatus = response.status;
    if (response.status === 304) {
      report.outcome = 'not_modified';
      return settle();
    }

    let parsed: ParsedFeed;
    try {
      parsed = parseFeed(decodeFetchedBody(response.body, response.contentType), response.url);
    } catch (err) {
      if (!(err instanceof IntakeRejection)) throw err;
      try {
        await publisher.reject(response.body.subarray(0, maxDeadLetterBytes), err, redactUrl(feed.url));
      } catch (rejectErr) {
        return settle('publish_failed', `dead letter for the feed body failed: ${errorMessage(rejectErr)}`);
      }
      report.rejected += 1;
      return settle(err.reason === 'invalid_utf8' ? 'invalid_utf8' : 'unparseable_feed', err.message);
    }

    report.entries = parsed.entries.length;
    const seen = new Set(state.seenGuids);
    const fresh = new Map<string, FeedEntry>();
    const revised = new Map<string, { entry: FeedEntry; revision: EntryRevision }>();
    // Fingerprints of seen entries a state from before revisions were followed has none of: taken as
    // they stand, so an upgrade does not publish every current entry again.
    const adopted: Record<string, EntryRevision> = {};
    for (const entry of parsed.entries) {
      if (fresh.has(entry.guid) || revised.has(entry.guid)) continue;
      if (!seen.has(entry.guid)) {
        fresh.set(entry.guid, entry);
        continue;
      }
      const fingerprint = entryFingerprint(entry);
      const known = state.revisions?.[entry.guid];
      if (known === undefined) adopted[entry.guid] = { fingerprint, version: 1 };
      else if (known.fingerprint !== fingerprint && known.version < MAX_ENTRY_VERSIONS) {
        revised.set(entry.guid, { entry, revision: { fingerprint, version: known.version + 1 } });
      }
    }
    report.newEntries = fresh.size;
    report.revisedEntries = revised.size;
    // Feeds list the newest entry first: a capped poll takes the newest, and publishing the oldest of
    // those first keeps the stream in time order. Revisions of earlier entries come after them.
    const ordered = [...fresh.values()]
      .slice(0, maxEntriesPerPoll)
      .reverse()
      .map((entry) => ({ entry, revision: { fingerprint: entryFingerprint(entry), version: 1 } }));
    ordered.push(...[...revised.values()].slice(0, Math.max(0, maxEntriesPerPoll - ordered.length)));
    const leftOver = fresh.size + revised.size - ordered.length;
    const delivered: string[] = [];
    const revisions: Record<string, EntryRevision> = { ...adopted };
    let failure: { error: FeedPollError; message: string } | undefined;
    for (const { entry, revision } of ordered) {
      if (stopping.signal.aborted) {
        failure = { error: 'stopped', message: 'poller stopped during the poll' };
        break;
      }
      let outcome: DeliveryOutcome;
      try {
        outcome = await deliver(feed, entry, report, revision.version);
      } catch (err) {
        failure = { error: 'publish_failed', message: errorMessage(err) };
        break;
      }
      if (outcome === 'stopped') {
        failure = { error: 'stopped', message: 'poller stopped during the poll' };
        break;
      }
      if (outcome === 'delivered') {
        delivered.push(entry.guid);
        revisions[entry.guid] = revision;
      }
    }
    state = rememberGuids(state, delivered, maxSeenGuids, revisions);
    if (failure !== undefined) return settle(failure.error, failure.message);
    // Deferred and left-over entries must be offered again: keep the old validators so the next GET is not a 304.
    if (
      report.deferred === 0 &&
      leftOver === 0 &&
      (state.etag !== response.etag || state.lastModified !== response.lastModified)
    ) {
      state = { ...state, etag: response.etag, lastModified: response.lastModified };
    }
    report.outcome = 'delivered';
    return settle();
  }

  /**
   * Publishes or dead-letters one entry; throws only when the publisher itself failed. An entry too
   * short to stand alone whose page could not be fetched for a transient reason (timeout, network,
   * 408, 429, 5xx) is deferred to the next poll rather than dead-lettered as `no_text`.
   */
  async function deliver(
    feed: FeedSubscription,
    entry: FeedEntry,
    report: PollReport,
    version: number,
  ): Promise<DeliveryOutcome> {
    const original = Buffer.from(JSON.stringify(entry), 'utf8');
    let input = toArticleInput(entry, feed.source);
    // A changed text is news as of when it was seen, not as of the entry's first publication: dated
    // so, the new version supersedes the old one in answers from then on and never before.
    if (version > 1) input = { ...input, version, published_at: now() };
    let transientPageFailure = false;
    const carried = Math.max(entry.html?.length ?? 0, entry.text?.length ?? 0);
    if (fetchArticlePages && carried < minEntryChars && isHttpUrl(entry.url)) {
      report.pageFetches += 1;
      const page = await fetchLimited(entry.url, { ...request, accept: PAGE_ACCEPT, headers: {} });
      if (!page.ok && page.error === 'stopped') return 'stopped';
      if (!page.ok && page.error === 'address_refused') {
        // The feed pointed us at an internal address: refused for good, whatever text the entry has.
        const refusal = new IntakeRejection('address_refused', `${redactUrl(entry.url)}: ${page.message}`);
        await publisher.reject(original, refusal, redactUrl(feed.url));
        report.rejected += 1;
        return 'delivered';
      }
      let html: string | undefined;
      if (page.ok && page.status === 200 && isHtml(page.contentType)) {
        try {
          html = decodeFetchedBody(page.body, page.contentType);
        } catch (err) {
          if (!(err instanceof IntakeRejection)) throw err;
        }
      }
      if (html === undefined) {
        report.pageFetchFailures += 1;
        transientPageFailure = !page.ok && isTransient(page);
      } else {
        input = { ...withoutBody(input), html };
      }
    }
    let article: Article;
    try {
      article = normalizeArticle(input, now(), options.normalize);
    } catch (err) {
      if (!(err instanceof IntakeRejection)) throw err;
      if (transientPageFailure) {
        report.deferred += 1;
        return 'deferred';
      }
      await publisher.reject(original, err, redactUrl(feed.url));
      report.rejected += 1;
      return 'delivered';
    }
    await publisher.publish(article);
    report.published += 1;
    return 'delivered';
  }

  async function guardedPoll(feed: FeedSubscription): Promise<PollReport> {
    let report: PollReport;
    try {
      report = await poll(feed);
    } catch (err) {
      // A bug must not end the feed's schedule: report it and back off like any failure.
      report = {
        ...emptyReport(feed.url),
        error: 'internal',
        message: errorMessage(err),
        failures: 1,
        nextPollMs: nextDelay(feed, 1),
      };
    }
    if (report.outcome === 'failed' && report.error !== 'stopped') {
      log('warn', 'feed poll failed', {
        feed: redactUrl(feed.url),
        error: report.error,
        status: report.httpStatus,
        failures: report.failures,
        message: report.message,
        nextPollMs: Math.round(report.nextPollMs),
      });
    }
    try {
      options.onPoll?.(report);
    } catch (err) {
      log('error', 'onPoll callback threw', { feed: redactUrl(feed.url), message: errorMessage(err) });
    }
    return report;
  }

  function pollShared(feed: FeedSubscription): Promise<PollReport> {
    let inFlight = running.get(feed.url);
    if (inFlight === undefined) {
      inFlight = guardedPoll(feed).finally(() => running.delete(feed.url));
      running.set(feed.url, inFlight);
    }
    return inFlight;
  }

  function schedule(feed: FeedSubscription, delayMs: number): void {
    if (stopping.signal.aborted) return;
    const timer = setTimeout(() => {
      timers.delete(feed.url);
      void pollShared(feed).then((report) => schedule(feed, report.nextPollMs));
    }, delayMs);
    timers.set(feed.url, timer);
  }

  return {
    start() {
      if (stopping.signal.aborted) throw new Error('a stopped feed poller cannot be started again');
      if (started) return;
      started = true;
      const spreadMs = (options.startSpreadSeconds ?? 10) * 1000;
      for (const feed of feeds) schedule(feed, random() * Math.min(feed.intervalSeconds * 1000, spreadMs));
    },
    async stop() {
      stopping.abort();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...running.values()]);
    },
    async pollOnce(feedUrl) {
      const selected = feedUrl === undefined ? feeds : feeds.filter((f) => f.url === feedUrl);
      if (feedUrl !== undefined && selected.length === 0)
        throw new Error(`not a configured feed: ${redactUrl(feedUrl)}`);
      return Promise.all(selected.map((feed) => pollShared(feed)));
    },
  };
}

type DeliveryOutcome = 'delivered' | 'deferred' | 'stopped';

function emptyReport(feedUrl: string): PollReport {
  return {
    feedUrl,
    outcome: 'failed',
    entries: 0,
    newEntries: 0,
    revisedEntries: 0,
    published: 0,
    rejected: 0,
    deferred: 0,
    pageFetches: 0,
    pageFetchFailures: 0,
    failures: 0,
    nextPollMs: 0,
    durationMs: 0,
  };
}

function isTransient(failure: { error: string; status?: number }): boolean {
  if (failure.error === 'timeout' || failure.error === 'network') return true;
  const status = failure.status ?? 0;
  return status === 408 || status === 429 || status >= 500;
}

/**
 * Most versions an entry is published in: a feed that rewrites an entry on every poll (a view
 * counter, a relative date in the summary) must not flood the stream with versions.
 */
const MAX_ENTRY_VERSIONS = 5;

/** What decides that an entry's text changed: its title and body, whitespace collapsed. */
function entryFingerprint(entry: FeedEntry): string {
  const text = [entry.title ?? '', entry.text ?? '', entry.html ?? ''].join('\n').replace(/\s+/g, ' ').trim();
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

function toArticleInput(entry: FeedEntry, source: string | undefined): ArticleInput {
  const input: ArticleInput = { url: entry.url };
  if (entry.title !== undefined) input.title = entry.title;
  if (entry.text !== undefined) input.text = entry.text;
  if (entry.html !== undefined) input.html = entry.html;
  if (entry.published_at !== undefined) input.published_at = entry.published_at;
  const chosenSource = source ?? entry.source;
  if (chosenSource !== undefined) input.source = chosenSource;
  if (entry.id !== undefined) input.id = entry.id;
  if (entry.language !== undefined) input.language = entry.language;
  return input;
}

function withoutBody(input: ArticleInput): ArticleInput {
  const copy = { ...input };
  delete copy.text;
  delete copy.html;
  return copy;
}

/** A page we can extract text from; a server that names no type gets the benefit of the doubt. */
function isHtml(contentType: string | null): boolean {
  if (contentType === null) return true;
  return /^\s*(text\/html|application\/xhtml\+xml)\s*(;|$)/i.test(contentType);
}

function isHttpUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

interface RequestSettings {
  fetch: typeof globalThis.fetch;
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  /** Aborted when the poller stops. */
  signal: AbortSignal;
}

export type LimitedResponse =
  | {
      ok: true;
      /** 200–299, or 304 (with an empty body). */
      status: number;
      /** The URL after redirects. */
      url: string;
      contentType: string | null;
      etag: string | null;
      lastModified: string | null;
      body: Buffer;
    }
  | {
      ok: false;
      error: 'timeout' | 'network' | 'http_status' | 'too_large' | 'address_refused' | 'stopped';
      status?: number;
      message: string;
      retryAfterMs?: number;
    };

/**
 * One polite GET: our User-Agent, a timeout covering the body, redirects followed (by the fetch, which
 * checks every hop), and a body limit enforced while reading (a missing or lying Content-Length
 * cannot make us buffer more).
 */
export async function fetchLimited(
  url: string,
  settings: RequestSettings & { accept: string; headers: Record<string, string> },
): Promise<LimitedResponse> {
  const signal = AbortSignal.any([settings.signal, AbortSignal.timeout(settings.timeoutMs)]);
  const failure = (err: unknown): LimitedResponse => {
    if (settings.signal.aborted) return { ok: false, error: 'stopped', message: 'poller stopped' };
    const refusal = addressRefusalIn(err);
    if (refusal !== undefined) return { ok: false, error: 'address_refused', message: refusal.message };
    if (signal.aborted)
      return { ok: false, error: 'timeout', message: `no complete answer within ${settings.timeoutMs} ms` };
    return { ok: false, error: 'network', message: networkMessage(err) };
  };
  let response: Response;
  try {
    response = await settings.fetch(url, {
      method: 'GET',
      redirect: 'follow',
      signal,
      headers: { 'user-agent': settings.userAgent, accept: settings.accept, ...settings.headers },
    });
  } catch (err) {
    return failure(err);
  }
  const header = (name: string): string | null => response.headers.get(name);
  if (response.status === 304) {
    await response.body?.cancel().catch(() => undefined);
    return {
      ok: true,
      status: 304,
      url: response.url || url,
      contentType: null,
      etag: header('etag'),
      lastModified: header('last-modified'),
      body: Buffer.alloc(0),
    };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    const result: LimitedResponse = {
      ok: false,
      error: 'http_status',
      status: response.status,
      message: `HTTP ${response.status}`,
    };
    const retryAfterMs = parseRetryAfter(header('retry-after'), Date.now());
    if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs;
    return result;
  }
  const declared = Number(header('content-length'));
  if (Number.isFinite(declared) && declared > settings.maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return tooLarge(settings.maxBytes);
  }
  const chunks: Buffer[] = [];
  let length = 0;
  if (response.body !== null) {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        length += value.byteLength;
        if (length > settings.maxBytes) {
          await reader.cancel().catch(() => undefined);
          return tooLarge(settings.maxBytes);
        }
        chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      }
    } catch (err) {
      return failure(err);
    }
  }
  return {
    ok: true,
    status: response.status,
    url: response.url || url,
    contentType: header('content-type'),
    etag: header('etag'),
    lastModified: header('last-modified'),
    body: Buffer.concat(chunks, length),
  };
}

function tooLarge(maxBytes: number): LimitedResponse {
  return { ok: false, error: 'too_large', message: `body larger than ${maxBytes} bytes` };
}

/**
 * Bytes to text by the charset the server declares, or else the one the document declares in its
 * first bytes (feeds in ISO-8859-1 or windows-1252 often say so only in `<?xml … encoding=…?>`).
 * Throws `invalid_utf8` for bytes invalid in that charset.
 */
export function decodeFetchedBody(bytes: Buffer, contentType: string | null): string {
  if (contentType !== null && charsetOf(contentType) !== undefined) return decodeBody(bytes, contentType);
  const declared = documentCharset(bytes);
  return decodeBody(bytes, declared === undefined ? undefined : `text/plain; charset=${declared}`);
}

function documentCharset(bytes: Buffer): string | undefined {
  // Declarations sit in the first bytes and are ASCII in every charset that matters here.
  const head = bytes.subarray(0, 1024).toString('latin1');
  return (
    /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([\w.:-]+)["']/i.exec(head)?.[1] ??
    /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1]
  );
}

// Messages go to logs and reports; fetch names the whole URL in some (credentials included).
function networkMessage(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause;
    if (cause instanceof Error && 'code' in cause && typeof cause.code === 'string') return cause.code;
    return redactUrlsIn(err.message);
  }
  return redactUrlsIn(String(err));
}

function errorMessage(err: unknown): string {
  return redactUrlsIn(err instanceof Error ? err.message : String(err));
}

/** Logging is the caller's: pure logic writes nowhere (the commands pass streams/telemetry/logger's). */
const noLogger: IntakeLogger = () => undefined;

let cachedUserAgent: string | undefined;

/** `neon-stream/<version> (+https://github.com/neon-stream/neon-stream)`, the version from package.json. */
export function defaultUserAgent(): string {
  cachedUserAgent ??= `neon-stream/${packageVersion()} (+https://github.com/neon-stream/neon-stream)`;
  return cachedUserAgent;
}

/** Walks up from this file: the same code runs from the sources and from `dist/`. */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      try {
        const parsed = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: unknown; version?: unknown };
        if (parsed.name === 'neon-stream' && typeof parsed.version === 'string') return parsed.version;
      } catch {
        // not ours or unreadable: keep looking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return '0.0.0';
    dir = parent;
  }
}

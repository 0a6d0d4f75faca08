/**
 * What a feed poller remembers per feed across restarts: the validators for conditional GET, the
 * guids already delivered (bounded), and the consecutive failures that drive its backoff.
 *
 * The file store writes one JSON file per feed (named by a hash of the feed URL) through a temporary
 * file and a rename, so a crash leaves either the old state or the new one, never half of each. A
 * file that cannot be read back as a state (hand-edited, from a future version) counts as no state:
 * the feed's current entries are delivered again, which downstream absorbs because article ids are
 * deterministic.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

export const DEFAULT_MAX_SEEN_GUIDS = 5000;

export interface FeedState {
  etag: string | null;
  lastModified: string | null;
  /** Guids already published or dead-lettered, oldest first. */
  seenGuids: string[];
  /** Consecutive failed polls; 0 after a success. */
  failures: number;
  /**
   * Per seen guid, a fingerprint of the text last published for it and that article version: an
   * entry whose text changed under the same guid is published again as the next version. Absent
   * in states written before revisions were followed.
   */
  revisions?: Record<string, EntryRevision>;
}

export interface EntryRevision {
  fingerprint: string;
  version: number;
}

export interface FeedStateStore {
  /** The feed's state, or an empty one for a feed never polled. */
  get(feedUrl: string): Promise<FeedState>;
  put(feedUrl: string, state: FeedState): Promise<void>;
}

export function emptyFeedState(): FeedState {
  return { etag: null, lastModified: null, seenGuids: [], failures: 0 };
}

/** The state with `guids` appended (moved to the end if already present), keeping the newest `max`. */
export function rememberGuids(
  state: FeedState,
  guids: readonly string[],
  max = DEFAULT_MAX_SEEN_GUIDS,
  revisions: Readonly<Record<string, EntryRevision>> = {},
): FeedState {
  if (guids.length === 0 && Object.keys(revisions).length === 0) return state;
  const added = new Set(guids);
  const seenGuids = state.seenGuids.filter((g) => !added.has(g));
  seenGuids.push(...added);
  const kept = seenGuids.length > max ? seenGuids.slice(seenGuids.length - max) : seenGuids;
  // Revisions are kept for remembered guids only, so they are bounded with them.
  const merged = { ...state.revisions, ...revisions };
  const keptRevisions: Record<string, EntryRevision> = {};
  for (const guid of kept) if (merged[guid] !== undefined) keptRevisions[guid] = merged[guid];
  return { ...state, seenGuids: kept, revisions: keptRevisions };
}

function copyState(state: FeedState): FeedState {
  return {
    ...state,
    seenGuids: [...state.seenGuids],
    ...(state.revisions === undefined ? {} : { revisions: { ...state.revisions } }),
  };
}

/** For tests and for pollers that may re-deliver a feed's current entries after a restart. */
export class MemoryFeedStateStore implements FeedStateStore {
  private readonly states = new Map<string, FeedState>();

  async get(feedUrl: string): Promise<FeedState> {
    const state = this.states.get(feedUrl);
    return state === undefined ? emptyFeedState() : copyState(state);
  }

  async put(feedUrl: string, state: FeedState): Promise<void> {
    this.states.set(feedUrl, copyState(state));
  }
}

const storedStateSchema = z.object({
  version: z.literal(1),
  feedUrl: z.string(),
  etag: z.string().nullable(),
  lastModified: z.string().nullable(),
  seenGuids: z.array(z.string()),
  failures: z.number().int().nonnegative(),
  revisions: z
    .record(z.string(), z.object({ fingerprint: z.string(), version: z.number().int().positive() }))
    .optional(),
});

export interface JsonFileFeedStateStoreOptions {
  /** Told when a state file exists but cannot be used (it is then treated as absent). */
  onUnreadable?: (feedUrl: string, path: string, problem: string) => void;
}

export class JsonFileFeedStateStore implements FeedStateStore {
  constructor(
    readonly dir: string,
    private readonly options: JsonFileFeedStateStoreOptions = {},
  ) {}

  /** The file holding one feed's state: URLs are not file names, their hashes are. */
  pathFor(feedUrl: string): string {
    return join(this.dir, `feed-${createHash('sha256').update(feedUrl).digest('hex').slice(0, 32)}.json`);
  }

  async get(feedUrl: string): Promise<FeedState> {
    const path = this.pathFor(feedUrl);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if (isMissingFile(err)) return emptyFeedState();
      throw err;
    }
    let problem: string;
    try {
      const parsed = storedStateSchema.safeParse(JSON.parse(text));
      if (parsed.success && parsed.data.feedUrl === feedUrl) {
        const { etag, lastModified, seenGuids, failures, revisions } = parsed.data;
        return { etag, lastModified, seenGuids, failures, ...(revisions === undefined ? {} : { revisions }) };
      }
      problem = parsed.success ? 'file belongs to another feed URL' : 'not a feed state';
    } catch {
      problem = 'not JSON';
    }
    this.options.onUnreadable?.(feedUrl, path, problem);
    return emptyFeedState();
  }

  async put(feedUrl: string, state: FeedState): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const path = this.pathFor(feedUrl);
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    const body = JSON.stringify({ version: 1, feedUrl, ...state });
    try {
      await writeFile(temporary, body, { encoding: 'utf8', flush: true });
      await rename(temporary, path);
    } catch (err) {
      await rm(temporary, { force: true });
      throw err;
    }
  }
}

function isMissingFile(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === 'ENOENT';
}

import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  emptyFeedState,
  JsonFileFeedStateStore,
  MemoryFeedStateStore,
  rememberGuids,
  type FeedState,
  type FeedStateStore,
} from '../../streams/feeds/feed-state-store.js';

const FEED = 'https://news.example.org/rss.xml';
const OTHER = 'https://news.example.org/atom.xml';

const sample: FeedState = {
  etag: '"abc"',
  lastModified: 'Wed, 21 Oct 2015 07:28:00 GMT',
  seenGuids: ['g1', 'g2'],
  failures: 2,
};

describe('rememberGuids', () => {
  it('appends new guids, moves repeated ones to the end and keeps the newest max', () => {
    const state = { ...emptyFeedState(), seenGuids: ['a', 'b', 'c'] };
    expect(rememberGuids(state, ['b', 'd'], 10).seenGuids).toEqual(['a', 'c', 'b', 'd']);
    expect(rememberGuids(state, ['d', 'e'], 3).seenGuids).toEqual(['c', 'd', 'e']);
    expect(rememberGuids(state, [], 3)).toBe(state);
  });

  it('keeps the revisions of remembered guids only, so they are bounded with them', () => {
    const state = rememberGuids(emptyFeedState(), ['a', 'b'], 10, {
      a: { fingerprint: 'fa', version: 1 },
      b: { fingerprint: 'fb', version: 1 },
    });
    const next = rememberGuids(state, ['c'], 2, { b: { fingerprint: 'fb2', version: 2 } });
    expect(next.seenGuids).toEqual(['b', 'c']);
    expect(next.revisions).toEqual({ b: { fingerprint: 'fb2', version: 2 } });
  });

  it('never exceeds max, never holds a guid twice, and always holds the guids just added', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 3 }), { maxLength: 40 }),
        fc.array(fc.string({ maxLength: 3 }), { maxLength: 20 }),
        fc.integer({ min: 1, max: 30 }),
        (before, added, max) => {
          const start = rememberGuids(emptyFeedState(), before, max);
          const after = rememberGuids(start, added, max).seenGuids;
          expect(after.length).toBeLessThanOrEqual(max);
          expect(new Set(after).size).toBe(after.length);
          const addedUnique = [...new Set(added)];
          expect(after.slice(Math.max(0, after.length - addedUnique.length))).toEqual(addedUnique.slice(-max));
        },
      ),
    );
  });
});

function storeContract(name: string, make: () => Promise<{ store: FeedStateStore; cleanup: () => Promise<void> }>) {
  describe(name, () => {
    let store: FeedStateStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(async () => {
      await cleanup();
    });

    it('gives an empty state for an unknown feed', async () => {
      expect(await store.get(FEED)).toEqual(emptyFeedState());
    });

    it('returns what was put, per feed', async () => {
      await store.put(FEED, sample);
      await store.put(OTHER, { ...sample, etag: null, seenGuids: ['x'] });
      expect(await store.get(FEED)).toEqual(sample);
      expect(await store.get(OTHER)).toEqual({ ...sample, etag: null, seenGuids: ['x'] });
    });

    it('is not changed by mutating a state after put or get', async () => {
      const state = { ...sample, seenGuids: [...sample.seenGuids] };
      await store.put(FEED, state);
      state.seenGuids.push('later');
      (await store.get(FEED)).seenGuids.push('mutated');
      expect((await store.get(FEED)).seenGuids).toEqual(['g1', 'g2']);
    });
  });
}

storeContract('MemoryFeedStateStore', async () => ({ store: new MemoryFeedStateStore(), cleanup: async () => {} }));

storeContract('JsonFileFeedStateStore', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'neon-feedstate-'));
  return {
    store: new JsonFileFeedStateStore(join(dir, 'nested', 'state')),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('JsonFileFeedStateStore on disk', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'neon-feedstate-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('survives a restart: a new store on the same folder reads the state back', async () => {
    await new JsonFileFeedStateStore(dir).put(FEED, sample);
    expect(await new JsonFileFeedStateStore(dir).get(FEED)).toEqual(sample);
    const revised = { ...sample, revisions: { g2: { fingerprint: 'f2', version: 3 } } };
    await new JsonFileFeedStateStore(dir).put(FEED, revised);
    expect(await new JsonFileFeedStateStore(dir).get(FEED)).toEqual(revised);
  });

  it('writes one file per feed and leaves no temporary files behind', async () => {
    const store = new JsonFileFeedStateStore(dir);
    await Promise.all([store.put(FEED, sample), store.put(OTHER, sample), store.put(FEED, { ...sample, failures: 0 })]);
    const files = await readdir(dir);
    expect(files.sort()).toEqual(
      [store.pathFor(FEED), store.pathFor(OTHER)].map((p) => p.slice(dir.length + 1)).sort(),
    );
    expect(files.every((f) => /^feed-[0-9a-f]{32}\.json$/.test(f))).toBe(true);
    expect(JSON.parse(await readFile(store.pathFor(FEED), 'utf8'))).toMatchObject({ version: 1, feedUrl: FEED });
  });

  it.each([
    ['not JSON', '{"version": 1, "feedUrl": '],
    ['not a feed state', JSON.stringify({ version: 1, feedUrl: FEED, etag: 5 })],
    ['file belongs to another feed URL', JSON.stringify({ version: 1, feedUrl: OTHER, ...sample })],
  ])('treats a file that is %s as no state, and says so', async (problem, content) => {
    const told: string[] = [];
    const store = new JsonFileFeedStateStore(dir, { onUnreadable: (_url, _path, p) => told.push(p) });
    await writeFile(store.pathFor(FEED), content);
    expect(await store.get(FEED)).toEqual(emptyFeedState());
    expect(told).toEqual([problem]);
  });

  it('fails put when the folder cannot be created, and get does not pretend the state is empty', async () => {
    const blocker = join(dir, 'file');
    await writeFile(blocker, 'x');
    const store = new JsonFileFeedStateStore(join(blocker, 'sub'));
    await expect(store.put(FEED, sample)).rejects.toThrow();
    await expect(store.get(FEED)).rejects.toThrow(/ENOTDIR/);
  });
});

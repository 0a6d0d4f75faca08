import { describe, expect, it } from 'vitest';
import {
  DedupeError,
  NearDuplicateFilter,
  mentionsOf,
  mergeProvenance,
  resolveDedupeOptions,
  type DedupeState,
} from '../../processors/dedupe/drop-near-duplicates.js';
import type { Chunk, Provenance } from '../../schemas/records.generated.js';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.UTC(2024, 4, 10, 8);

const STORY =
  'The harbour authority closed the northern pier on Tuesday after inspectors found cracks in two of ' +
  'its supporting columns. Ferry services to the islands will leave from the southern terminal until ' +
  'repairs are finished, which the authority expects to take about six weeks. Local traders said the ' +
  'closure came at the worst possible time, just before the summer season begins.';

const OTHER_STORY =
  'A regional orchestra announced a free open-air concert in the botanical gardens next month, with a ' +
  'programme of film music chosen by listeners in an online vote that drew more than four thousand replies.';

function provenance(articleId: string, publishedAt: number): Provenance {
  return {
    article_id: articleId,
    url: `https://news.example/${articleId}`,
    source: 'news.example',
    published_at: publishedAt,
  };
}

function chunk(articleId: string, text: string, t: number, index = 0): Chunk {
  return {
    id: `${articleId}:v1:${index}`,
    article_id: articleId,
    index,
    text,
    title: '',
    marked_text: text,
    entity_ids: ['harbour-authority', 'islands'],
    entities: [
      { id: 'harbour-authority', name: 'Harbour Authority', type: 'ORGANIZATION' },
      { id: 'islands', name: 'Islands', type: 'LOCATION' },
    ],
    t,
    provenance: [provenance(articleId, t)],
  };
}

/** The story as another outlet re-filed it: a new sentence at the end, otherwise the same. */
const SYNDICATED = `${STORY} A spokesperson declined to comment further.`;

describe('NearDuplicateFilter.offer', () => {
  it('lets a first chunk through with one mention per entity', () => {
    const filter = new NearDuplicateFilter();
    const result = filter.offer(chunk('a', STORY, T0));
    expect(result.kind).toBe('unique');
    if (result.kind !== 'unique') return;
    expect(result.chunk.id).toBe('a:v1:0');
    expect(result.mentions).toEqual([
      {
        entity_id: 'harbour-authority',
        name: 'Harbour Authority',
        entity_type: 'ORGANIZATION',
        t: T0,
        chunk_id: 'a:v1:0',
        article_id: 'a',
        url: 'https://news.example/a',
      },
      {
        entity_id: 'islands',
        name: 'Islands',
        entity_type: 'LOCATION',
        t: T0,
        chunk_id: 'a:v1:0',
        article_id: 'a',
        url: 'https://news.example/a',
      },
    ]);
    expect(filter.offer(chunk('b', OTHER_STORY, T0)).kind).toBe('unique');
    expect(filter.size()).toEqual({ chunks: 2, bandKeys: 60 });
  });

  it('merges a syndicated copy into the survivor and keeps accumulating', () => {
    const filter = new NearDuplicateFilter();
    filter.offer(chunk('a', STORY, T0));
    const second = filter.offer(chunk('b', SYNDICATED, T0 + 2 * 3600_000));
    expect(second.kind).toBe('duplicate');
    if (second.kind !== 'duplicate') return;
    expect(second.of).toBe('a:v1:0');
    expect(second.similarity).toBeGreaterThan(0.8);
    expect(second.similarity).toBeLessThan(1);
    expect(second.survivor.text).toBe(STORY);
    expect(second.survivor.provenance.map((p) => p.article_id)).toEqual(['a', 'b']);

    // Published before the survivor, arriving later: own article stays first, the rest by date.
    const third = filter.offer(chunk('c', STORY, T0 - DAY));
    expect(third.kind).toBe('duplicate');
    if (third.kind !== 'duplicate') return;
    expect(third.survivor.provenance.map((p) => p.article_id)).toEqual(['a', 'c', 'b']);
    expect(third.survivor.provenance.map((p) => p.published_at)).toEqual([T0, T0 - DAY, T0 + 2 * 3600_000]);
    // Duplicates are not held themselves.
    expect(filter.size().chunks).toBe(1);
  });

  it('does not let a returned survivor change with later merges', () => {
    const filter = new NearDuplicateFilter();
    filter.offer(chunk('a', STORY, T0));
    const first = filter.offer(chunk('b', STORY, T0));
    filter.offer(chunk('c', STORY, T0));
    if (first.kind !== 'duplicate') throw new Error('expected a duplicate');
    expect(first.survivor.provenance).toHaveLength(2);
  });

  it('is replay-safe: a unique chunk offered again is replayed, not a duplicate of itself', () => {
    const filter = new NearDuplicateFilter();
    const original = chunk('a', STORY, T0);
    const first = filter.offer(original);
    filter.offer(chunk('b', STORY, T0 + 1000));
    const again = filter.offer(original);
    expect(again.kind).toBe('replayed');
    if (again.kind !== 'replayed' || first.kind !== 'unique') return;
    expect(again.mentions).toEqual(first.mentions);
    expect(again.chunk.text).toBe(STORY);
    // The replay carries the provenance merged so far, so re-emitting it loses nothing.
    expect(again.chunk.provenance.map((p) => p.article_id)).toEqual(['a', 'b']);
  });

  it('merges a replayed duplicate only once', () => {
    const filter = new NearDuplicateFilter();
    filter.offer(chunk('a', STORY, T0));
    const copy = chunk('b', STORY, T0 + 1000);
    const first = filter.offer(copy);
    const second = filter.offer(copy);
    expect(second).toEqual(first);
    if (second.kind === 'duplicate') expect(second.survivor.provenance).toHaveLength(2);
  });

  it('never calls two chunks of one article duplicates', () => {
    const filter = new NearDuplicateFilter();
    expect(filter.offer(chunk('a', STORY, T0, 0)).kind).toBe('unique');
    expect(filter.offer(chunk('a', STORY, T0, 1)).kind).toBe('unique');
  });

  it('forgets survivors that fell out of the window', () => {
    const filter = new NearDuplicateFilter({ windowMs: 7 * DAY });
    filter.offer(chunk('a', STORY, T0));
    expect(filter.offer(chunk('b', STORY, T0 + 8 * DAY)).kind).toBe('unique');
    expect(filter.size().chunks).toBe(1);
  });

  it('decides a chunk older than the window unique without holding it, every time', () => {
    const filter = new NearDuplicateFilter({ windowMs: 7 * DAY });
    filter.offer(chunk('a', OTHER_STORY, T0 + 30 * DAY));
    const late = chunk('b', STORY, T0);
    expect(filter.offer(late).kind).toBe('unique');
    expect(filter.offer(late).kind).toBe('unique');
    expect(filter.size().chunks).toBe(1);
  });

  it('writes nothing for a chunk older than the window that it decided before, survivor or duplicate', () => {
    const filter = new NearDuplicateFilter({ windowMs: 7 * DAY });
    const survivor = chunk('a', STORY, T0);
    const copy = chunk('b', SYNDICATED, T0 + 3600_000);
    filter.offer(survivor);
    expect(filter.offer(copy).kind).toBe('duplicate');
    filter.offer(chunk('z', OTHER_STORY, T0 + 10 * DAY)); // the window moves on: the survivor is evicted
    expect(filter.offer(survivor)).toEqual({ kind: 'seen', was: 'survivor' });
    expect(filter.offer(copy)).toEqual({ kind: 'seen', was: 'duplicate' });
    // Remembered for four windows of event time, then such a chunk is a late one again.
    filter.offer(chunk('y', OTHER_STORY, T0 + 40 * DAY));
    expect(filter.offer(copy).kind).toBe('unique');
  });

  it('decides every chunk once when each comes twice, the second copies after the window has moved on', () => {
    // Twenty days of a story a day, each re-filed by a wire the same day: the first run's order,
    // then the whole stream again (a replay's own upstream, re-reading its topic from the start).
    const story = (d: number) => Array.from({ length: 40 }, (_, i) => `word${d}x${i}`).join(' ');
    const days = Array.from({ length: 20 }, (_, d) => [
      chunk(`s${d}`, story(d), T0 + d * DAY),
      chunk(`w${d}`, `${story(d)} wire copy.`, T0 + d * DAY + 3600_000),
    ]).flat();
    const once = new NearDuplicateFilter({ windowMs: 7 * DAY });
    const firstRun = days.map((c) => once.offer(c).kind);
    expect(firstRun).toEqual(days.map((_, i) => (i % 2 === 0 ? 'unique' : 'duplicate')));
    const replay = new NearDuplicateFilter({ windowMs: 7 * DAY });
    const decided = [...days, ...days].map((c) => replay.offer(c));
    expect(decided.slice(0, days.length).map((d) => d.kind)).toEqual(firstRun);
    // The second copies: nothing new is unique, no survivor is written back with fewer sources.
    for (const [i, d] of decided.slice(days.length).entries()) {
      expect(d.kind, days[i]!.id).not.toBe('unique');
      if (d.kind === 'replayed') expect(d.chunk.provenance.length).toBeGreaterThan(1);
    }
  });

  it('uses character trigrams when asked', () => {
    const filter = new NearDuplicateFilter({ shingle: 'char3' });
    filter.offer(chunk('a', STORY, T0));
    const result = filter.offer(chunk('b', STORY.replace(/,/g, ''), T0));
    expect(result.kind).toBe('duplicate');
  });
});

describe('restarts', () => {
  it('rebuilds from the unique chunks (restore) with their merged provenance', () => {
    const before = new NearDuplicateFilter();
    before.offer(chunk('a', STORY, T0));
    const merged = before.offer(chunk('b', STORY, T0 + 1000));
    if (merged.kind !== 'duplicate') throw new Error('expected a duplicate');

    const after = new NearDuplicateFilter();
    after.restore(chunk('a', STORY, T0));
    after.restore(merged.survivor);
    after.restore(merged.survivor);
    expect(after.size().chunks).toBe(1);
    const next = after.offer(chunk('c', STORY, T0 + 2000));
    expect(next.kind).toBe('duplicate');
    if (next.kind === 'duplicate') expect(next.survivor.provenance.map((p) => p.article_id)).toEqual(['a', 'b', 'c']);
  });

  it('round-trips a JSON snapshot and decides the same afterwards', () => {
    const filter = new NearDuplicateFilter({ windowMs: 3 * DAY });
    filter.offer(chunk('old', OTHER_STORY, T0 - 10 * DAY));
    filter.offer(chunk('a', STORY, T0));
    filter.offer(chunk('b', STORY, T0 + 1000));
    const state = JSON.parse(JSON.stringify(filter.exportState())) as DedupeState;
    expect(state.chunks.map((c) => c.id)).toEqual(['a:v1:0']);

    const restored = NearDuplicateFilter.fromState(state);
    expect(restored.options).toEqual(filter.options);
    expect(restored.size()).toEqual(filter.size());
    const copy = chunk('c', STORY, T0 + 2000);
    expect(restored.offer(copy)).toEqual(filter.offer(copy));
    expect(restored.offer(chunk('a', STORY, T0)).kind).toBe('replayed');
  });

  it('refuses a snapshot it does not know', () => {
    const state = { ...new NearDuplicateFilter().exportState(), format: 'something-else' } as unknown as DedupeState;
    expect(() => NearDuplicateFilter.fromState(state)).toThrow(DedupeError);
  });
});

describe('options', () => {
  it('defaults to threshold 0.5, 7 days, 30 bands × 3 rows, word trigrams', () => {
    expect(resolveDedupeOptions()).toEqual({
      threshold: 0.5,
      windowMs: 7 * DAY,
      numHashes: 90,
      bands: 30,
      shingle: 'word3',
    });
    expect(resolveDedupeOptions({ threshold: 0.8 }).numHashes).toBeLessThan(90);
    expect(resolveDedupeOptions({ numHashes: 128, bands: 32 })).toMatchObject({ numHashes: 128, bands: 32 });
  });

  it('lists every problem at once', () => {
    try {
      resolveDedupeOptions({ threshold: 0, windowMs: -1, numHashes: 100, bands: 30 });
      expect.fail('expected a DedupeError');
    } catch (error) {
      expect(error).toBeInstanceOf(DedupeError);
      const e = error as DedupeError;
      expect(e.code).toBe('invalid_options');
      expect(e.problems).toHaveLength(3);
    }
    expect(() => resolveDedupeOptions({ bands: 20 })).toThrow(/give both or neither/);
  });
});

describe('mentionsOf and mergeProvenance', () => {
  it('falls back to the id as name for chunks written without entities', () => {
    const old = { ...chunk('a', STORY, T0), entities: [] };
    expect(mentionsOf(old).map((m) => [m.entity_id, m.name, m.entity_type])).toEqual([
      ['harbour-authority', 'harbour-authority', 'OTHER'],
      ['islands', 'islands', 'OTHER'],
    ]);
  });

  it('keeps each article once, own first, the others by date', () => {
    const merged = mergeProvenance(
      [provenance('own', 50), provenance('x', 30)],
      [provenance('y', 10), provenance('x', 30), provenance('own', 50), provenance('z', 40)],
    );
    expect(merged.map((p) => p.article_id)).toEqual(['own', 'y', 'x', 'z']);
  });
});

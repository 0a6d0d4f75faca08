import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IntakeRejection, type ArticleInput } from '../../processors/intake/article-input.js';
import { readJsonlArticles } from '../../streams/archives/read-jsonl-articles.js';
import { replayArticles, ReplayTooLargeError, type ReplayItem } from '../../processors/intake/replay-articles.js';
import { MemoryPublisher } from './intake-memory-publisher.js';

const BODY =
  'The city council approved the new harbour plan on Tuesday after a long debate about costs, ' +
  'jobs and the future of the old fish market on the waterfront.';

function input(slug: string, publishedAt: string): ArticleInput {
  return {
    url: `https://news.example.org/${slug}`,
    title: `Story ${slug}`,
    text: BODY,
    published_at: publishedAt,
    source: 'Example News',
  };
}

function item(slug: string, publishedAt: string): ReplayItem {
  const value = input(slug, publishedAt);
  return { raw: Buffer.from(JSON.stringify(value)), input: value };
}

/** A clock that only moves when the replay sleeps, and a log of the sleeps. */
function virtualTime(start = Date.UTC(2030, 0, 1)) {
  let t = start;
  const sleeps: number[] = [];
  return {
    now: () => t,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      t += ms;
    },
    sleeps,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe('replayArticles', () => {
  it('publishes in publication-time order, using the time normalisation gives each article', async () => {
    const publisher = new MemoryPublisher();
    const items = [
      item('c', '2022-06-17T12:00:00Z'),
      item('a', '2022/06/15'), // a day only: normalised to that day, so it still sorts first
      item('b', '2022-06-16T08:30:00+02:00'),
    ];
    const report = await replayArticles(items, { publisher });
    expect(publisher.published.map((a) => a.title)).toEqual(['Story a', 'Story b', 'Story c']);
    const times = publisher.published.map((a) => a.published_at);
    expect(times).toEqual([...times].sort((x, y) => x - y));
    expect(report).toMatchObject({ read: 3, published: 3, rejected: {}, aborted: false });
    expect(report.firstPublishedAt).toBe(times[0]);
    expect(report.lastPublishedAt).toBe(Date.parse('2022-06-17T12:00:00Z'));
  });

  it('replays an archive from before 1990 (a 1987 newswire), down to the earliest date it is given', async () => {
    const publisher = new MemoryPublisher();
    const items = [item('wire', '1987-02-26T15:01:01Z'), item('older', '1889-05-05'), item('unset', '1970-01-01')];
    const report = await replayArticles(items, { publisher });
    expect(publisher.published.map((a) => a.title)).toEqual(['Story wire']);
    expect(report.rejected).toEqual({ impossible_date: 2 });
    const further = new MemoryPublisher();
    await replayArticles(items, { publisher: further, normalize: { earliestPublishTime: Date.UTC(1880, 0, 1) } });
    expect(further.published.map((a) => a.title)).toEqual(['Story older', 'Story wire']);
  });

  it('keeps input order among articles published at the same instant', async () => {
    const publisher = new MemoryPublisher();
    const same = '2022-06-15T10:00:00Z';
    await replayArticles([item('x', same), item('y', same), item('w', '2022-06-14T10:00:00Z'), item('z', same)], {
      publisher,
    });
    expect(publisher.published.map((a) => a.title)).toEqual(['Story w', 'Story x', 'Story y', 'Story z']);
  });

  it('dead-letters invalid items with their bytes and origin without blocking the valid ones', async () => {
    const publisher = new MemoryPublisher();
    const undated: ArticleInput = { url: 'https://news.example.org/undated', title: 'Undated', text: BODY };
    const items: ReplayItem[] = [
      item('ok', '2022-06-15T10:00:00Z'),
      { raw: Buffer.from(JSON.stringify(undated)), input: undated, origin: 'docs/x.jsonl.gz:4#2' },
      { raw: Buffer.from('{oops'), error: new IntakeRejection('invalid_json', 'line 3: bad'), line: 3 },
      { raw: Buffer.from('{}'), input: { url: 'ftp://nope', text: BODY, published_at: '2022-06-15' }, line: 9 },
    ];
    const report = await replayArticles(items, { publisher, origin: 'file.jsonl' });
    expect(publisher.published.map((a) => a.title)).toEqual(['Story ok']);
    expect(publisher.rejected.map((r) => [r.rejection.reason, r.origin, r.original.toString()])).toEqual([
      ['missing_date', 'docs/x.jsonl.gz:4#2', JSON.stringify(undated)],
      ['invalid_json', 'file.jsonl:3', '{oops'],
      ['invalid_url', 'file.jsonl:9', '{}'],
    ]);
    expect(report.rejected).toEqual({ missing_date: 1, invalid_json: 1, invalid_url: 1 });
    expect(report.published).toBe(1);
  });

  it('paces emissions by (published_i − published_0) / speed on a virtual clock', async () => {
    const clock = virtualTime();
    const publisher = new MemoryPublisher();
    const emittedAt: number[] = [];
    publisher.onPublish = () => emittedAt.push(clock.now());
    const start = clock.now();
    const report = await replayArticles(
      [
        item('t0', '2022-06-15T10:00:00Z'),
        item('t2h', '2022-06-15T12:00:00Z'),
        item('t1h', '2022-06-15T11:00:00Z'),
        item('t2h-bis', '2022-06-15T12:00:00Z'),
      ],
      { publisher, speed: 3600, now: clock.now, sleep: clock.sleep },
    );
    // One hour of publication time per second: 0 s, 1 s, 2 s, 2 s.
    expect(emittedAt.map((t) => t - start)).toEqual([0, 1000, 2000, 2000]);
    expect(clock.sleeps).toEqual([1000, 1000]);
    expect(report.durationMs).toBe(2000);
  });

  it('does not drift: time spent publishing is subtracted from the next wait', async () => {
    const clock = virtualTime();
    const publisher = new MemoryPublisher();
    publisher.onPublish = () => clock.advance(300); // each publish takes 300 ms
    await replayArticles(
      [
        item('a', '2022-06-15T10:00:00Z'),
        item('b', '2022-06-15T10:00:01Z'),
        item('c', '2022-06-15T10:00:02Z'),
        item('d', '2022-06-15T10:00:02.100Z'),
      ],
      { publisher, speed: 1, now: clock.now, sleep: clock.sleep },
    );
    // Due at 0, 1000, 2000, 2100 ms; publishing ends at 300, 1300, 2300 — so d is late and goes at once.
    expect(clock.sleeps).toEqual([700, 700]);
  });

  it('replays as fast as possible without speed (never sleeps)', async () => {
    const clock = virtualTime();
    await replayArticles([item('a', '2022-06-15T10:00:00Z'), item('b', '2022-06-20T10:00:00Z')], {
      publisher: new MemoryPublisher(),
      now: clock.now,
      sleep: clock.sleep,
    });
    expect(clock.sleeps).toEqual([]);
  });

  it('reads at most limit items', async () => {
    const publisher = new MemoryPublisher();
    let pulled = 0;
    function* many(): Generator<ReplayItem> {
      for (let i = 0; i < 100; i += 1) {
        pulled += 1;
        yield item(`n${i}`, `2022-06-15T10:${String(59 - (i % 60)).padStart(2, '0')}:00Z`);
      }
    }
    const report = await replayArticles(many(), { publisher, limit: 5 });
    expect(report.read).toBe(5);
    expect(publisher.published.map((a) => a.title)).toEqual([
      'Story n4',
      'Story n3',
      'Story n2',
      'Story n1',
      'Story n0',
    ]);
    expect(pulled).toBeLessThanOrEqual(6);
  });

  it('refuses more than maxItems before publishing or dead-lettering anything', async () => {
    const publisher = new MemoryPublisher();
    const items = [
      item('a', '2022-06-15'),
      { raw: Buffer.from('x'), error: new IntakeRejection('invalid_json', 'x') },
      item('b', '2022-06-16'),
    ];
    await expect(replayArticles(items, { publisher, maxItems: 2 })).rejects.toBeInstanceOf(ReplayTooLargeError);
    expect(publisher.published).toEqual([]);
    expect(publisher.rejected).toEqual([]);
  });

  it('propagates a publisher failure (at-least-once: a re-run publishes the same ids again)', async () => {
    const publisher = new MemoryPublisher();
    const items = [item('a', '2022-06-15'), item('b', '2022-06-16')];
    publisher.failNext();
    await expect(replayArticles(items, { publisher })).rejects.toThrow('publisher unavailable');
    const rerun = new MemoryPublisher();
    await replayArticles(items, { publisher: rerun });
    const again = new MemoryPublisher();
    await replayArticles(items, { publisher: again });
    expect(again.published.map((a) => a.id)).toEqual(rerun.published.map((a) => a.id));
  });

  it('stops between emissions when the signal aborts, and says so', async () => {
    const clock = virtualTime();
    const controller = new AbortController();
    const publisher = new MemoryPublisher();
    publisher.onPublish = () => {
      if (publisher.published.length === 1) controller.abort();
    };
    const progress: number[] = [];
    const report = await replayArticles([item('a', '2022-06-15'), item('b', '2022-06-16'), item('c', '2022-06-17')], {
      publisher,
      now: clock.now,
      sleep: clock.sleep,
      speed: 86_400,
      signal: controller.signal,
      onProgress: (p) => progress.push(p.published * 10 + p.total),
    });
    expect(report).toMatchObject({ published: 2, aborted: true });
    expect(progress).toEqual([13, 23]);
  });

  it('refuses a speed that is not a positive number', async () => {
    await expect(replayArticles([], { publisher: new MemoryPublisher(), speed: 0 })).rejects.toThrow(RangeError);
  });

  it('replays a JSONL stream end to end, bad lines included', async () => {
    const lines = [
      JSON.stringify(input('late', '2022-06-17T00:00:00Z')),
      'nope',
      JSON.stringify(input('early', '2022-06-01T00:00:00Z')),
    ];
    const publisher = new MemoryPublisher();
    const report = await replayArticles(readJsonlArticles(Readable.from([Buffer.from(lines.join('\n'))])), {
      publisher,
      origin: 'stdin',
    });
    expect(publisher.published.map((a) => a.title)).toEqual(['Story early', 'Story late']);
    expect(publisher.rejected.map((r) => [r.rejection.reason, r.origin])).toEqual([['invalid_json', 'stdin:2']]);
    expect(report.read).toBe(3);
  });

  it('emits every valid article exactly once, in non-decreasing time, whatever the input order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 25 }), async (minutes) => {
        const publisher = new MemoryPublisher();
        const base = Date.UTC(2022, 5, 1);
        const items = minutes.map((m, i) => item(`p${i}`, new Date(base + m * 60_000).toISOString()));
        await replayArticles(items, { publisher });
        const times = publisher.published.map((a) => a.published_at);
        expect(times).toEqual(minutes.map((m) => base + m * 60_000).sort((x, y) => x - y));
        expect(new Set(publisher.published.map((a) => a.id)).size).toBe(minutes.length);
      }),
      { numRuns: 30 },
    );
  });
});

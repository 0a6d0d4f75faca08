import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import {
  EARLIEST_PUBLISH_TIME,
  EARLIEST_REPLAY_PUBLISH_TIME,
  checkPublishTime,
  parsePublishedAt,
  publishTimeCandidates,
  publishTimeFromHtml,
  publishTimeFromUrl,
  type PageDocument,
} from '../../processors/intake/publish-time.js';
import { reasonOf } from './intake-rejections.js';

const NOW = Date.UTC(2024, 0, 15, 12, 0, 0);
const HOUR = 60 * 60 * 1000;
const at = { now: NOW };

function page(head: string, body = ''): PageDocument {
  const html = `<!DOCTYPE html><html><head>${head}</head><body>${body}</body></html>`;
  return (parseHTML(html) as unknown as { document: PageDocument }).document;
}

describe('parsePublishedAt', () => {
  it('reads ISO 8601 with a zone', () => {
    expect(parsePublishedAt('2023-08-06T10:15:30Z', at)).toBe(Date.UTC(2023, 7, 6, 10, 15, 30));
    expect(parsePublishedAt('2023-08-06T10:15:30+02:00', at)).toBe(Date.UTC(2023, 7, 6, 8, 15, 30));
    expect(parsePublishedAt('2023-08-06T10:15-0530', at)).toBe(Date.UTC(2023, 7, 6, 15, 45));
    expect(parsePublishedAt('2023-08-06T10:15:30.250Z', at)).toBe(Date.UTC(2023, 7, 6, 10, 15, 30, 250));
    expect(parsePublishedAt('20230806T101530Z', at)).toBe(Date.UTC(2023, 7, 6, 10, 15, 30));
  });

  it('takes ISO 8601 without a zone as UTC', () => {
    expect(parsePublishedAt('2023-08-06T10:15:30', at)).toBe(Date.UTC(2023, 7, 6, 10, 15, 30));
    expect(parsePublishedAt('2023-08-06 10:15', at)).toBe(Date.UTC(2023, 7, 6, 10, 15));
  });

  it('puts day-only values at 00:00 UTC', () => {
    const day = Date.UTC(2022, 5, 17);
    expect(parsePublishedAt('2022/06/17', at)).toBe(day);
    expect(parsePublishedAt('2022-06-17', at)).toBe(day);
    expect(parsePublishedAt('20220617', at)).toBe(day);
    expect(parsePublishedAt(' 2022/6/17 ', at)).toBe(day);
  });

  it('reads e-mail and prose dates, with their zone when given', () => {
    expect(parsePublishedAt('Sun, 06 Aug 2023 09:00:00 GMT', at)).toBe(Date.UTC(2023, 7, 6, 9));
    expect(parsePublishedAt('Sun, 06 Aug 2023 09:00:00 +0200', at)).toBe(Date.UTC(2023, 7, 6, 7));
    expect(parsePublishedAt('August 6, 2023', at)).toBe(Date.UTC(2023, 7, 6));
    expect(parsePublishedAt('Aug 6, 2023 10:15 AM EDT', at)).toBe(Date.UTC(2023, 7, 6, 14, 15));
  });

  it('accepts milliseconds since the epoch', () => {
    expect(parsePublishedAt(Date.UTC(2023, 7, 6, 1, 2, 3), at)).toBe(Date.UTC(2023, 7, 6, 1, 2, 3));
  });

  it('rejects invalid calendar dates and times as impossible_date', () => {
    for (const bad of [
      '2023-02-30',
      '2023/13/01',
      '2023-02-29T10:00:00Z',
      '2023-08-06T25:00:00Z',
      '2023-08-06T10:61Z',
    ]) {
      expect(
        reasonOf(() => parsePublishedAt(bad, at)),
        bad,
      ).toBe('impossible_date');
    }
    expect(parsePublishedAt('2020-02-29', at)).toBe(Date.UTC(2020, 1, 29));
  });

  it('rejects times before 1990 and more than the tolerance ahead of now', () => {
    expect(reasonOf(() => parsePublishedAt('1989-12-31', at))).toBe('impossible_date');
    expect(reasonOf(() => parsePublishedAt(0, at))).toBe('impossible_date');
    expect(parsePublishedAt(EARLIEST_PUBLISH_TIME, at)).toBe(EARLIEST_PUBLISH_TIME);
    expect(parsePublishedAt(NOW + 23 * HOUR, at)).toBe(NOW + 23 * HOUR);
    expect(reasonOf(() => parsePublishedAt(NOW + 25 * HOUR, at))).toBe('impossible_date');
    expect(parsePublishedAt(NOW + 25 * HOUR, { now: NOW, futureToleranceMs: 48 * HOUR })).toBe(NOW + 25 * HOUR);
  });

  it('accepts an archive back to the earliest time it is given, and never the Unix epoch itself', () => {
    const archive = { now: NOW, earliest: EARLIEST_REPLAY_PUBLISH_TIME };
    // A Reuters wire of 1987, as a replay reads it.
    expect(parsePublishedAt('26-FEB-1987 15:01:01', archive)).toBe(Date.UTC(1987, 1, 26, 15, 1, 1));
    expect(parsePublishedAt('1987-02-26', archive)).toBe(Date.UTC(1987, 1, 26));
    expect(parsePublishedAt('1969-07-21', archive)).toBe(Date.UTC(1969, 6, 21));
    expect(reasonOf(() => parsePublishedAt('1899-12-31', archive))).toBe('impossible_date');
    // Zero, or a zone shift of it, is a time that was never set, whatever the earliest time.
    for (const accident of [0, 3_600_000, '1970-01-01T00:00:00Z', '1970-01-01']) {
      expect(
        reasonOf(() => parsePublishedAt(accident, archive)),
        String(accident),
      ).toBe('impossible_date');
    }
    expect(publishTimeFromUrl('https://example.org/1987/02/26/dollar.html')).toBeUndefined();
    expect(publishTimeFromUrl('https://example.org/1987/02/26/dollar.html', EARLIEST_REPLAY_PUBLISH_TIME)).toBe(
      Date.UTC(1987, 1, 26),
    );
  });

  it('rejects unreadable values as impossible_date', () => {
    for (const bad of ['', 'yesterday', 'soon', 'August 6', '2023', 'x'.repeat(500)]) {
      expect(
        reasonOf(() => parsePublishedAt(bad, at)),
        bad,
      ).toBe('impossible_date');
    }
    expect(reasonOf(() => parsePublishedAt(Number.NaN, at))).toBe('impossible_date');
    expect(reasonOf(() => checkPublishTime(Number.POSITIVE_INFINITY, at))).toBe('impossible_date');
  });
});

describe('publishTimeFromUrl', () => {
  it('reads the day from the usual news URL shapes', () => {
    const day = Date.UTC(2023, 7, 6);
    for (const url of [
      'https://example.com/2023/08/06/world/story-title/index.html',
      'https://example.com/news/2023/8/6/story',
      'https://example.com/2023-08-06/story-title',
      'https://example.com/story-title-2023-08-06.html',
      'https://example.com/archive/20230806/story',
      'https://example.com/world/2023/aug/06/story-title',
    ]) {
      expect(publishTimeFromUrl(url), url).toBe(day);
    }
  });

  it('takes the first date in the path', () => {
    expect(publishTimeFromUrl('https://example.com/2021/01/02/recap-of-2020-12-31')).toBe(Date.UTC(2021, 0, 2));
  });

  it('finds nothing in paths without a valid day', () => {
    for (const url of [
      'https://example.com/story/money/427418002/',
      'https://example.com/news/uk-news/955210/odds',
      'https://example.com/2023/02/30/story',
      'https://example.com/1985/05/01/old',
      'https://example.com/2023/08/',
      'https://example.com/?date=2023-08-06',
      'not a url',
    ]) {
      expect(publishTimeFromUrl(url), url).toBeUndefined();
    }
  });
});

describe('publishTimeFromHtml', () => {
  it('prefers article:published_time over other metadata', () => {
    const document = page(
      '<meta name="sailthru.date" content="2023-08-01">' +
        '<meta property="article:published_time" content="2023-08-06T10:00:00Z">' +
        '<script type="application/ld+json">{"@type":"NewsArticle","datePublished":"2023-08-05"}</script>',
      '<time datetime="2023-07-01">July</time>',
    );
    expect(publishTimeFromHtml(document, at)).toBe(Date.UTC(2023, 7, 6, 10));
    expect(publishTimeCandidates(document)).toEqual(['2023-08-06T10:00:00Z', '2023-08-05', '2023-08-01', '2023-07-01']);
  });

  it('reads each supported source on its own', () => {
    const expected = Date.UTC(2023, 7, 6);
    const pages = [
      page('<meta property="og:published_time" content="2023-08-06">'),
      page('<meta itemprop="datePublished" content="2023-08-06">'),
      page('', '<span itemprop="datePublished" datetime="2023-08-06">6 Aug</span>'),
      page(
        '<script type="application/ld+json">{"@graph":[{"@type":"WebPage"},{"datePublished":"2023-08-06"}]}</script>',
      ),
      page('<script type="application/ld+json">[{"@type":"NewsArticle","datePublished":"2023-08-06"}]</script>'),
      page('<meta name="parsely-pub-date" content="2023-08-06">'),
      page('<meta name="sailthru.date" content="2023-08-06">'),
      page('<meta name="DC.date" content="2023-08-06">'),
      page('', '<article><time datetime="2023-08-06">Aug 6</time></article>'),
    ];
    for (const document of pages) expect(publishTimeFromHtml(document, at)).toBe(expected);
  });

  it('skips unusable values in favour of the next source', () => {
    const document = page(
      '<meta property="article:published_time" content="0000-00-00">' +
        '<script type="application/ld+json">{ not json</script>' +
        '<meta name="parsely-pub-date" content="2023-08-06T09:30:00Z">',
    );
    expect(publishTimeFromHtml(document, at)).toBe(Date.UTC(2023, 7, 6, 9, 30));
  });

  it('is undefined when the page states no time and impossible_date when all it states are unusable', () => {
    expect(publishTimeFromHtml(page('<meta name="description" content="x">'), at)).toBeUndefined();
    const bad = page(
      '<meta property="article:published_time" content="2023-02-30"><meta name="dc.date" content="1970-01-01">',
    );
    expect(reasonOf(() => publishTimeFromHtml(bad, at))).toBe('impossible_date');
    const future = page('<meta property="article:published_time" content="2030-01-01">');
    expect(reasonOf(() => publishTimeFromHtml(future, at))).toBe('impossible_date');
  });
});

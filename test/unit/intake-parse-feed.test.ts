import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IntakeRejection } from '../../processors/intake/article-input.js';
import { parseFeed } from '../../processors/intake/parse-feed.js';
import { expectRejection } from './intake-rejections.js';

const FEED_URL = 'https://www.example-news.com/feeds/world.xml';

const RSS = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel>
    <title>Example News – World</title>
    <link>https://www.example-news.com/world</link>
    <description>World news</description>
    <language>en-gb</language>
    <item>
      <title>Harbour reopens after storm</title>
      <link>https://www.example-news.com/2023/08/06/harbour-reopens</link>
      <guid isPermaLink="false">example-news-1001</guid>
      <pubDate>Sun, 06 Aug 2023 09:00:00 GMT</pubDate>
      <description><![CDATA[<p>Short summary.</p>]]></description>
      <content:encoded><![CDATA[<p>The harbour reopened on Sunday.</p><p>Ships entered at dawn.</p>]]></content:encoded>
    </item>
    <item>
      <title>Relative link</title>
      <link>/2023/08/05/relative-story</link>
      <dc:date>2023-08-05T18:30:00Z</dc:date>
      <description>&lt;p&gt;Only a description.&lt;/p&gt;</description>
    </item>
    <item>
      <title>No link at all</title>
      <description>Skipped.</description>
    </item>
    <item>
      <title>Permalink guid</title>
      <guid>https://www.example-news.com/2023/08/04/guid-only</guid>
    </item>
    <item>
      <title>Duplicate of the first</title>
      <link>https://www.example-news.com/2023/08/06/harbour-reopens-copy</link>
      <guid isPermaLink="false">example-news-1001</guid>
    </item>
  </channel>
</rss>`;

const ATOM = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title type="text">Example Science</title>
  <id>urn:example:science</id>
  <updated>2023-08-06T10:00:00Z</updated>
  <entry>
    <title type="html">Comet &lt;em&gt;visible&lt;/em&gt; tonight</title>
    <id>urn:example:science:77</id>
    <link rel="related" href="https://other.example.org/related"/>
    <link rel="alternate" href="https://science.example.org/comet-visible"/>
    <published>2023-08-06T08:00:00Z</published>
    <updated>2023-08-06T09:00:00Z</updated>
    <content type="html">&lt;p&gt;A comet will be visible tonight.&lt;/p&gt;</content>
  </entry>
  <entry>
    <title>Plain text entry</title>
    <id>urn:example:science:78</id>
    <link href="/plain-entry"/>
    <updated>2023-08-05T09:00:00Z</updated>
    <summary>Plain summary with a &lt; sign.</summary>
  </entry>
</feed>`;

const JSON_FEED = JSON.stringify({
  version: 'https://jsonfeed.org/version/1.1',
  title: 'Example Tech',
  language: 'en',
  items: [
    {
      id: 'tech-1',
      url: 'https://tech.example.org/chips',
      title: 'New chips announced',
      content_text: 'A chipmaker announced new processors.',
      date_published: '2023-08-06T07:00:00+02:00',
    },
    {
      id: 'tech-2',
      url: 'https://tech.example.org/phones',
      content_html: '<p>Phones got cheaper.</p>',
      date_modified: '2023-08-05T07:00:00Z',
      language: 'de-de',
    },
    { id: 'tech-3', title: 'No url' },
  ],
});

describe('parseFeed', () => {
  it('reads RSS 2.0 items, resolving links, choosing content:encoded and skipping items without a link', () => {
    const feed = parseFeed(RSS, FEED_URL);
    expect(feed.format).toBe('rss');
    expect(feed.title).toBe('Example News – World');
    expect(feed.entries).toEqual([
      {
        guid: 'example-news-1001',
        url: 'https://www.example-news.com/2023/08/06/harbour-reopens',
        title: 'Harbour reopens after storm',
        html: '<p>The harbour reopened on Sunday.</p><p>Ships entered at dawn.</p>',
        published_at: 'Sun, 06 Aug 2023 09:00:00 GMT',
        language: 'en-GB',
        source: 'example-news.com',
      },
      {
        guid: 'https://www.example-news.com/2023/08/05/relative-story',
        url: 'https://www.example-news.com/2023/08/05/relative-story',
        title: 'Relative link',
        html: '<p>Only a description.</p>',
        published_at: '2023-08-05T18:30:00Z',
        language: 'en-GB',
        source: 'example-news.com',
      },
      {
        guid: 'https://www.example-news.com/2023/08/04/guid-only',
        url: 'https://www.example-news.com/2023/08/04/guid-only',
        title: 'Permalink guid',
        language: 'en-GB',
        source: 'example-news.com',
      },
    ]);
  });

  it('reads Atom entries: alternate link, html content as html, text content as text', () => {
    const feed = parseFeed(ATOM, 'https://science.example.org/atom.xml');
    expect(feed.format).toBe('atom');
    expect(feed.title).toBe('Example Science');
    expect(feed.entries).toHaveLength(2);
    const [first, second] = feed.entries;
    expect(first).toMatchObject({
      guid: 'urn:example:science:77',
      url: 'https://science.example.org/comet-visible',
      html: '<p>A comet will be visible tonight.</p>',
      published_at: '2023-08-06T08:00:00Z',
    });
    expect(first?.title?.replace(/\s+/g, ' ').trim()).toBe('Comet visible tonight');
    expect(second).toMatchObject({
      guid: 'urn:example:science:78',
      url: 'https://science.example.org/plain-entry',
      text: 'Plain summary with a < sign.',
      published_at: '2023-08-05T09:00:00Z',
    });
    expect(second?.html).toBeUndefined();
  });

  it('reads JSON Feed items: content_text as text, content_html as html, item language over feed language', () => {
    const feed = parseFeed(JSON_FEED, 'https://tech.example.org/feed.json');
    expect(feed.format).toBe('json');
    expect(feed.title).toBe('Example Tech');
    expect(feed.entries).toEqual([
      {
        guid: 'tech-1',
        url: 'https://tech.example.org/chips',
        title: 'New chips announced',
        text: 'A chipmaker announced new processors.',
        published_at: '2023-08-06T07:00:00+02:00',
        language: 'en',
        source: 'tech.example.org',
      },
      {
        guid: 'tech-2',
        url: 'https://tech.example.org/phones',
        html: '<p>Phones got cheaper.</p>',
        published_at: '2023-08-05T07:00:00Z',
        language: 'de-DE',
        source: 'tech.example.org',
      },
    ]);
  });

  it('reads RDF (RSS 1.0) items', () => {
    const rdf = `<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://rdf.example.org/"><title>RDF News</title><link>https://rdf.example.org/</link><description>d</description></channel>
  <item rdf:about="https://rdf.example.org/item-1"><title>Item one</title><link>https://rdf.example.org/item-1</link><dc:date>2023-08-06</dc:date></item>
</rdf:RDF>`;
    const feed = parseFeed(rdf, 'https://rdf.example.org/index.rdf');
    expect(feed.format).toBe('rdf');
    expect(feed.entries).toEqual([
      {
        guid: 'https://rdf.example.org/item-1',
        url: 'https://rdf.example.org/item-1',
        title: 'Item one',
        published_at: '2023-08-06',
        source: 'rdf.example.org',
      },
    ]);
  });

  it('rejects garbage, HTML pages, truncated XML and broken JSON as unparseable_feed', () => {
    const bodies = [
      '',
      '   ',
      'this is not a feed',
      '<!DOCTYPE html><html><head><title>Home</title></head><body><p>Welcome</p></body></html>',
      RSS.slice(0, RSS.indexOf('</channel>')),
      RSS.slice(0, 300),
      ATOM.slice(0, ATOM.length - 10),
      '<?xml version="1.0"?><catalog><book>not a feed</book></catalog>',
      '{"version": "https://jsonfeed.org/version/1.1", "items": [',
      '{"hello": "world"}',
    ];
    for (const body of bodies) {
      const rejection = expectRejection(() => parseFeed(body, FEED_URL));
      expect(rejection.reason, body.slice(0, 40)).toBe('unparseable_feed');
    }
    expect(expectRejection(() => parseFeed(bodies[3]!, FEED_URL)).message).toContain('HTML');
    expect(expectRejection(() => parseFeed(bodies[4]!, FEED_URL)).message).toContain('truncated');
  });

  it('accepts a byte-order mark and an empty channel', () => {
    const empty =
      '\uFEFF<rss version="2.0"><channel><title>Quiet</title><link>https://q.example.org/</link><description>d</description></channel></rss>';
    expect(parseFeed(empty, FEED_URL)).toEqual({ format: 'rss', title: 'Quiet', entries: [] });
  });

  it('returns entries or throws unparseable_feed for arbitrary bodies', () => {
    const body = fc.oneof(
      fc.string(),
      fc.string().map((s) => `<rss version="2.0"><channel><item><link>${s}</link></item></channel></rss>`),
      fc
        .string()
        .map(
          (s) =>
            `{"version":"https://jsonfeed.org/version/1","title":"t","items":[{"id":"1","url":${JSON.stringify(s)}}]}`,
        ),
    );
    fc.assert(
      fc.property(body, (text) => {
        try {
          const feed = parseFeed(text, FEED_URL);
          for (const entry of feed.entries) expect(entry.url).toMatch(/^https?:\/\//);
        } catch (error) {
          expect(error).toBeInstanceOf(IntakeRejection);
          expect((error as IntakeRejection).reason).toBe('unparseable_feed');
        }
      }),
      { numRuns: 200 },
    );
  });
});

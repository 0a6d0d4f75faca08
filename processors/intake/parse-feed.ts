/**
 * A fetched feed body to article inputs, with feedsmith (RSS 2.0, Atom, RDF/RSS 1.0, JSON Feed,
 * detected from the content). Dates stay as the feed wrote them; normalisation reads them, so a
 * bad date is rejected per entry rather than failing the feed.
 *
 * Rejection reason: `unparseable_feed` (empty, not a feed, an HTML page, truncated XML, malformed
 * JSON). Entries without a usable http(s) link are skipped, not fatal; a repeated guid keeps its
 * first entry.
 */
import { parseFeed as parseAnyFeed, type AnyFeed } from 'feedsmith';
import { IntakeRejection, type ArticleInput } from './article-input.js';
import { canonicalLanguageTag } from './extract-main-text.js';

export interface FeedEntry extends ArticleInput {
  /** The entry's guid or id, else its link: what a poller remembers to skip seen entries. */
  guid: string;
}

export interface ParsedFeed {
  format: 'rss' | 'atom' | 'rdf' | 'json';
  title?: string;
  entries: FeedEntry[];
}

/** What every format's entry is mapped to before becoming a FeedEntry. */
interface RawEntry {
  guid?: string | undefined;
  link?: string | undefined;
  title?: string | undefined;
  html?: string | undefined;
  text?: string | undefined;
  published?: string | undefined;
  language?: string | undefined;
}

function unparseable(message: string): IntakeRejection {
  return new IntakeRejection('unparseable_feed', message);
}

function nonBlank(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** An absolute http(s) URL for a link, resolved against the feed's own address. */
function resolveLink(link: string | undefined, feedUrl: string): string | undefined {
  if (link === undefined) return undefined;
  let resolved: URL | undefined;
  if (URL.canParse(link)) resolved = new URL(link);
  else if (URL.canParse(link, feedUrl)) resolved = new URL(link, feedUrl);
  if (!resolved || (resolved.protocol !== 'http:' && resolved.protocol !== 'https:') || resolved.hostname === '') {
    return undefined;
  }
  return resolved.href;
}

const XML_PROLOG =
  /^(?:\s*(?:<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>))*\s*<([A-Za-z_][\w:.-]*)/i;

/**
 * feedsmith reads a cut-off document up to where it stops, so a feed truncated mid-transfer would
 * silently lose entries; a well-formed document ends by closing its root element.
 */
function checkXmlComplete(body: string): void {
  const root = XML_PROLOG.exec(body)?.[1];
  if (root === undefined) throw unparseable('no XML root element');
  if (root.toLowerCase() === 'html') throw unparseable('an HTML page, not a feed');
  const end = body.trimEnd();
  if (!end.endsWith(`</${root}>`) && !end.endsWith('/>')) throw unparseable(`truncated XML: no closing </${root}>`);
}

/** Plain text of an Atom text construct whose type is html. */
function stripTags(html: string): string {
  return html.replace(/<[^>]*>/g, ' ');
}

interface AtomText {
  value?: string | undefined;
  type?: string | undefined;
}

function atomTitle(text: AtomText | undefined): string | undefined {
  if (text?.value === undefined) return undefined;
  return text.type === 'html' || text.type === 'xhtml' ? stripTags(text.value) : text.value;
}

/** Atom content is plain text unless its type says html/xhtml. */
function atomBody(content: AtomText | undefined, raw: RawEntry): void {
  if (content?.value === undefined || content.value.trim() === '') return;
  if (content.type === 'html' || content.type === 'xhtml' || content.type?.includes('html')) raw.html ??= content.value;
  else raw.text ??= content.value;
}

function rawEntries(parsed: AnyFeed): {
  title?: string | undefined;
  language?: string | undefined;
  entries: RawEntry[];
} {
  switch (parsed.format) {
    case 'rss': {
      const feed = parsed.feed;
      return {
        title: feed.title,
        language: feed.language,
        entries: (feed.items ?? []).map((item) => {
          const guid = nonBlank(item.guid?.value);
          const permalink = item.guid?.isPermaLink !== false && guid !== undefined && /^https?:/i.test(guid);
          return {
            guid,
            link: nonBlank(item.link) ?? (permalink ? guid : undefined),
            title: item.title,
            html: nonBlank(item.content?.encoded) ?? nonBlank(item.description),
            published: item.pubDate ?? item.dc?.dates?.[0] ?? item.dcterms?.issued?.[0],
          };
        }),
      };
    }
    case 'atom': {
      const feed = parsed.feed;
      return {
        title: atomTitle(feed.title),
        entries: (feed.entries ?? []).map((entry) => {
          const links = entry.links ?? [];
          const alternate = links.find((link) => link.rel === undefined || link.rel === 'alternate') ?? links[0];
          const raw: RawEntry = {
            guid: nonBlank(entry.id),
            link: nonBlank(alternate?.href),
            title: atomTitle(entry.title),
            published: entry.published ?? entry.updated ?? entry.dc?.dates?.[0],
          };
          atomBody(entry.content, raw);
          atomBody(entry.summary, raw);
          return raw;
        }),
      };
    }
    case 'rdf': {
      const feed = parsed.feed;
      return {
        title: feed.title,
        language: feed.dc?.languages?.[0],
        entries: (feed.items ?? []).map((item) => ({
          guid: nonBlank(item.rdf?.about),
          link: nonBlank(item.link),
          title: item.title,
          html: nonBlank(item.content?.encoded) ?? nonBlank(item.description),
          published: item.dc?.dates?.[0] ?? item.dcterms?.issued?.[0],
        })),
      };
    }
    case 'json': {
      const feed = parsed.feed;
      return {
        title: feed.title,
        language: feed.language,
        entries: (feed.items ?? []).map((item) => ({
          guid: nonBlank(typeof item.id === 'number' ? String(item.id) : item.id),
          link: nonBlank(item.url) ?? nonBlank(item.external_url),
          title: item.title,
          html: nonBlank(item.content_html),
          text: nonBlank(item.content_text) ?? (item.content_html === undefined ? nonBlank(item.summary) : undefined),
          published: item.date_published ?? item.date_modified,
          language: item.language,
        })),
      };
    }
  }
}

function toEntry(raw: RawEntry, feedUrl: string, feedLanguage: string | undefined): FeedEntry | undefined {
  const url = resolveLink(nonBlank(raw.link), feedUrl);
  if (url === undefined) return undefined;
  const entry: FeedEntry = { guid: raw.guid ?? url, url };
  const title = nonBlank(raw.title);
  if (title !== undefined) entry.title = title;
  const html = nonBlank(raw.html);
  if (html !== undefined) entry.html = html;
  const text = nonBlank(raw.text);
  if (text !== undefined) entry.text = text;
  const published = nonBlank(raw.published);
  if (published !== undefined) entry.published_at = published;
  const language = canonicalLanguageTag(raw.language) ?? canonicalLanguageTag(feedLanguage);
  if (language !== undefined) entry.language = language;
  if (URL.canParse(feedUrl)) entry.source = new URL(feedUrl).hostname.replace(/^www\d*\./, '');
  return entry;
}

/**
 * The entries of an RSS 2.0, Atom, RDF or JSON Feed document fetched from `feedUrl` (relative
 * links are resolved against it; its host is each entry's `source`). Throws `unparseable_feed`.
 */
export function parseFeed(body: string, feedUrl: string): ParsedFeed {
  const text = body.replace(/^\uFEFF/, '').trim();
  if (text === '') throw unparseable('empty body');
  if (text.startsWith('<')) checkXmlComplete(text);
  else if (!text.startsWith('{')) throw unparseable('neither XML nor JSON');
  let parsed: AnyFeed;
  try {
    parsed = parseAnyFeed(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw unparseable(`not a feed: ${reason.slice(0, 200)}`);
  }
  let raw: ReturnType<typeof rawEntries>;
  try {
    raw = rawEntries(parsed);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw unparseable(`unexpected feed structure: ${reason.slice(0, 200)}`);
  }
  const seen = new Set<string>();
  const entries: FeedEntry[] = [];
  for (const item of raw.entries) {
    const entry = toEntry(item, feedUrl, raw.language);
    if (entry === undefined || seen.has(entry.guid)) continue;
    seen.add(entry.guid);
    entries.push(entry);
  }
  const result: ParsedFeed = { format: parsed.format, entries };
  const title = nonBlank(raw.title);
  if (title !== undefined) result.title = title;
  return result;
}

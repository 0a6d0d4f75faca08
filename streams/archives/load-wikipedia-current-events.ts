/**
 * Wikipedia "Portal:Current events" daily pages converted to markdown (one `YYYY-MM-DD-index.md`
 * per day, YAML front matter, `#### Category` headings, nested bullets). Each leaf bullet is one
 * event summary: an ArticleInput-able record whose inline Wikipedia links are human entity
 * annotations, used to evaluate markup. Read at run time from the caller's path.
 *
 * A bullet is a story topic when it holds nothing but Wikipedia links (and commas); any other bullet
 * is an item. An item's topic is the nearest topic bullet above it, or its category when it has
 * none. Links become their surface text (emphasis asterisks removed) and are kept as spans; links to
 * other sites are outlet citations ("(Reuters)") and are removed from the text.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { existsSync } from 'node:fs';
import type { ArticleInput } from '../../processors/intake/article-input.js';
import type { DatasetLoad, ReplayItem } from '../../processors/intake/replay-articles.js';
import { SUMMARY_MIN_TEXT_CHARS } from '../../processors/intake/normalize-article.js';

export const WIKIPEDIA_CURRENT_EVENTS_SOURCE = 'en.wikipedia.org/wiki/Portal:Current_events';

export interface LinkedSpan {
  /** Offsets into `text`, UTF-16 code units, end exclusive. */
  start: number;
  end: number;
  /** Title of the linked Wikipedia article. */
  title: string;
}

export interface Citation {
  outlet: string;
  url: string;
}

export interface CurrentEventItem {
  /** YYYY-MM-DD */
  date: string;
  category: string;
  /** The story-topic bullet above the item: use as title. */
  topic: string;
  /** Links replaced by their surface text, outlet citations removed. */
  text: string;
  links: LinkedSpan[];
  citations: Citation[];
}

const FILE_NAME = /^(\d{4}-\d{2}-\d{2})-index\.md$/;
const BULLET = /^( *)[*+-] (.*)$/;
const HEADING = /^#{1,6} +(.*?)\s*$/;
/** `[surface](url "title")`; the surface may hold one level of brackets. */
/** `[[es](https://es.wikipedia.org/…)]` interlanguage links and `[[citation needed](…/wiki/Wikipedia:…)]` tags. */
const BRACKETED_NOTE =
  /\s*\[\*?\[[^\]]*\]\(https?:\/\/(?:(?!en\.)[a-z-]+(?:\.m)?\.wikipedia\.org|[a-z.]*wikipedia\.org\/wiki\/(?:Wikipedia|Help|Template)(?::|%3A))[^)]*\)\*?\]/g;
const LINK = /\[((?:[^[\]]|\[[^\]]*\])*)\]\(([^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+"([^"]*)")?\)/g;

/** Every item of every daily file in dir, in date order, then page order. */
export function loadWikipediaCurrentEvents(dir: string): CurrentEventItem[] {
  const files = readdirSync(dir)
    .filter((name) => FILE_NAME.test(name))
    .sort();
  return files.flatMap((name) => {
    const fallbackDate = FILE_NAME.exec(name)![1]!;
    return parseCurrentEventsDay(readFileSync(join(dir, name), 'utf8'), fallbackDate);
  });
}

/** Items of one daily page; the date comes from the front matter, else from `fallbackDate`. */
export function parseCurrentEventsDay(markdown: string, fallbackDate: string): CurrentEventItem[] {
  const { body, date } = splitFrontMatter(markdown, fallbackDate);
  const items: CurrentEventItem[] = [];
  let category = '';
  const topics: { indent: number; text: string | undefined }[] = [];
  for (const line of body.split(/\r?\n/)) {
    const heading = HEADING.exec(line);
    if (heading !== null) {
      category = heading[1]!;
      topics.length = 0;
      continue;
    }
    const bullet = BULLET.exec(line);
    if (bullet === null) continue;
    const indent = bullet[1]!.length;
    while (topics.length > 0 && topics.at(-1)!.indent >= indent) topics.pop();
    const parsed = parseBullet(bullet[2]!);
    if (parsed.isTopic) {
      topics.push({ indent, text: parsed.text });
      continue;
    }
    topics.push({ indent, text: undefined });
    const topic = [...topics].reverse().find((t) => t.text !== undefined)?.text ?? category;
    items.push({ date, category, topic, text: parsed.text, links: parsed.links, citations: parsed.citations });
  }
  return items;
}

/**
 * The sample folder (`daily_markdown/` inside it, or the daily files themselves) as replay items in
 * date order: what `neon replay` publishes.
 */
export function loadWikipediaCurrentEventsReplay(path: string): DatasetLoad<{ items: number }> {
  const dir = existsSync(join(path, 'daily_markdown')) ? join(path, 'daily_markdown') : path;
  if (!existsSync(dir)) return { ok: false, error: `Current Events pages not found: ${dir} does not exist` };
  const items = loadWikipediaCurrentEvents(dir);
  if (items.length === 0)
    return { ok: false, error: `Current Events pages not found: no YYYY-MM-DD-index.md in ${dir}` };
  const replayItems: ReplayItem[] = items.map((item, i) => {
    const input = currentEventArticleInput(item);
    return { raw: Buffer.from(JSON.stringify(input), 'utf8'), input, origin: `${item.date}-index.md#${i}` };
  });
  async function* each(): AsyncGenerator<ReplayItem> {
    yield* replayItems;
  }
  return {
    ok: true,
    items: each(),
    stats: { items: items.length },
    normalize: { minTextChars: SUMMARY_MIN_TEXT_CHARS },
  };
}

/** The record intake normalises: url = first citation, or a stable URL on the portal page. */
export function currentEventArticleInput(item: CurrentEventItem): ArticleInput {
  const digest = createHash('sha256').update(`${item.date}\n${item.text}`).digest('hex').slice(0, 16);
  const url = item.citations[0]?.url ?? `https://${WIKIPEDIA_CURRENT_EVENTS_SOURCE}/${item.date}#${digest}`;
  return {
    id: `wce-${item.date}-${digest}`,
    url,
    title: item.topic,
    text: item.text,
    published_at: item.date,
    source: WIKIPEDIA_CURRENT_EVENTS_SOURCE,
    language: 'en',
  };
}

function splitFrontMatter(markdown: string, fallbackDate: string): { body: string; date: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(markdown);
  if (match === null) return { body: markdown, date: fallbackDate };
  const date = /^date:\s*(\d{4}-\d{2}-\d{2})\s*$/m.exec(match[1]!)?.[1] ?? fallbackDate;
  return { body: markdown.slice(match[0].length), date };
}

interface ParsedBullet {
  text: string;
  links: LinkedSpan[];
  citations: Citation[];
  isTopic: boolean;
}

function parseBullet(bullet: string): ParsedBullet {
  const content = bullet.replace(BRACKETED_NOTE, '');
  const links: LinkedSpan[] = [];
  const citations: Citation[] = [];
  let text = '';
  let outsideLinks = '';
  const append = (segment: string): void => {
    let s = segment.replace(/\s+/g, ' ');
    if (text.length === 0 || text.endsWith(' ')) s = s.replace(/^ /, '');
    text += s;
  };
  let cursor = 0;
  for (const match of content.matchAll(LINK)) {
    const plain = withoutEmphasis(content.slice(cursor, match.index));
    outsideLinks += plain;
    append(plain);
    cursor = match.index + match[0].length;
    const surface = withoutEmphasis(match[1]!).trim();
    const url = match[2]!;
    if (!isWikipediaArticle(url)) {
      citations.push({ outlet: surface.replace(/^[<\s]*\(?|\)?\s*$/g, '').trim(), url });
      continue;
    }
    const start = text.length;
    append(surface);
    const title = (match[3] ?? titleFromUrl(url)).replace(/ \(page does not exist\)$/, '');
    links.push({ start, end: text.length, title });
  }
  const rest = withoutEmphasis(content.slice(cursor));
  outsideLinks += rest;
  append(rest);
  text = text.replace(/ +$/, '');
  const isTopic = citations.length === 0 && links.length > 0 && !/[\p{L}\p{N}]/u.test(outsideLinks);
  return { text, links: links.filter((l) => l.end > l.start && l.end <= text.length), citations, isTopic };
}

function withoutEmphasis(s: string): string {
  return s.replace(/\*+/g, '');
}

function isWikipediaArticle(url: string): boolean {
  return /^https?:\/\/[a-z]+(?:\.m)?\.wikipedia\.org\/wiki\//.test(url);
}

function titleFromUrl(url: string): string {
  const path = url.replace(/^https?:\/\/[^/]+\/wiki\//, '').replace(/[?#].*$/, '');
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape keeps the raw path: the title is only used to compare links.
  }
  return decoded.replace(/_/g, ' ');
}

/**
 * Main text and metadata of a news page: @mozilla/readability (Firefox Reader View's algorithm)
 * over a linkedom DOM, with the page's own metadata (rel=canonical, og:url, `<html lang>`,
 * publication time) read before Readability rewrites the document.
 *
 * Never throws: a page the libraries cannot handle yields what could be read (possibly empty
 * text), and normalisation turns empty text into a `no_text` rejection. Scripts, styles,
 * noscript, iframes, form controls and hidden elements are removed before any text is taken, so their
 * contents never reach the article.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { IntakeRejection } from './article-input.js';
import { publishTimeFromHtml, type PageDocument, type PageElement, type PublishTimeOptions } from './publish-time.js';

export interface ExtractedPage {
  /** Headline, whitespace-normalised; empty when the page has none. */
  title: string;
  /** Paragraphs separated by a blank line, whitespace inside them collapsed. */
  text: string;
  /** Absolute http(s) rel=canonical or og:url, resolved against the page URL (not yet canonicalised). */
  canonicalUrl?: string;
  /** From the page metadata, when a usable one was found. */
  publishedAt?: number;
  /** Why the page's stated publication times were all unusable, when it stated some. */
  publishedAtProblem?: string;
  /** BCP 47 tag from `<html lang>` (or Content-Language / og:locale), canonicalised. */
  language?: string;
}

interface DomNode {
  readonly nodeType: number;
  readonly childNodes: ArrayLike<DomNode>;
}

interface DomElement extends DomNode, PageElement {
  readonly attributes: ArrayLike<{ readonly name: string }>;
  hasAttribute(name: string): boolean;
  removeAttribute(name: string): void;
  remove(): void;
}

interface DomText extends DomNode {
  readonly data: string;
}

interface DomDocument extends PageDocument {
  readonly documentElement: DomElement | null;
  readonly title: string;
  querySelectorAll(selectors: string): Iterable<DomElement>;
  querySelector(selectors: string): DomElement | null;
}

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;

/** Elements whose content is never article text. */
const REMOVED_ELEMENTS =
  'script, style, noscript, iframe, frame, frameset, template, object, embed, applet, svg, math, canvas, ' +
  'audio, video, source, track, map, button, input, select, textarea, option, dialog, link, meta';
/** Page furniture the fallback drops (Readability scores these away by itself). */
const FURNITURE_ELEMENTS =
  'nav, header, footer, aside, menu, [role="navigation"], [role="banner"], [role="contentinfo"]';

const BLOCK_ELEMENTS: ReadonlySet<string> = new Set([
  'address',
  'article',
  'blockquote',
  'body',
  'caption',
  'center',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'html',
  'legend',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'tfoot',
  'thead',
  'tr',
  'ul',
]);
const CELL_ELEMENTS: ReadonlySet<string> = new Set(['td', 'th']);
const SKIPPED_ELEMENTS: ReadonlySet<string> = new Set(
  REMOVED_ELEMENTS.split(',')
    .map((name) => name.trim())
    .concat(['head', 'title']),
);

function isElement(node: DomNode): node is DomElement {
  return node.nodeType === ELEMENT_NODE;
}

function isText(node: DomNode): node is DomText {
  return node.nodeType === TEXT_NODE;
}

function tagOf(element: PageElement): string {
  return element.tagName.toLowerCase();
}

/** Collapses runs of spaces, tabs and other horizontal whitespace; trims every line. */
export function collapseWhitespace(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[^\S\n]+/g, ' ').trim())
    .filter((line) => line !== '')
    .join('\n');
}

/**
 * Text of a DOM subtree with block boundaries as paragraph breaks ("\n\n") and `<br>` as a line
 * break. Iterative, so a page nested ten thousand levels deep cannot overflow the stack.
 */
function blockText(root: DomNode): string {
  const paragraphs: string[] = [];
  let current = '';
  const flush = (): void => {
    const paragraph = collapseWhitespace(current);
    if (paragraph !== '') paragraphs.push(paragraph);
    current = '';
  };
  type Step = { node: DomNode } | { close: true };
  const stack: Step[] = [{ node: root }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    if ('close' in step) {
      flush();
      continue;
    }
    const { node } = step;
    if (isText(node)) {
      current += node.data.replace(/\n/g, ' ');
      continue;
    }
    if (!isElement(node)) continue;
    const tag = tagOf(node);
    if (SKIPPED_ELEMENTS.has(tag)) continue;
    if (tag === 'br') {
      current += '\n';
      continue;
    }
    if (CELL_ELEMENTS.has(tag)) current += ' ';
    const block = BLOCK_ELEMENTS.has(tag);
    if (block) {
      flush();
      stack.push({ close: true });
    }
    const children = node.childNodes;
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i];
      if (child !== undefined) stack.push({ node: child });
    }
  }
  flush();
  return paragraphs.join('\n\n');
}

/** A canonical BCP 47 tag (`en-us` → `en-US`, `pt_BR` → `pt-BR`), or undefined when not one. */
export function canonicalLanguageTag(tag: string | null | undefined): string | undefined {
  const trimmed = tag?.trim().replace(/_/g, '-');
  if (!trimmed || trimmed.length > 35) return undefined;
  try {
    const [canonical] = Intl.getCanonicalLocales(trimmed);
    return canonical === undefined || canonical === 'und' ? undefined : canonical;
  } catch {
    return undefined;
  }
}

function metaContent(document: DomDocument, keys: readonly string[]): string | undefined {
  for (const meta of document.querySelectorAll('meta')) {
    const key = (meta.getAttribute('property') ?? meta.getAttribute('name') ?? meta.getAttribute('http-equiv'))
      ?.trim()
      .toLowerCase();
    const content = meta.getAttribute('content')?.trim();
    if (key !== undefined && keys.includes(key) && content) return content;
  }
  return undefined;
}

function resolveHttpUrl(href: string | null | undefined, base: string): string | undefined {
  const trimmed = href?.trim();
  if (!trimmed) return undefined;
  const resolved = URL.canParse(trimmed, base) ? new URL(trimmed, base) : undefined;
  if (!resolved || (resolved.protocol !== 'http:' && resolved.protocol !== 'https:')) return undefined;
  return resolved.href;
}

function pageCanonicalUrl(document: DomDocument, pageUrl: string): string | undefined {
  const base = URL.canParse(pageUrl) ? pageUrl : undefined;
  if (base === undefined) return undefined;
  for (const link of document.querySelectorAll('link')) {
    const rel = link.getAttribute('rel')?.toLowerCase().split(/\s+/) ?? [];
    if (rel.includes('canonical')) {
      const resolved = resolveHttpUrl(link.getAttribute('href'), base);
      if (resolved !== undefined) return resolved;
    }
  }
  return resolveHttpUrl(metaContent(document, ['og:url']), base);
}

function pageLanguage(document: DomDocument): string | undefined {
  return (
    canonicalLanguageTag(document.documentElement?.getAttribute('lang')) ??
    canonicalLanguageTag(metaContent(document, ['content-language'])?.split(',')[0]) ??
    canonicalLanguageTag(metaContent(document, ['og:locale']))
  );
}

function oneLine(text: string | null | undefined): string {
  return collapseWhitespace(text ?? '').replace(/\n/g, ' ');
}

/** og:title is what publishers write for sharing, usually without the site-name suffix of `<title>`. */
function metaTitle(document: DomDocument): string {
  return oneLine(metaContent(document, ['og:title', 'twitter:title']));
}

function documentTitle(document: DomDocument): string {
  return oneLine(document.title) || oneLine(document.querySelector('h1')?.textContent);
}

/** linkedom needs an `<html>` root; fragments and bare text get one. */
function parseDocument(html: string): DomDocument {
  const full = /<html[\s>]/i.test(html) ? html : `<!DOCTYPE html><html><head></head><body>${html}</body></html>`;
  const { document } = parseHTML(full) as unknown as { document: DomDocument };
  return document;
}

function isHidden(element: DomElement): boolean {
  if (element.hasAttribute('hidden') || element.getAttribute('aria-hidden')?.trim() === 'true') return true;
  const style = element.getAttribute('style')?.replace(/\s+/g, '').toLowerCase() ?? '';
  return style.includes('display:none') || style.includes('visibility:hidden');
}

/** Removes everything that must never become text, and every inline event handler. */
function sanitize(document: DomDocument, extraSelectors?: string): void {
  for (const element of [...document.querySelectorAll(REMOVED_ELEMENTS)]) element.remove();
  if (extraSelectors !== undefined) {
    for (const element of [...document.querySelectorAll(extraSelectors)]) element.remove();
  }
  for (const element of [...document.querySelectorAll('*')]) {
    if (isHidden(element)) {
      element.remove();
      continue;
    }
    const handlers = Array.from(element.attributes, (attribute) => attribute.name).filter((name) =>
      name.toLowerCase().startsWith('on'),
    );
    for (const name of handlers) element.removeAttribute(name);
  }
}

/**
 * Readability's cost grows with the square of nesting depth on linkedom (3,000 nested divs take
 * minutes), so hostile or broken markup beyond these bounds goes to the linear fallback instead.
 * Real news pages nest a few dozen levels and hold a few thousand elements.
 */
const MAX_READABILITY_DEPTH = 120;
const MAX_READABILITY_ELEMENTS = 30_000;

function withinReadabilityBounds(root: DomNode): boolean {
  const stack: { node: DomNode; depth: number }[] = [{ node: root, depth: 0 }];
  let elements = 0;
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (depth > MAX_READABILITY_DEPTH || ++elements > MAX_READABILITY_ELEMENTS) return false;
    const children = node.childNodes;
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (child !== undefined && isElement(child)) stack.push({ node: child, depth: depth + 1 });
    }
  }
  return true;
}

function readabilityText(document: DomDocument): { title: string; text: string } | undefined {
  if (document.documentElement === null || !withinReadabilityBounds(document.documentElement)) return undefined;
  const article = new Readability<DomNode>(document, { serializer: (node: unknown) => node as DomNode }).parse();
  if (!article?.content) return undefined;
  const text = blockText(article.content);
  if (text === '') return undefined;
  return { title: oneLine(article.title), text };
}

/** Whole-body text without navigation, headers, footers and asides, for pages Readability gives up on. */
function fallbackText(html: string): string {
  const document = parseDocument(html);
  sanitize(document, FURNITURE_ELEMENTS);
  const root = document.querySelector('body') ?? document.documentElement;
  return root ? blockText(root) : '';
}

function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/**
 * Title, main text and metadata of an HTML page fetched from `url`. `options` set the clock and
 * future tolerance for judging the page's publication time.
 */
export function extractMainText(html: string, url: string, options: PublishTimeOptions = {}): ExtractedPage {
  const document = attempt(() => parseDocument(html));
  if (document === undefined) return { title: '', text: '' };
  const page: ExtractedPage = { title: '', text: '' };
  const canonical = attempt(() => pageCanonicalUrl(document, url));
  if (canonical !== undefined) page.canonicalUrl = canonical;
  const language = attempt(() => pageLanguage(document));
  if (language !== undefined) page.language = language;
  try {
    const publishedAt = publishTimeFromHtml(document, options);
    if (publishedAt !== undefined) page.publishedAt = publishedAt;
  } catch (error) {
    if (error instanceof IntakeRejection) page.publishedAtProblem = error.message;
  }
  const preferredTitle = attempt(() => metaTitle(document)) ?? '';
  const plainTitle = attempt(() => documentTitle(document)) ?? '';
  const main = attempt(() => {
    sanitize(document);
    return readabilityText(document);
  });
  page.title = preferredTitle || main?.title || plainTitle;
  page.text = main?.text ?? attempt(() => fallbackText(html)) ?? '';
  return page;
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalLanguageTag,
  collapseWhitespace,
  extractMainText,
} from '../../processors/intake/extract-main-text.js';

const NOW = Date.UTC(2024, 0, 15);
const URL_OF_PAGE = 'https://www.example-news.com/2023/08/06/harbour-reopens/';

const PARAGRAPHS = [
  'The harbour at Port Ellery reopened on Sunday after a three-week closure caused by storm damage to the northern breakwater, the port authority said.',
  'Engineers from the regional transport office inspected the repaired sections on Saturday and cleared the first cargo ships to enter at dawn, according to a statement.',
  'Local fishing crews, who had moved their boats to a neighbouring town during the closure, said they expected to return within the week as moorings are reassigned.',
  'The authority estimated the repairs at four million euros and said a longer-term plan to raise the breakwater would be presented to the council in the autumn.',
];

function newsPage(extraBody = ''): string {
  return `<!DOCTYPE html>
<html lang="en-gb">
<head>
  <title>Harbour reopens after storm | Example News</title>
  <meta property="og:title" content="Harbour reopens after storm">
  <meta property="article:published_time" content="2023-08-06T07:45:00Z">
  <link rel="canonical" href="/2023/08/06/harbour-reopens">
  <style>body { color: red; } .hidden-style-marker {}</style>
</head>
<body>
  <header><a href="/">Example News</a> <nav><a href="/world">World</a> <a href="/sport">Sport</a> <a href="/weather">Weather</a></nav></header>
  <div class="ad-banner advertisement">Buy discount flights now!</div>
  <main>
    <article>
      <h1>Harbour reopens after storm</h1>
      <p>${PARAGRAPHS[0]}</p>
      <script>window.trackingMarker = "SCRIPT-MARKER";</script>
      <p>  ${PARAGRAPHS[1]}  </p>
      <noscript>NOSCRIPT-MARKER please enable scripts</noscript>
      <iframe src="https://ads.example.com/frame">IFRAME-MARKER</iframe>
      <p onclick="alert('HANDLER-MARKER')">${PARAGRAPHS[2]}</p>
      <div hidden>HIDDEN-MARKER</div>
      <p style="display: none">STYLE-HIDDEN-MARKER</p>
      <p>${PARAGRAPHS[3]}</p>
      ${extraBody}
    </article>
  </main>
  <aside>Most read: ten things about breakwaters</aside>
  <footer>Copyright 2023 Example News. All rights reserved. <a href="/privacy">Privacy</a></footer>
</body>
</html>`;
}

const MARKERS = [
  'SCRIPT-MARKER',
  'NOSCRIPT-MARKER',
  'IFRAME-MARKER',
  'HANDLER-MARKER',
  'HIDDEN-MARKER',
  'STYLE-HIDDEN-MARKER',
  'hidden-style-marker',
];

describe('extractMainText', () => {
  it('keeps the article paragraphs, separated by blank lines, and drops navigation, ads and footer', () => {
    const page = extractMainText(newsPage(), URL_OF_PAGE, { now: NOW });
    expect(page.text.split('\n\n')).toEqual(PARAGRAPHS);
    for (const furniture of ['World', 'Sport', 'Buy discount flights', 'Most read', 'Copyright']) {
      expect(page.text).not.toContain(furniture);
    }
  });

  it('never lets scripts, styles, noscript, iframes, handlers or hidden elements into the text', () => {
    const page = extractMainText(newsPage(), URL_OF_PAGE, { now: NOW });
    for (const marker of MARKERS) expect(page.text).not.toContain(marker);
  });

  it('reads title, canonical URL, language and publication time from the page', () => {
    const page = extractMainText(newsPage(), URL_OF_PAGE, { now: NOW });
    expect(page.title).toBe('Harbour reopens after storm');
    expect(page.canonicalUrl).toBe('https://www.example-news.com/2023/08/06/harbour-reopens');
    expect(page.language).toBe('en-GB');
    expect(page.publishedAt).toBe(Date.UTC(2023, 7, 6, 7, 45));
    expect(page.publishedAtProblem).toBeUndefined();
  });

  it('gives empty text for a page that is only scripts', () => {
    const html =
      '<html><head><script>var a = "SCRIPT-MARKER";</script></head><body><script>document.write("x")</script>' +
      '<script src="/app.js"></script><noscript>NOSCRIPT-MARKER</noscript></body></html>';
    const page = extractMainText(html, URL_OF_PAGE);
    expect(page.text).toBe('');
    expect(page.title).toBe('');
  });

  it('reads fragments and short pages through the whole-body fallback', () => {
    const page = extractMainText('<p>First line.</p><p>Second   line.<br>Same paragraph.</p>', URL_OF_PAGE);
    expect(page.text).toBe('First line.\n\nSecond line.\nSame paragraph.');
  });

  it('falls back to og:url, ignores non-http canonicals, and reports unusable page dates', () => {
    const html =
      '<html><head><link rel="canonical" href="javascript:void(0)"><meta property="og:url" content="https://example-news.com/a">' +
      '<meta property="article:published_time" content="2023-02-30"></head><body><p>Text.</p></body></html>';
    const page = extractMainText(html, URL_OF_PAGE, { now: NOW });
    expect(page.canonicalUrl).toBe('https://example-news.com/a');
    expect(page.publishedAt).toBeUndefined();
    expect(page.publishedAtProblem).toContain('2023-02-30');
  });

  it('reads deeply nested markup in linear time', () => {
    const depth = 20_000;
    const html = `<html><body>${'<div>'.repeat(depth)}<p>Deep text.</p>${'</div>'.repeat(depth)}</body></html>`;
    const started = performance.now();
    expect(extractMainText(html, URL_OF_PAGE).text).toBe('Deep text.');
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('never throws and never leaks script contents for arbitrary markup', () => {
    // Text without `<` cannot open a tag, so the script element below is a real one.
    const words = fc.string().map((text) => text.replace(/</g, ' '));
    const tags = fc.constantFrom('<p>', '</p>', '<div>', '</div>', '<br>', '<b>', '</b>', '<li>', '<td>', '&amp;', '>');
    fc.assert(
      fc.property(fc.array(fc.oneof(words, tags), { maxLength: 12 }), (parts) => {
        const html = `${parts.join('')}<script>SCRIPT-MARKER</script><style>.STYLE-MARKER{}</style>${parts.join('')}`;
        const page = extractMainText(html, URL_OF_PAGE);
        expect(page.text).not.toContain('SCRIPT-MARKER');
        expect(page.text).not.toContain('STYLE-MARKER');
      }),
      { numRuns: 150 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (html) => {
        expect(typeof extractMainText(html, URL_OF_PAGE).text).toBe('string');
      }),
      { numRuns: 150 },
    );
  });
});

describe('text helpers', () => {
  it('collapses horizontal whitespace and drops empty lines', () => {
    expect(collapseWhitespace('  a \t b \u00a0 c \n\n  \n d  ')).toBe('a b c\nd');
  });

  it('canonicalises BCP 47 tags and refuses non-tags', () => {
    expect(canonicalLanguageTag('en-us')).toBe('en-US');
    expect(canonicalLanguageTag('pt_BR')).toBe('pt-BR');
    expect(canonicalLanguageTag('zh-hant-tw')).toBe('zh-Hant-TW');
    expect(canonicalLanguageTag('und')).toBeUndefined();
    expect(canonicalLanguageTag('not a language')).toBeUndefined();
    expect(canonicalLanguageTag('')).toBeUndefined();
    expect(canonicalLanguageTag(undefined)).toBeUndefined();
  });
});

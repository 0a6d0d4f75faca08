import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalUrl, isSameSite, registrableDomain, siteName } from '../../processors/intake/canonical-url.js';
import { rejectionOf } from './intake-rejections.js';

describe('canonicalUrl', () => {
  it('maps the http/https, www, index.html, campaign-parameter and trailing-slash variants of one article to one URL', () => {
    const variants = [
      'https://www.cnn.com/2022/07/28/investing/airline-merger/index.html',
      'http://www.cnn.com/2022/07/28/investing/airline-merger/index.html',
      'https://www.cnn.com/2022/07/28/investing/airline-merger/',
      'https://www.cnn.com/2022/07/28/investing/airline-merger',
      'https://cnn.com/2022/07/28/investing/airline-merger?cid=external-feeds_partner_news',
      'https://www.cnn.com/2022/07/28/investing/airline-merger/index.html?utm_source=ribbon',
      'HTTPS://WWW.CNN.COM/2022/07/28/investing/airline-merger/index.htm#comments',
      'https://www.cnn.com:443/2022/07/28/investing/airline-merger/?utm_medium=social&utm_campaign=x',
    ];
    const canonical = new Set(variants.map(canonicalUrl));
    expect([...canonical]).toEqual(['https://cnn.com/2022/07/28/investing/airline-merger']);
  });

  it('drops tracking parameters and keeps the others, sorted', () => {
    expect(canonicalUrl('https://news.example.org/story?page=2&fbclid=abc&id=7&gclid=x&mc_cid=1&mc_eid=2')).toBe(
      'https://news.example.org/story?id=7&page=2',
    );
    expect(canonicalUrl('https://example.org/a?ref=home&ocid=msn&taid=t&__twitter_impression=true&smid=tw&q=1')).toBe(
      'https://example.org/a?q=1',
    );
    expect(canonicalUrl('https://example.org/a?UTM_Source=x&amp')).toBe('https://example.org/a');
  });

  it('keeps path case, non-default ports and meaningful parameters apart', () => {
    expect(canonicalUrl('http://example.org:8080/News/Item')).toBe('https://example.org:8080/News/Item');
    expect(canonicalUrl('https://example.org/a?id=1')).not.toBe(canonicalUrl('https://example.org/a?id=2'));
    expect(canonicalUrl('https://example.org/a')).not.toBe(canonicalUrl('https://example.org/A'));
  });

  it('normalises percent-encoding of unreserved characters only', () => {
    expect(canonicalUrl('https://example.org/%7euser/a%2fb%2D')).toBe('https://example.org/~user/a%2Fb-');
  });

  it('strips credentials and keeps the root path as a single slash', () => {
    expect(canonicalUrl('https://user:secret@www.example.org/')).toBe('https://example.org/');
    expect(canonicalUrl('http://example.org/index.html')).toBe('https://example.org/');
  });

  it('keeps www when removing it would leave a bare top-level domain', () => {
    expect(canonicalUrl('https://www.com/a')).toBe('https://www.com/a');
    expect(canonicalUrl('https://www2.example.co.uk/a')).toBe('https://example.co.uk/a');
  });

  it('rejects URLs that are not absolute http(s) as invalid_url', () => {
    for (const bad of [
      '',
      '   ',
      'not a url',
      '/relative/path',
      'ftp://example.org/a',
      'javascript:alert(1)',
      'mailto:a@b.c',
    ]) {
      expect(rejectionOf(() => canonicalUrl(bad))?.reason, bad).toBe('invalid_url');
    }
    expect(rejectionOf(() => canonicalUrl(`https://example.org/${'a'.repeat(9000)}`))?.reason).toBe('invalid_url');
  });

  it('is idempotent and always yields an https URL without fragment or tracking parameters', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
        const once = canonicalUrl(url);
        expect(canonicalUrl(once)).toBe(once);
        expect(once.startsWith('https://')).toBe(true);
        expect(once).not.toContain('#');
        expect(once).not.toMatch(/[?&]utm_/);
      }),
    );
  });
});

describe('site helpers', () => {
  it('names the site by host without www', () => {
    expect(siteName('https://www.theweek.co.uk/news/1')).toBe('theweek.co.uk');
    expect(siteName('https://edition.cnn.com/x')).toBe('edition.cnn.com');
  });

  it('groups hosts by registrable domain', () => {
    expect(registrableDomain('edition.cnn.com')).toBe('cnn.com');
    expect(registrableDomain('www.theweek.co.uk')).toBe('theweek.co.uk');
    expect(registrableDomain('news.bbc.co.uk')).toBe('bbc.co.uk');
    expect(isSameSite('https://edition.cnn.com/a', 'https://www.cnn.com/b')).toBe(true);
    expect(isSameSite('https://cnn.com/a', 'https://example.com/a')).toBe(false);
    expect(isSameSite('https://a.co.uk/x', 'https://b.co.uk/x')).toBe(false);
    expect(isSameSite('not a url', 'https://cnn.com')).toBe(false);
  });
});

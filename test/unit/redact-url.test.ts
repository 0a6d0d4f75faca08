import { describe, expect, it } from 'vitest';
import { redactUrl, redactUrlsIn } from '../../schemas/connection-config.js';

describe('redactUrl', () => {
  it('replaces the userinfo of a URL, user and password alike', () => {
    expect(redactUrl('https://elastic:changeme@es.example.org:9243')).toBe('https://<redacted>@es.example.org:9243');
    expect(redactUrl('https://token-only@es.example.org/')).toBe('https://<redacted>@es.example.org/');
    // A password holding an unescaped "@": everything up to the host's "@" goes.
    expect(redactUrl('http://u:p@ss@127.0.0.1:9200/path')).toBe('http://<redacted>@127.0.0.1:9200/path');
    expect(redactUrl('HTTPS://U:P@Host')).toBe('HTTPS://<redacted>@Host');
  });

  it('replaces the values of secret-looking query parameters, whatever their case', () => {
    for (const name of [
      'key',
      'token',
      'api_key',
      'apikey',
      'API-Key',
      'access_token',
      'password',
      'secret',
      'client_secret',
      'sig',
      'signature',
      'X-Amz-Signature',
      'X-Amz-Credential',
      'Token',
      'KEY',
    ]) {
      expect(redactUrl(`https://feeds.example.org/rss?${name}=abc123&lang=en`)).toBe(
        `https://feeds.example.org/rss?${name}=<redacted>&lang=en`,
      );
    }
    expect(redactUrl('https://h/x?lang=en&apiKey=abc&page=2&sig=zz')).toBe(
      'https://h/x?lang=en&apiKey=<redacted>&page=2&sig=<redacted>',
    );
    // Percent-encoded names are recognised; the fragment is treated like the query (OAuth's #access_token=).
    expect(redactUrl('https://h/cb?api%5Fkey=abc')).toBe('https://h/cb?api%5Fkey=<redacted>');
    expect(redactUrl('https://h/cb#access_token=abc&state=1')).toBe('https://h/cb#access_token=<redacted>&state=1');
  });

  it('both at once, and redacting twice changes nothing more', () => {
    const once = redactUrl('https://user:pw@hooks.example.org/alerts?token=t0k3n&channel=news');
    expect(once).toBe('https://<redacted>@hooks.example.org/alerts?token=<redacted>&channel=news');
    expect(redactUrl(once)).toBe(once);
  });

  it('leaves what holds no secret as it was, character for character', () => {
    for (const text of [
      'http://127.0.0.1:9200',
      'https://feeds.bbci.co.uk/news/world/rss.xml',
      'https://h/search?q=monkey&sort=keyword&page=2',
      'https://h/a?key',
      '127.0.0.1:9092',
      'kafka-0.kafka:9092',
      'not a url at all',
      '',
    ]) {
      expect(redactUrl(text)).toBe(text);
    }
  });

  it('redacts what it can even where the text does not parse as a URL', () => {
    expect(redactUrl('user:pass@broker-1:9092')).toBe('<redacted>@broker-1:9092');
    expect(redactUrl('https://u:p@exa mple.org/?token=x y')).toBe('https://<redacted>@exa mple.org/?token=<redacted>');
  });
});

describe('redactUrlsIn', () => {
  it('redacts every URL inside a message and leaves the words around them', () => {
    // Node's fetch puts the whole URL, credentials included, in its error message.
    expect(
      redactUrlsIn(
        'Request cannot be constructed from a URL that includes credentials: https://u:pw@feeds.example.org/rss?key=k1',
      ),
    ).toBe(
      'Request cannot be constructed from a URL that includes credentials: https://<redacted>@feeds.example.org/rss?key=<redacted>',
    );
    expect(redactUrlsIn('"http://a:b@h1/x?token=1", then <http://h2/y?lang=en&sig=2>.')).toBe(
      '"http://<redacted>@h1/x?token=<redacted>", then <http://h2/y?lang=en&sig=<redacted>>.',
    );
    expect(redactUrlsIn('connect ECONNREFUSED 127.0.0.1:9200')).toBe('connect ECONNREFUSED 127.0.0.1:9200');
  });
});

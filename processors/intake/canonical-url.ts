/**
 * The one spelling of an article's address that every copy of it maps to, so that the article id
 * (a hash of it) is the same whether a link came with `http:`, `www.`, `/index.html`, a trailing
 * slash or a campaign parameter. The result is an identity, not a fetch address: `Article.url`
 * keeps the address actually fetched.
 *
 * Rejection reason: `invalid_url` (not parseable, not http(s), no host, longer than 8 KiB).
 */
import { IntakeRejection } from './article-input.js';

/** Longer addresses are not article links; browsers and CDNs refuse them too. */
export const MAX_URL_LENGTH = 8192;

/**
 * Query parameters that say how a reader arrived, not what they read. `cid`, `ref` and `amp` are
 * in the list because the news sites this intake reads use them only for campaigns and AMP views
 * (e.g. CNN's `?cid=external-feeds_…`, The Week's `?amp`).
 */
const TRACKING_PARAMETERS: ReadonlySet<string> = new Set([
  '__twitter_impression',
  '_ga',
  '_gl',
  'amp',
  'cid',
  'cmpid',
  'dclid',
  'fbclid',
  'gbraid',
  'gclid',
  'icid',
  'igshid',
  'mbid',
  'mc_cid',
  'mc_eid',
  'mkt_tok',
  'msclkid',
  'ncid',
  'ocid',
  'outputtype',
  'ref',
  'ref_src',
  'ref_url',
  's_cid',
  'smid',
  'smtyp',
  'sr_share',
  'taid',
  'wbraid',
  'yclid',
]);
const TRACKING_PREFIXES = ['utm_', 'pk_', 'mtm_', 'hsa_'];

function isTrackingParameter(rawKey: string): boolean {
  const key = safeDecode(rawKey).toLowerCase();
  return TRACKING_PARAMETERS.has(key) || TRACKING_PREFIXES.some((prefix) => key.startsWith(prefix));
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

/** `%7e` and `%7E` and `~` are the same character in a path; only reserved characters stay escaped. */
function normalizePercentEncoding(value: string): string {
  return value.replace(/%([0-9a-fA-F]{2})/g, (_match, hex: string) => {
    const code = Number.parseInt(hex, 16);
    const char = String.fromCharCode(code);
    return /[A-Za-z0-9\-._~]/.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

/**
 * `www.` is dropped: news sites serve the same article with and without it, and dedupe by
 * canonical URL must not see two articles. `www2.` and the like are mirrors of the same kind. The
 * prefix stays when removing it would leave a bare top-level domain.
 */
function canonicalHost(hostname: string): string {
  let host = hostname.replace(/\.+$/, '');
  for (;;) {
    const bare = host.replace(/^www\d*\./, '');
    if (bare === host || !bare.includes('.')) return host;
    host = bare;
  }
}

function canonicalPath(pathname: string): string {
  let path = normalizePercentEncoding(pathname).replace(/\/index\.html?$/i, '/');
  path = path.replace(/\/+$/, '');
  return path === '' ? '/' : path;
}

function canonicalQuery(search: string): string {
  if (search.length <= 1) return '';
  const kept = search
    .slice(1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const key = eq === -1 ? pair : pair.slice(0, eq);
      return { key, pair: normalizePercentEncoding(pair) };
    })
    .filter(({ key }) => !isTrackingParameter(key))
    .map(({ pair }) => pair)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return kept.length === 0 ? '' : `?${kept.join('&')}`;
}

/** Parses an absolute http(s) URL or throws `invalid_url`; the result has a non-empty host. */
export function parseHttpUrl(url: string): URL {
  const trimmed = url.trim();
  if (trimmed === '') throw new IntakeRejection('invalid_url', 'url is empty');
  if (trimmed.length > MAX_URL_LENGTH) {
    throw new IntakeRejection('invalid_url', `url is longer than ${MAX_URL_LENGTH} characters`);
  }
  if (!URL.canParse(trimmed)) throw new IntakeRejection('invalid_url', 'url is not an absolute URL');
  const parsed = new URL(trimmed);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new IntakeRejection('invalid_url', `url scheme ${parsed.protocol} is not http(s)`);
  }
  if (parsed.hostname === '') throw new IntakeRejection('invalid_url', 'url has no host');
  return parsed;
}

/**
 * The canonical form of an article URL: https, lower-case host without `www.`, no credentials,
 * default port or fragment, no tracking parameters, remaining parameters sorted, no trailing
 * `/index.html` or slash. Idempotent: `canonicalUrl(canonicalUrl(u)) === canonicalUrl(u)`.
 */
export function canonicalUrl(url: string): string {
  const parsed = parseHttpUrl(url);
  const host = canonicalHost(parsed.hostname);
  const port = parsed.port === '' || parsed.port === '80' || parsed.port === '443' ? '' : `:${parsed.port}`;
  return `https://${host}${port}${canonicalPath(parsed.pathname)}${canonicalQuery(parsed.search)}`;
}

/** The host name of a URL without `www.`, as the default publisher name. */
export function siteName(url: string): string {
  return canonicalHost(parseHttpUrl(url).hostname);
}

const SECOND_LEVEL_LABELS = new Set(['ac', 'co', 'com', 'edu', 'gov', 'ltd', 'net', 'org', 'plc', 'sch']);

/**
 * Approximates the registrable domain without the public-suffix list: the last two labels, or
 * three under country-code second levels such as `co.uk` and `com.au`. Enough to tell
 * `edition.cnn.com` and `www.cnn.com` apart from another publisher.
 */
export function registrableDomain(hostname: string): string {
  const labels = canonicalHost(hostname.toLowerCase()).split('.');
  if (labels.length <= 2 || /^\d+$/.test(labels[labels.length - 1] ?? '')) return labels.join('.');
  const tld = labels[labels.length - 1] ?? '';
  const second = labels[labels.length - 2] ?? '';
  const keep = tld.length === 2 && SECOND_LEVEL_LABELS.has(second) ? 3 : 2;
  return labels.slice(-keep).join('.');
}

/** Whether two http(s) URLs belong to the same publisher (same registrable domain). */
export function isSameSite(a: string, b: string): boolean {
  if (!URL.canParse(a) || !URL.canParse(b)) return false;
  return registrableDomain(new URL(a).hostname) === registrableDomain(new URL(b).hostname);
}

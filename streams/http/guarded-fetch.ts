/**
 * The product's outbound HTTP for addresses named by outside content or settings (feeds, the pages
 * their entries link to, `neon ingest <URL>`, webhooks): a `fetch` that refuses internal addresses
 * (schemas/outbound-address-policy) where it matters.
 *
 * - After DNS: the connection's own `lookup` resolves the name, checks every address it got, and
 *   hands the checked addresses to the socket. There is no second resolution a rebinding DNS could
 *   answer differently.
 * - IP literals (which the socket connects to without a lookup) and cloud metadata host names are
 *   checked before the request.
 * - At every redirect hop: redirects are followed here, one request per hop, each hop checked the
 *   same way, at most `maxRedirects` of them.
 *
 * A refusal rejects with an AddressRefusedError (as the `cause` of a TypeError when it comes from the
 * connection, as fetch reports connection errors); `addressRefusalIn` finds it either way.
 */
import { lookup as systemLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import {
  AddressRefusedError,
  addressRefusal,
  EMPTY_ALLOW_LIST,
  hostAllowed,
  hostRefusal,
  parseFetchAllowList,
  type FetchAllowList,
} from '../../schemas/outbound-address-policy.js';

/** Every address of a host name, as `dns.lookup(name, { all: true })` gives them. */
export type HostResolver = (hostname: string) => Promise<LookupAddress[]>;

export interface GuardedFetchOptions {
  /** What the operator allows anyway (`NEON_FETCH_ALLOW`). Default: nothing. */
  allow?: FetchAllowList;
  /** Default: the system resolver (`dns.lookup`, all addresses). Tests inject names. */
  resolve?: HostResolver;
  /** Redirects followed per request. Default 5. */
  maxRedirects?: number;
}

export const DEFAULT_MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

const systemResolve: HostResolver = (hostname) =>
  new Promise((resolve, reject) => {
    systemLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error) reject(error);
      else resolve(addresses);
    });
  });

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net/tls sockets that answers only with addresses the policy accepts. */
export function checkedLookup(allow: FetchAllowList, resolve: HostResolver = systemResolve) {
  const answer = async (hostname: string, family: number | undefined): Promise<LookupAddress[]> => {
    const addresses = await resolve(hostname);
    if (!hostAllowed(hostname, allow)) {
      for (const { address } of addresses) {
        const why = addressRefusal(address, allow);
        if (why !== undefined) throw new AddressRefusedError(address, `${why} (${hostname})`);
      }
    }
    const usable = family === undefined ? addresses : addresses.filter((a) => a.family === family);
    if (usable.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      error.code = 'ENOTFOUND';
      throw error;
    }
    return usable;
  };
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    const family = options.family === 4 || options.family === 6 ? options.family : undefined;
    answer(hostname, family).then(
      (usable) => {
        if (options.all === true) callback(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), ''),
    );
  };
}

/** The guarded fetch with the operator's allow-list, `NEON_FETCH_ALLOW` (throws ConfigError if unreadable). */
export function guardedFetchFromEnv(env: Readonly<Record<string, string | undefined>>): typeof globalThis.fetch {
  return createGuardedFetch({ allow: parseFetchAllowList(env.NEON_FETCH_ALLOW) });
}

/** A fetch whose every hop is checked by the policy; see the module comment. */
export function createGuardedFetch(options: GuardedFetchOptions = {}): typeof globalThis.fetch {
  const allow = options.allow ?? EMPTY_ALLOW_LIST;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const dispatcher = new Agent({ connect: { lookup: checkedLookup(allow, options.resolve) } });

  const guarded = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    let url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const mode = init.redirect ?? 'follow';
    let method = (init.method ?? 'GET').toUpperCase();
    // Webhooks post a string; a stream could not be sent again to a 307's new location anyway.
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') {
      throw new TypeError('the guarded fetch sends string bodies only');
    }
    let body: string | undefined = init.body ?? undefined;
    const headers = new Headers(init.headers);
    for (let hop = 0; ; hop++) {
      const refusal = hostRefusal(url.hostname, allow);
      if (refusal !== undefined) throw refusal;
      // What the product's callers set: method, headers, body, signal (redirects are handled here).
      const request: UndiciRequestInit = { method, headers: [...headers], redirect: 'manual', dispatcher };
      if (body !== undefined) request.body = body;
      if (init.signal) request.signal = init.signal;
      // undici's Response is the WHATWG Response Node's fetch returns too; only its type is another package's.
      // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
      const response: Response = await undiciFetch(url, request);
      const location = response.headers.get('location');
      if (mode === 'manual' || !REDIRECT_STATUSES.has(response.status) || location === null) return response;
      await response.body?.cancel().catch(() => undefined);
      if (mode === 'error') throw new TypeError(`fetch failed: unexpected redirect (HTTP ${response.status})`);
      if (hop >= maxRedirects) throw new TypeError(`fetch failed: more than ${maxRedirects} redirects`);
      const next = new URL(location, url);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') {
        throw new TypeError(`fetch failed: redirect to a ${next.protocol} URL`);
      }
      // As fetch does: 303 turns anything but HEAD into a GET, 301/302 turn a POST into one.
      if (
        (response.status === 303 && method !== 'HEAD') ||
        ((response.status === 301 || response.status === 302) && method === 'POST')
      ) {
        method = 'GET';
        body = undefined;
        headers.delete('content-type');
        headers.delete('content-length');
      }
      // Credentials meant for one origin do not follow a redirect to another.
      if (next.origin !== url.origin) {
        headers.delete('authorization');
        headers.delete('cookie');
        headers.delete('proxy-authorization');
      }
      url = next;
    }
  };
  return guarded;
}

/**
 * Which addresses the product may fetch from or post to on behalf of what it reads. Feeds, the
 * article pages their entries link to, `neon ingest <URL>` and webhooks are named by outside
 * content or settings; left unchecked, a feed entry linking to `http://10.0.0.5/admin` or to the
 * cloud metadata service would make the product fetch it and publish the page as an article.
 *
 * Refused: loopback, private, link-local, unique-local, unspecified, carrier-grade NAT, multicast,
 * reserved and the cloud metadata addresses, also when written as IPv4-mapped or NAT64 IPv6. Only
 * the connector may decide, after DNS resolution and at every redirect hop (streams/http/guarded-fetch);
 * this module is the pure rule it applies. An operator names what may be reached anyway in
 * `NEON_FETCH_ALLOW`: host names (`feeds.intranet`, `.corp.example` for a domain and its subdomains),
 * addresses and CIDR ranges (`10.20.0.0/16`, `fd12::/16`).
 */
import ipaddr from 'ipaddr.js';
import { ConfigError } from './local-infra-config.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

export interface FetchAllowList {
  /** Exact host names, lower case, no trailing dot. */
  readonly hosts: readonly string[];
  /** Domain suffixes starting with a dot: `.corp.example` allows `a.corp.example`. */
  readonly domains: readonly string[];
  readonly ranges: readonly [Address, number][];
}

export const EMPTY_ALLOW_LIST: FetchAllowList = { hosts: [], domains: [], ranges: [] };

/** Host names that answer with cloud credentials; refused by name before any resolution. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);
/** AWS, GCP, Azure, OpenStack (169.254.169.254); AWS over IPv6 (fd00:ec2::254); Alibaba (100.100.100.200). */
const METADATA_ADDRESSES = ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200'].map((a) =>
  ipaddr.parse(a).toNormalizedString(),
);

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local address',
  unspecified: 'an unspecified address',
  carrierGradeNat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
};

/** Why a fetch was refused; `message` reads `10.0.0.5 is a private address`. */
export class AddressRefusedError extends Error {
  override readonly name = 'AddressRefusedError';
  readonly code = 'ADDRESS_REFUSED';
  constructor(
    readonly address: string,
    readonly why: string,
  ) {
    super(`${address} is ${why}`);
  }
}

/** The refusal somewhere in an error's cause chain (fetch wraps connection errors in `cause`). */
export function addressRefusalIn(error: unknown): AddressRefusedError | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof AddressRefusedError) return e;
  }
  return undefined;
}

function inAllowedRange(address: Address, allow: FetchAllowList): boolean {
  return allow.ranges.some(([network, bits]) => address.kind() === network.kind() && address.match(network, bits));
}

/**
 * The IPv4 address an IPv6 one stands for, when it embeds one that the network would reach:
 * IPv4-mapped (`::ffff:10.0.0.5`), IPv4-compatible (`::10.0.0.5`), NAT64 (`64:ff9b::a00:5`) and
 * 6to4 (`2002:a00:5::`).
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = address.parts;
  const v4 = (hi: number, lo: number): ipaddr.IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const range = address.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') return v4(p[6]!, p[7]!);
  if (range === '6to4') return v4(p[1]!, p[2]!);
  // ::a.b.c.d (deprecated IPv4-compatible); :: and ::1 are left to their own ranges.
  if (p.slice(0, 6).every((x) => x === 0) && (p[6]! !== 0 || p[7]! > 1)) return v4(p[6]!, p[7]!);
  return undefined;
}

/**
 * Why this resolved address must not be reached, or undefined when it may. The allow-list is
 * consulted for the address as written and for the IPv4 address it embeds.
 */
export function addressRefusal(text: string, allow: FetchAllowList = EMPTY_ALLOW_LIST): string | undefined {
  const bare = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return 'not an IP address';
  const address = ipaddr.parse(bare);
  if (inAllowedRange(address, allow)) return undefined;
  if (address.kind() === 'ipv6') {
    const inner = embeddedIPv4(address as ipaddr.IPv6);
    if (inner !== undefined) {
      if (inAllowedRange(inner, allow)) return undefined;
      const why = ipv4Refusal(inner);
      return why === undefined ? undefined : `${why} (embedded in IPv6)`;
    }
  }
  if (METADATA_ADDRESSES.includes(address.toNormalizedString())) return 'a cloud metadata address';
  const range = address.range();
  if (range === 'unicast') return undefined;
  return RANGE_WORDS[range] ?? `a reserved address (${range})`;
}

function ipv4Refusal(address: ipaddr.IPv4): string | undefined {
  if (METADATA_ADDRESSES.includes(address.toNormalizedString())) return 'a cloud metadata address';
  const range = address.range();
  if (range === 'unicast') return undefined;
  return RANGE_WORDS[range] ?? `a reserved address (${range})`;
}

export function normalizeHostname(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

/** Whether the operator named this host (or its domain) in the allow-list: its addresses are not checked. */
export function hostAllowed(hostname: string, allow: FetchAllowList): boolean {
  const host = normalizeHostname(hostname);
  return allow.hosts.includes(host) || allow.domains.some((domain) => host.endsWith(domain));
}

/**
 * The refusal a URL's host earns before any resolution: an IP literal checked as an address (it is
 * connected to without a lookup), a cloud metadata host name. Names are checked again once resolved.
 */
export function hostRefusal(
  hostname: string,
  allow: FetchAllowList = EMPTY_ALLOW_LIST,
): AddressRefusedError | undefined {
  if (hostAllowed(hostname, allow)) return undefined;
  const host = normalizeHostname(hostname).replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) {
    const why = addressRefusal(host, allow);
    return why === undefined ? undefined : new AddressRefusedError(host, why);
  }
  if (METADATA_HOSTS.has(host)) return new AddressRefusedError(host, 'a cloud metadata host');
  return undefined;
}

/**
 * `NEON_FETCH_ALLOW`: comma- or space-separated host names, `.domain` suffixes, addresses and CIDR
 * ranges. Throws ConfigError naming every entry it cannot read.
 */
export function parseFetchAllowList(value: string | undefined): FetchAllowList {
  const hosts: string[] = [];
  const domains: string[] = [];
  const ranges: [Address, number][] = [];
  const problems: string[] = [];
  for (const entry of (value ?? '').split(/[\s,]+/).filter((e) => e !== '')) {
    const bare = entry.replace(/^\[|\]$/g, '');
    if (entry.includes('/')) {
      if (ipaddr.isValidCIDR(entry)) ranges.push(ipaddr.parseCIDR(entry));
      else problems.push(`NEON_FETCH_ALLOW: "${entry}" is not a CIDR range (such as 10.20.0.0/16)`);
    } else if (ipaddr.isValid(bare) && (bare.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(bare))) {
      const address = ipaddr.parse(bare);
      ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^\.?([a-z0-9_]([a-z0-9_-]*[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?\.?$/i.test(entry)) {
      const host = normalizeHostname(entry);
      if (host.startsWith('.')) domains.push(host);
      else hosts.push(host);
    } else {
      problems.push(`NEON_FETCH_ALLOW: "${entry}" is neither a host name, an address nor a CIDR range`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { hosts, domains, ranges };
}

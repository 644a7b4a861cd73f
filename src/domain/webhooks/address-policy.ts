// Where a webhook may be sent (docs/webhooks.md "Safe to point anywhere"): a
// URL given by an API client must not reach the server's own network. Every
// address a name resolves to is checked, and the delivery connects to the
// address that was checked (no second lookup that DNS rebinding could answer
// differently). Ranges: the IANA special-purpose registries (RFC 6890 and
// updates) for IPv4 and IPv6.
import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const internal = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  internal.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // IPv4-compatible (deprecated)
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  internal.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 address carries, for the forms that reach it: mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002::/16). */
function embeddedIpv4(address: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  const groups = expandIpv6(address);
  if (!groups) return null;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  if (groups.slice(0, 6).every((g, i) => g === [0, 0, 0, 0, 0, 0xffff][i])) return v4(groups[6]!, groups[7]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) return v4(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!);
  return null;
}

/** Eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included), or null. */
function expandIpv6(address: string): number[] | null {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const fill = 8 - left.length - right.length;
  if (fill < 0 || (tail === undefined && fill !== 0)) return null;
  const groups = [...left, ...Array<number>(fill).fill(0), ...right];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** True for an address a webhook must not reach: loopback, private, link-local, unique-local, CGNAT, multicast, unspecified, reserved, and IPv6 forms of those. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return internal.check(address, 'ipv4');
  if (family !== 6) return true; // not an address at all: never a place to connect to
  const v4 = embeddedIpv4(address);
  if (v4 !== null && internal.check(v4, 'ipv4')) return true;
  return internal.check(address.replace(/%.*$/, ''), 'ipv6');
}

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

export type Lookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: Lookup = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** The URL's host without the brackets of an IPv6 literal or the final dot of a fully qualified name. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/** localhost and its subdomains are the machine itself whatever DNS says (RFC 6761 §6.3). */
const LOCALHOST = /(^|\.)localhost$/i;

/**
 * Resolves the URL's host and checks every address. The address to connect
 * to, or why not: a name that does not resolve, or one address that is
 * internal (unless private networks are allowed).
 */
export async function resolveTarget(url: URL, allowPrivate: boolean, lookup: Lookup = systemLookup): Promise<ResolvedTarget | { refused: string }> {
  const host = hostOf(url);
  if (LOCALHOST.test(host) && !allowPrivate) return { refused: 'the host is localhost, an internal address' };
  let addresses: { address: string; family: number }[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host);
  } catch {
    return { refused: 'the host name does not resolve' };
  }
  if (addresses.length === 0) return { refused: 'the host name does not resolve' };
  if (!allowPrivate && addresses.some((a) => isInternalAddress(a.address))) {
    return { refused: 'the host resolves to a loopback, private or otherwise internal address' };
  }
  const [first] = addresses;
  return { address: first!.address, family: first!.family === 6 ? 6 : 4 };
}

/** resolveTarget, given up (refused) when the lookup takes longer than `ms`: a slow resolver must not hold a request or outlast a lease. */
export async function resolveTargetWithin(url: URL, allowPrivate: boolean, ms: number, lookup: Lookup = systemLookup): Promise<ResolvedTarget | { refused: string }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ refused: string }>((resolve) => {
    timer = setTimeout(() => resolve({ refused: 'the host name did not resolve in time' }), ms);
  });
  try {
    return await Promise.race([resolveTarget(url, allowPrivate, lookup), late]);
  } finally {
    clearTimeout(timer);
  }
}
